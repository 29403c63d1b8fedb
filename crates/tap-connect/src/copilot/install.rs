//! Installing and removing the extension, in steps the CLI reports one by one (the extension
//! file, then the feature flag), and [`Plan`]: both steps' files before and after, nothing
//! written, for a dry run's diff and for refusing before anything is written.

use super::{owner, owner_of, settings, Layout, Owner, VERSION};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Why the Copilot CLI's files were not changed. Its words are `tap install copilot`'s.
#[derive(Debug)]
pub enum Error {
    /// The extension file is not tap's: it is left alone (`removing`: on uninstall; else
    /// install without `force`).
    NotTaps { file: PathBuf, removing: bool },
    /// Copilot's `settings.json` is not a JSON object tap can edit (`installed`: the
    /// extension was written before this was found).
    Settings {
        file: PathBuf,
        why: String,
        installed: bool,
    },
    /// Reading or writing failed.
    Io {
        what: &'static str,
        file: PathBuf,
        error: std::io::Error,
    },
}

impl Error {
    /// The machine-readable code: `CONFLICT`, `INVALID_JSON` or `INTERNAL`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::NotTaps { .. } => "CONFLICT",
            Error::Settings { .. } => "INVALID_JSON",
            Error::Io { .. } => "INTERNAL",
        }
    }

    fn io<'a>(what: &'static str, file: &'a Path) -> impl FnOnce(std::io::Error) -> Self + 'a {
        move |error| Error::Io {
            what,
            file: file.to_path_buf(),
            error,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const BY_HAND: &str = "add \"enabledFeatureFlags\": {\"EXTENSIONS\": true} to it by hand";
        match self {
            Error::NotTaps { file, removing: true } => write!(
                f,
                "{} was not written by tap; it was left alone",
                file.display()
            ),
            Error::NotTaps { file, removing: false } => write!(
                f,
                "{} exists and was not written by tap{}; it was left alone. Remove it, or run `tap install copilot --force` to replace it (a backup is kept)",
                file.display(),
                if file.ends_with("extension.mjs") { " (an earlier Copilot extension?)" } else { "" }
            ),
            Error::Settings { file, why, installed: true } => write!(
                f,
                "the extension is installed, but {} could not be changed ({why}): {BY_HAND}, or Copilot ignores extensions",
                file.display()
            ),
            Error::Settings { file, why, installed: false } => write!(
                f,
                "{} cannot be changed ({why}): {BY_HAND}, or Copilot ignores extensions; nothing was written",
                file.display()
            ),
            Error::Io { what, file, error } => {
                write!(f, "cannot {what} {}: {error}", file.display())
            }
        }
    }
}

impl std::error::Error for Error {}

/// What writing the extension file did.
#[derive(Debug, PartialEq, Eq)]
pub enum ExtensionWrite {
    /// It was this text already.
    Already,
    /// Written: over an earlier tap extension (`updated`), or where none was or another's
    /// was (then `moved` is where that one is kept).
    Written {
        updated: bool,
        moved: Option<PathBuf>,
    },
}

/// Writes this tap's extension with `profile` (none: one an earlier install wrote is
/// removed). Another's file is refused unless `force`, which moves it aside first.
pub fn write_extension(
    l: &Layout,
    profile: Option<&str>,
    force: bool,
) -> Result<ExtensionWrite, Error> {
    let wanted = super::extension_text(profile);
    let installed = read(&l.file)?;
    let found = installed.as_deref().map(owner_of);
    match found {
        Some(Owner::Tap { .. }) if installed.as_deref() == Some(wanted.as_str()) => {
            return Ok(ExtensionWrite::Already)
        }
        Some(Owner::Other) if !force => {
            return Err(Error::NotTaps {
                file: l.file.clone(),
                removing: false,
            })
        }
        _ => {}
    }
    std::fs::create_dir_all(&l.dir).map_err(Error::io("create", &l.dir))?;
    let moved = match found {
        Some(Owner::Other) => {
            let backup = backup_path(&l.file);
            std::fs::rename(&l.file, &backup).map_err(Error::io("back up", &l.file))?;
            Some(backup)
        }
        _ => None,
    };
    write_atomic(&l.file, &wanted).map_err(Error::io("write", &l.file))?;
    Ok(ExtensionWrite::Written {
        updated: matches!(found, Some(Owner::Tap { .. })),
        moved,
    })
}

/// What turning the feature flag on did.
#[derive(Debug, PartialEq, Eq)]
pub enum FlagOn {
    Already,
    /// Turned on, and recorded so that uninstall turns it off again.
    TurnedOn,
}

