//! "Start at login" is on by default after the first run, but only once: a marker file in
//! the data directory records that the default was applied, so a user who turned it off
//! is never overridden by a later start.

use std::path::{Path, PathBuf};

/// `$TAP_HOME/desktop-autostart-default-applied`.
pub fn marker(home: &Path) -> PathBuf {
    home.join("desktop-autostart-default-applied")
}

/// What happened to the login item at this start.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// First run: it was turned on.
    Enabled,
    /// Not the first run: left as the user set it.
    LeftAsIs,
}

/// On the first run (no marker) calls `enable` and, if that worked, writes the marker. A
/// failed `enable` leaves no marker, so the next start tries again.
pub fn apply_default(
    home: &Path,
    enable: impl FnOnce() -> Result<(), String>,
) -> Result<Outcome, String> {
    let marker = marker(home);
    if marker.exists() {
        return Ok(Outcome::LeftAsIs);
    }
    enable()?;
    std::fs::create_dir_all(home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
    std::fs::write(
        &marker,
        "Tap Gateway turned \"Start at login\" on at its first run; it will not again.\n",
    )
    .map_err(|e| format!("cannot write {}: {e}", marker.display()))?;
    Ok(Outcome::Enabled)
}

/// [`apply_default`], with what happened logged.
pub fn apply_default_logged(home: &Path, enable: impl FnOnce() -> Result<(), String>) {
    match apply_default(home, enable) {
        Ok(Outcome::Enabled) => tracing::info!("Start at login turned on (first run)"),
        Ok(Outcome::LeftAsIs) => {}
        Err(e) => tracing::warn!(error = %e, "could not turn Start at login on"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn the_first_run_enables_and_later_runs_leave_it_alone() {
        let dir = tempfile::tempdir().unwrap();
        let calls = Cell::new(0);
        let enable = || {
            calls.set(calls.get() + 1);
            Ok(())
        };
        assert_eq!(apply_default(dir.path(), enable).unwrap(), Outcome::Enabled);
        assert!(marker(dir.path()).is_file());
        // The user turned it off in between: the next start must not turn it on again.
        assert_eq!(
            apply_default(dir.path(), enable).unwrap(),
            Outcome::LeftAsIs
        );
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn a_failed_enable_leaves_no_marker_so_the_next_start_retries() {
        let dir = tempfile::tempdir().unwrap();
        let e = apply_default(dir.path(), || Err("no home dir".into())).unwrap_err();
        assert_eq!(e, "no home dir");
        assert!(!marker(dir.path()).exists());
        assert_eq!(
            apply_default(dir.path(), || Ok(())).unwrap(),
            Outcome::Enabled
        );
    }
}
