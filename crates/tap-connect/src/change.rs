//! Connecting and disconnecting one client, in two steps: a plan (the file's text now and
//! after, nothing written: a dry run shows its [`ConnectPlan::diff`]) and its `apply` (the
//! backup, the atomic replace, the record). `tap connect`/`tap disconnect` and the gateway's
//! `clients.connect`/`clients.disconnect` both go through here, and say what happened in
//! their own words.

use crate::clients::{Client, Dirs, Format};
use crate::json_file::{self, Invalid};
use crate::{entry, record, status, toml_file, write};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Why a client's file was not changed.
#[derive(Debug)]
pub enum Error {
    /// The file does not parse as the client's format (or its servers key is not an
    /// object): it is left as it is.
    Invalid {
        client: Client,
        file: PathBuf,
        why: String,
    },
    /// Reading or writing it failed.
    Io {
        what: &'static str,
        file: PathBuf,
        error: std::io::Error,
    },
}

impl Error {
    /// The machine-readable code: `INVALID_JSON`, `INVALID_TOML` or `INTERNAL`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Invalid { client, .. } => match client.format() {
                Format::Toml => "INVALID_TOML",
                Format::Json { .. } => "INVALID_JSON",
            },
            Error::Io { .. } => "INTERNAL",
        }
    }

    fn invalid(client: Client, file: &Path, e: Invalid) -> Self {
        Error::Invalid {
            client,
            file: file.to_path_buf(),
            why: e.0,
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
        match self {
            Error::Invalid { file, why, .. } => write!(
                f,
                "{} cannot be changed: {why}; it was left as it is",
                file.display()
            ),
            Error::Io { what, file, error } => {
                write!(f, "cannot {what} {}: {error}", file.display())
            }
        }
    }
}

impl std::error::Error for Error {}

/// What connecting a client would do.
#[derive(Debug)]
pub struct ConnectPlan {
    pub client: Client,
    /// The file as the user knows it (a symlink's own path).
    pub shown: PathBuf,
    /// The file written (a symlink's target).
    file: PathBuf,
    profile: Option<String>,
    old: Option<String>,
    /// The entry named `tap` the file holds now.
    pub found: Option<Value>,
    /// The entry it will hold.
    pub wanted: Value,
    /// The new text and whether the servers object is created; `None`: the file already
    /// holds `wanted`.
    new: Option<(String, bool)>,
}

/// What [`ConnectPlan::apply`] did.
#[derive(Debug)]
pub struct Connected {
    /// The previous file, kept beside it (`None`: there was none, or nothing was written).
    pub backup: Option<PathBuf>,
    /// A note for the user when the record could not be written (the entry was).
    pub note: Option<String>,
}

/// Plans the entry launching `tap` (an absolute path) with `profile` in `client`'s file.
pub fn plan_connect(
    client: Client,
    d: &Dirs,
    tap: &str,
    profile: Option<&str>,
) -> Result<ConnectPlan, Error> {
    let shown = client.file(d);
    let file = write::target(&shown);
    let old = write::read(&file).map_err(Error::io("read", &file))?;
    let wanted = entry::value(client, tap, profile);
    let text = old.as_deref().unwrap_or("");
    let found = status::read_entry(client, text).map_err(|e| Error::invalid(client, &file, e))?;
    let new = if found.as_ref() == Some(&wanted) {
        None
    } else {
        let new = match client.format() {
            Format::Json { key } => json_file::set(text, key, entry::NAME, &wanted),
            Format::Toml => toml_file::set(text, entry::NAME, &wanted),
        };
        Some(new.map_err(|e| Error::invalid(client, &file, e))?)
    };
    Ok(ConnectPlan {
        client,
        shown,
        file,
        profile: profile.map(str::to_string),
        old,
        found,
        wanted,
        new,
    })
}

impl ConnectPlan {
    /// The file already holds the entry: applying only records it.
    pub fn unchanged(&self) -> bool {
        self.new.is_none()
    }