/// Turns Copilot's extensions feature on unless it is on, and writes the install record:
/// whether install turned the flag on (so that uninstall turns it off again; a flag an
/// earlier install turned on stays recorded as such), and `tap`, the `tap` binary the
/// extension starts a gateway with when none runs and no `tap` is on the CLI's `PATH`.
/// Without either there is nothing to record and no record is written.
pub fn enable_flag(l: &Layout, tap: Option<&Path>) -> Result<FlagOn, Error> {
    let text = read(&l.settings)?.unwrap_or_default();
    let bad = |why: String| Error::Settings {
        file: l.settings.clone(),
        why,
        installed: true,
    };
    let done = match settings::flag(&text).map_err(bad)? {
        settings::Flag::On | settings::Flag::OnByExperimental => FlagOn::Already,
        settings::Flag::Off => {
            let new = settings::set_flag(&text, true).map_err(bad)?;
            write_atomic(&l.settings, &new).map_err(Error::io("write", &l.settings))?;
            FlagOn::TurnedOn
        }
    };
    let turned_on = done == FlagOn::TurnedOn || read(&l.record)?.is_some_and(|r| recorded_flag(&r));
    if turned_on || tap.is_some() {
        let mut record = json!({"enabledExtensionsFlag": turned_on, "version": VERSION});
        if let Some(tap) = tap {
            record["tap"] = json!(tap.to_string_lossy());
        }
        write_atomic(&l.record, &format!("{record}\n")).map_err(Error::io("write", &l.record))?;
    }
    Ok(done)
}

/// The `tap` binary to record for the extension, found from the running program: itself
/// when it is `tap` (`tap install copilot`, `tap gateway`), else a `tap` beside it (the
/// desktop app, installed next to the CLI), else none.
pub fn tap_beside(exe: &Path) -> Option<PathBuf> {
    let name = if cfg!(windows) { "tap.exe" } else { "tap" };
    if exe.file_name().is_some_and(|n| n == name) {
        return Some(exe.to_path_buf());
    }
    let sibling = exe.parent()?.join(name);
    sibling.is_file().then_some(sibling)
}

/// [`tap_beside`] the running program: the `tap` install records.
pub fn running_tap() -> Option<PathBuf> {
    tap_beside(&std::env::current_exe().ok()?)
}

/// What removing the extension file did.
#[derive(Debug, PartialEq, Eq)]
pub enum Removed {
    NotInstalled,
    /// tap's extension and its hand-over state are gone.
    Removed,
}

/// Removes tap's extension; another's file is left alone (an error).
pub fn remove_extension(l: &Layout) -> Result<Removed, Error> {
    match owner(&l.file) {
        None => Ok(Removed::NotInstalled),
        Some(Owner::Other) => Err(Error::NotTaps {
            file: l.file.clone(),
            removing: true,
        }),
        Some(Owner::Tap { .. }) => {
            std::fs::remove_file(&l.file).map_err(Error::io("remove", &l.file))?;
            let _ = std::fs::remove_dir_all(&l.state);
            Ok(Removed::Removed)
        }
    }
}

/// What [`disable_flag`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum FlagOff {
    /// Install did not turn it on (or it is off already): left as it is.
    Untouched,
    TurnedOff,
    /// Install turned it on, but the settings cannot be edited now: left, with why.
    LeftAsIs(String),
}

/// Turns the flag off again when install's record says install turned it on, removes the
/// record, and the extension's directory when that is empty (the gateway's
/// `.provider-token` keeps it otherwise).
pub fn disable_flag(l: &Layout) -> Result<FlagOff, Error> {
    let mut done = FlagOff::Untouched;
    if let Some(record) = read(&l.record)? {
        if recorded_flag(&record) {
            let text = std::fs::read_to_string(&l.settings).unwrap_or_default();
            if let Ok(settings::Flag::On) = settings::flag(&text) {
                done = match settings::set_flag(&text, false) {
                    Ok(new) => {
                        write_atomic(&l.settings, &new).map_err(Error::io("write", &l.settings))?;
                        FlagOff::TurnedOff
                    }
                    Err(e) => FlagOff::LeftAsIs(e),
                };
            }
        }
        std::fs::remove_file(&l.record).map_err(Error::io("remove", &l.record))?;
    }
    let _ = std::fs::remove_dir(&l.dir);
    Ok(done)
}

fn recorded_flag(record: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(record)
        .is_ok_and(|r| r["enabledExtensionsFlag"] == true)
}

