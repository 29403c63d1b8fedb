//! How much memory a child process holds: its resident set (`VmRSS` of
//! `/proc/<pid>/status`), for what `mcpServers.list` shows of a running server. Linux only;
//! elsewhere the answer is `None` and the panel shows none.

/// The resident memory of process `pid`, in bytes; `None` when it is gone or the system
/// does not say.
pub(crate) fn resident_bytes(pid: u32) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        vm_rss_kib(&status).map(|kib| kib * 1024)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// `VmRSS` in KiB from the text of `/proc/<pid>/status` (`VmRSS:\t   8192 kB`). A zombie
/// (exited, not yet reaped) has no such line.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn vm_rss_kib(status: &str) -> Option<u64> {
    let rest = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_rss_is_read_from_the_status_text() {
        let status =
            "Name:\tpython3\nVmHWM:\t   10240 kB\nVmRSS:\t    8192 kB\nRssAnon:\t 4096 kB\n";
        assert_eq!(vm_rss_kib(status), Some(8192));
        assert_eq!(vm_rss_kib("Name:\tzombie\nState:\tZ (zombie)\n"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_live_process_has_some_and_a_missing_one_none() {
        assert!(resident_bytes(std::process::id()).unwrap() > 1024 * 1024);
        assert_eq!(resident_bytes(u32::MAX), None);
    }
}