    /// Why the entry found differs (a repair), `None` when there was none or it is the same.
    pub fn repairs(&self) -> Option<String> {
        let found = self.found.as_ref()?;
        (!self.unchanged()).then(|| entry::drift_reason(found, &self.wanted))
    }

    /// The change as a unified diff of [`ConnectPlan::shown`] (empty when unchanged).
    pub fn diff(&self) -> String {
        match &self.new {
            Some((new, _)) => write::diff(&self.shown, self.old.as_deref(), new),
            None => String::new(),
        }
    }

    /// Writes the file (when it changes) and records what was written in `tap_home`.
    pub fn apply(self, tap_home: &Path) -> Result<Connected, Error> {
        let recorded = record::get(tap_home, self.client).is_some_and(|r| r.created_key);
        let (backup, created) = match &self.new {
            Some((new, created)) => {
                let backup = write::replace(&self.file, self.old.as_deref(), new)
                    .map_err(Error::io("write", &self.file))?;
                (backup, *created)
            }
            None => (None, false),
        };
        let record = record::Record {
            profile: self.profile,
            created_key: created || recorded,
        };
        let note = record::set(tap_home, self.client, Some(record)).err();
        Ok(Connected { backup, note })
    }
}

/// What disconnecting a client would do.
#[derive(Debug)]
pub enum Removal {
    /// The client's file does not exist.
    NoFile,
    /// The file holds no entry named `tap`.
    NoEntry,
    /// The file without the entry.
    Remove { old: String, new: String },
}

/// What disconnecting a client would do, and where.
#[derive(Debug)]
pub struct DisconnectPlan {
    pub client: Client,
    pub shown: PathBuf,
    file: PathBuf,
    pub removal: Removal,
}

/// What [`DisconnectPlan::apply`] did.
#[derive(Debug)]
pub struct Disconnected {
    pub backup: Option<PathBuf>,
    pub note: Option<String>,
}

/// Plans removing the entry named `tap` from `client`'s file, and only that: the servers
/// object goes too when connecting created it (recorded in `tap_home`) and it is left empty.
pub fn plan_disconnect(client: Client, d: &Dirs, tap_home: &Path) -> Result<DisconnectPlan, Error> {
    let shown = client.file(d);
    let file = write::target(&shown);
    let plan = |removal| DisconnectPlan {
        client,
        shown: shown.clone(),
        file: file.clone(),
        removal,
    };
    let Some(old) = write::read(&file).map_err(Error::io("read", &file))? else {
        return Ok(plan(Removal::NoFile));
    };
    let drop_key = record::get(tap_home, client).is_some_and(|r| r.created_key);
    let new = match client.format() {
        Format::Json { key } => json_file::remove(&old, key, entry::NAME, drop_key),
        Format::Toml => toml_file::remove(&old, entry::NAME, drop_key),
    };
    Ok(match new.map_err(|e| Error::invalid(client, &file, e))? {
        Some(new) => plan(Removal::Remove { old, new }),
        None => plan(Removal::NoEntry),
    })
}

impl DisconnectPlan {
    /// The change as a unified diff (empty when nothing would change).
    pub fn diff(&self) -> String {
        match &self.removal {
            Removal::Remove { old, new } => write::diff(&self.shown, Some(old), new),
            _ => String::new(),
        }
    }

    /// Removes the entry (when there is one) and forgets the client's record.
    pub fn apply(self, tap_home: &Path) -> Result<Disconnected, Error> {
        let backup = match &self.removal {
            Removal::Remove { old, new } => write::replace(&self.file, Some(old), new)
                .map_err(Error::io("write", &self.file))?,
            Removal::NoEntry => None,
            // Nothing to forget either: the CLI never touched the record here.
            Removal::NoFile => {
                return Ok(Disconnected {
                    backup: None,
                    note: None,
                })
            }
        };
        let note = record::set(tap_home, self.client, None).err();
        Ok(Disconnected { backup, note })
    }
}
