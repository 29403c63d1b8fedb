//! Whether a process recorded earlier is still the same process. A pid alone is not
//! enough: after the recorded process died, Linux may hand its pid to any other one. So a
//! record keeps the process's start time too (`/proc/<pid>/stat`, field 22, clock ticks
//! after boot), and the process counts as running only while both match.

/// A process's start time in clock ticks after boot (`/proc/<pid>/stat`, field 22);
/// `None` when there is no such process (or no `/proc`).
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the process that had pid `pid` and start time `start` still runs.
pub(crate) fn is_running(pid: u32, start: u64) -> bool {
    #[cfg(target_os = "linux")]
    {
        start_time(pid) == Some(start)
    }
    // Without `/proc` the start time cannot be compared: a live pid counts as the
    // recorded process (the safe side: a holder is never wrongly declared gone).
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        let _ = start;
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = (pid, start);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_start_time_is_read_past_a_name_with_spaces_and_parens() {
        let me = start_time(std::process::id()).expect("our own stat");
        assert!(me > 0);
        assert_eq!(start_time(std::process::id()), Some(me), "stable");
        assert_eq!(start_time(u32::MAX), None);
    }

    #[test]
    fn a_process_runs_only_with_its_recorded_start_time() {
        let me = std::process::id();
        let start = start_time(me).unwrap();
        assert!(is_running(me, start));
        assert!(
            !is_running(me, start + 1),
            "a reused pid is another process"
        );
        assert!(!is_running(u32::MAX, start), "no such process");
    }
}