/// A file before and after (`None`: no file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// What connecting or disconnecting would change, nothing written: the extension file,
/// Copilot's settings and the skills, each only when it changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub extension: Option<FileChange>,
    pub settings: Option<FileChange>,
    /// The skills and the session-start instructions ([`super::skills`]) that change.
    pub skills: Vec<FileChange>,
}

impl Plan {
    pub fn unchanged(&self) -> bool {
        self.extension.is_none() && self.settings.is_none() && self.skills.is_empty()
    }

    /// The changes as unified diffs, the extension's first: empty when nothing changes.
    pub fn diff(&self) -> String {
        [&self.extension, &self.settings]
            .into_iter()
            .flatten()
            .chain(&self.skills)
            .map(|c| match &c.new {
                Some(new) => crate::write::diff(&c.path, c.old.as_deref(), new),
                // A removed file: its lines against /dev/null.
                None => similar::TextDiff::from_lines(c.old.as_deref().unwrap_or(""), "")
                    .unified_diff()
                    .header(&c.path.display().to_string(), "/dev/null")
                    .to_string(),
            })
            .collect()
    }
}

/// `connect` with `profile` (`true`) or disconnect (`false`): what it would change, or why
/// it would be refused (another's file; settings tap cannot edit, on connect).
pub fn plan(l: &Layout, connect: bool, profile: Option<&str>) -> Result<Plan, Error> {
    let old = read(&l.file)?;
    let taps = match old.as_deref().map(owner_of) {
        Some(Owner::Other) => {
            return Err(Error::NotTaps {
                file: l.file.clone(),
                removing: !connect,
            })
        }
        found => found.is_some(),
    };
    let settings_old = read(&l.settings)?;
    let text = settings_old.clone().unwrap_or_default();
    let change = |new: Option<String>, old: Option<String>, path: &Path| {
        (new != old).then(|| FileChange {
            path: path.to_path_buf(),
            old,
            new,
        })
    };
    if connect {
        let bad = |why: String| Error::Settings {
            file: l.settings.clone(),
            why,
            installed: false,
        };
        let settings_new = match settings::flag(&text).map_err(bad)? {
            settings::Flag::Off => Some(settings::set_flag(&text, true).map_err(bad)?),
            _ => settings_old.clone(),
        };
        return Ok(Plan {
            extension: change(Some(super::extension_text(profile)), old, &l.file),
            settings: change(settings_new, settings_old, &l.settings),
            skills: super::skills::changes(l, true)?,
        });
    }
    let turn_off = read(&l.record)?.is_some_and(|r| recorded_flag(&r))
        && settings::flag(&text) == Ok(settings::Flag::On);
    let settings_new = match turn_off {
        true => settings::set_flag(&text, false)
            .ok()
            .or(settings_old.clone()),
        false => settings_old.clone(),
    };
    Ok(Plan {
        extension: if taps {
            change(None, old, &l.file)
        } else {
            None
        },
        settings: change(settings_new, settings_old, &l.settings),
        skills: super::skills::changes(l, false)?,
    })
}

fn read(path: &Path) -> Result<Option<String>, Error> {
    crate::write::read(path).map_err(Error::io("read", path))
}

/// `extension.mjs.bak-<seconds>`, or with a counter when that exists too.
fn backup_path(file: &Path) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    crate::write::first_free(format!("{}.bak-{secs}", file.display()))
}

/// Temporary file + rename: Copilot never loads a half-written extension or settings file.
pub(super) fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> (tempfile::TempDir, Layout) {
        let dir = tempfile::tempdir().unwrap();
        let l = Layout::new(dir.path().join("copilot"));
        (dir, l)
    }

    #[test]
    fn connect_then_disconnect_leaves_the_settings_as_they_were() {
        let (_dir, l) = layout();
        std::fs::create_dir_all(&l.home).unwrap();
        let settings = "{\n  \"theme\": \"dark\"\n}\n";
        std::fs::write(&l.settings, settings).unwrap();

        let p = plan(&l, true, Some("web")).unwrap();
        let diff = p.diff();
        assert!(
            diff.contains("+const INSTALLED_PROFILE = \"web\";"),
            "{diff}"
        );
        assert!(
            diff.contains("+  \"enabledFeatureFlags\": { \"EXTENSIONS\": true },"),
            "{diff}"
        );
        assert!(
            diff.contains("+name: tap-monitor"),
            "the skills too: {diff}"
        );
        assert_eq!(p.skills.len(), 5, "four skills and the instructions");
        assert!(!l.file.exists(), "a plan writes nothing");

        assert_eq!(
            write_extension(&l, Some("web"), false).unwrap(),
            ExtensionWrite::Written {
                updated: false,
                moved: None
            }
        );
        assert_eq!(enable_flag(&l, None).unwrap(), FlagOn::TurnedOn);
        super::super::skills::install(&l, false).unwrap();
        assert!(plan(&l, true, Some("web")).unwrap().unchanged());
        assert_eq!(
            super::super::installed_profile(&l.file).as_deref(),
            Some("web")
        );

        // Another profile: one line of the extension changes, nothing else.
        let p = plan(&l, true, None).unwrap();
        assert!(p.settings.is_none());
        assert_eq!(
            p.diff().lines().filter(|l| l.starts_with('+')).count(),
            2,
            "{}",
            p.diff()
        );

        let p = plan(&l, false, None).unwrap();
        assert_eq!(p.extension.as_ref().unwrap().new, None);
        assert!(p.skills.iter().all(|c| c.new.is_none()) && p.skills.len() == 5);
        assert_eq!(
            p.settings.as_ref().unwrap().new.as_deref(),
            Some(
                settings
                    .replace(
                        "{\n",
                        "{\n  \"enabledFeatureFlags\": { \"EXTENSIONS\": false },\n"
                    )
                    .as_str()
            )
        );
        assert_eq!(remove_extension(&l).unwrap(), Removed::Removed);
        assert_eq!(disable_flag(&l).unwrap(), FlagOff::TurnedOff);
        super::super::skills::remove(&l).unwrap();
        assert!(!l.dir.exists());
        assert!(plan(&l, false, None).unwrap().unchanged());
    }

    #[test]
    fn the_record_keeps_a_flag_install_turned_on_and_names_the_tap_given() {
        let (dir, l) = layout();
        std::fs::create_dir_all(&l.dir).unwrap();
        let record = || -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(&l.record).unwrap()).unwrap()
        };
        assert_eq!(enable_flag(&l, None).unwrap(), FlagOn::TurnedOn);
        assert_eq!(record()["enabledExtensionsFlag"], true);
        assert!(record().get("tap").is_none());
        // Installed again by a tap elsewhere: the flag is on now, but still install's doing.
        let tap = dir.path().join("bin/tap");
        assert_eq!(enable_flag(&l, Some(&tap)).unwrap(), FlagOn::Already);
        assert_eq!(record()["enabledExtensionsFlag"], true);
        assert_eq!(record()["tap"], json!(tap.to_string_lossy()));
        assert_eq!(disable_flag(&l).unwrap(), FlagOff::TurnedOff);
        assert!(!l.record.exists());

        // A `tap` beside another program is found; none beside it, none.
        std::fs::create_dir_all(tap.parent().unwrap()).unwrap();
        assert_eq!(tap_beside(&dir.path().join("bin/tap-desktop")), None);
        std::fs::write(&tap, "").unwrap();
        assert_eq!(
            tap_beside(&dir.path().join("bin/tap-desktop")),
            Some(tap.clone())
        );
        assert_eq!(tap_beside(&tap), Some(tap));
    }

    #[test]
    fn anothers_file_is_refused_unless_forced_and_bad_settings_before_any_write() {
        let (_dir, l) = layout();
        std::fs::create_dir_all(&l.dir).unwrap();
        std::fs::write(&l.file, "export default {};\n").unwrap();
        for connect in [true, false] {
            let e = plan(&l, connect, None).unwrap_err();
            assert_eq!(e.code(), "CONFLICT", "{e}");
        }
        assert_eq!(
            write_extension(&l, None, false).unwrap_err().code(),
            "CONFLICT"
        );
        assert_eq!(remove_extension(&l).unwrap_err().code(), "CONFLICT");
        assert_eq!(
            std::fs::read_to_string(&l.file).unwrap(),
            "export default {};\n"
        );
        let ExtensionWrite::Written {
            moved: Some(moved), ..
        } = write_extension(&l, None, true).unwrap()
        else {
            panic!("forced");
        };
        assert_eq!(
            std::fs::read_to_string(moved).unwrap(),
            "export default {};\n"
        );

        std::fs::write(&l.settings, "{ // a comment\n}").unwrap();
        let e = plan(&l, true, None).unwrap_err();
        assert_eq!(e.code(), "INVALID_JSON");
        assert!(e.to_string().ends_with("nothing was written"), "{e}");
    }
}
