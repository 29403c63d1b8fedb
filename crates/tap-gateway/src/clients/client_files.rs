//! `clients.list`, `clients.connect`, `clients.disconnect`: the `tap` entry in MCP clients'
//! own files, through `tap_connect` (the code `tap connect` runs), so the panel and the CLI
//! write the same bytes and agree on every state. The files are those of the gateway's
//! `HOME` (`GatewayConfig::client_dirs`); the entry launches `GatewayConfig::tap_program`.
//! The Copilot CLI is connected by tap's extension under its `COPILOT_HOME` instead
//! (`tap_connect::copilot`, what `tap connect copilot` runs): no `tap` program needed.

use super::client_sessions;
use crate::error::Error;
use crate::state::Core;
use std::path::{Path, PathBuf};
use tap_connect::{copilot, Client, Dirs, Report, State};
use tap_protocol::clients::{
    ClientChange, ClientConnect, ClientDisconnect, ClientInfo, ClientSession, ClientState,
    ClientsList,
};
use tap_protocol::ErrorCode;

/// What `clients.connect`/`clients.disconnect` change: an entry in a client's file, or the
/// Copilot CLI's extension.
#[derive(Clone, Copy)]
enum Target {
    File(Client),
    Copilot,
}

fn dirs(core: &Core) -> Result<&Dirs, Error> {
    core.config.client_dirs.as_ref().ok_or_else(|| {
        Error::internal(
            "the gateway has no home directory (HOME is not set), so it cannot find clients' files",
        )
    })
}

/// The `tap` program as entries name it, or why there is none.
fn tap_program(core: &Core) -> Result<String, String> {
    let exe = core.config.tap_program.as_ref().map_err(Clone::clone)?;
    tap_connect::entry::program_path(exe)
}

fn client(id: &str) -> Result<Target, Error> {
    if id == copilot::WORD {
        return Ok(Target::Copilot);
    }
    Client::from_word(id).map(Target::File).ok_or_else(|| {
        let known: Vec<&str> = Client::ALL
            .iter()
            .map(|c| c.word())
            .chain([copilot::WORD])
            .collect();
        Error::new(
            ErrorCode::NotFound,
            format!("no client '{id}': the clients are {}", known.join(", ")),
        )
    })
}

fn state(s: State) -> ClientState {
    match s {
        State::NotInstalled => ClientState::NotInstalled,
        State::Installed => ClientState::Installed,
        State::Connected => ClientState::Connected,
        State::Drifted => ClientState::Drifted,
        State::Invalid => ClientState::Invalid,
    }
}

fn info(r: Report, sessions: Vec<ClientSession>) -> ClientInfo {
    ClientInfo {
        id: r.client.into(),
        name: r.name.into(),
        state: state(r.state),
        file: r.file.display().to_string(),
        profile: r.profile,
        detail: r.detail,
        command: format!("tap connect {}", r.client),
        editable: true,
        sessions,
    }
}

/// One client as it stands, with its sessions (after a change).
fn one(core: &Core, d: &Dirs, c: Client, tap: Option<&str>) -> ClientInfo {
    let mut sessions = client_sessions::recent(core, &[c.word()]);
    info(
        report(core, d, c, tap),
        sessions.remove(c.word()).unwrap_or_default(),
    )
}

/// Where `c` stands. Without a `tap` program an entry is judged against the program it
/// launches, so only its profile and shape can show it drifted.
fn report(core: &Core, d: &Dirs, c: Client, tap: Option<&str>) -> Report {
    let tap_home = &core.config.data_dir;
    if let Some(tap) = tap {
        return tap_connect::status::report(c, d, tap, tap_home);
    }
    let own = std::fs::read_to_string(c.file(d))
        .ok()
        .and_then(|t| tap_connect::status::read_entry(c, &t).ok().flatten())
        .and_then(|e| tap_connect::entry::program_of(&e));
    tap_connect::status::report(c, d, own.as_deref().unwrap_or(""), tap_home)
}

/// The Copilot CLI as it stands, with its sessions (after a change).
fn copilot_one(core: &Core, d: &Dirs) -> ClientInfo {
    let mut sessions = client_sessions::recent(core, &[copilot::WORD]);
    info(
        copilot::report(d),
        sessions.remove(copilot::WORD).unwrap_or_default(),
    )
}

/// `clients.list`.
pub(crate) fn list(core: &Core) -> Result<ClientsList, Error> {
    let d = dirs(core)?;
    let tap = tap_program(core);
    let labels: Vec<&str> = Client::ALL
        .iter()
        .map(|c| c.word())
        .chain([copilot::WORD])
        .collect();
    let mut sessions = client_sessions::recent(core, &labels);
    let mut clients: Vec<ClientInfo> = Client::ALL
        .iter()
        .map(|c| {
            let mine = sessions.remove(c.word()).unwrap_or_default();
            info(report(core, d, *c, tap.as_deref().ok()), mine)
        })
        .collect();
    clients.push(info(
        copilot::report(d),
        sessions.remove(copilot::WORD).unwrap_or_default(),
    ));
    let (tap, tap_missing) = match tap {
        Ok(t) => (Some(t), None),
        Err(why) => (None, Some(why)),
    };
    Ok(ClientsList {
        clients,
        tap,
        tap_missing,
    })
}

fn failed(e: tap_connect::Error) -> Error {
    let code = match e.code() {
        "INVALID_JSON" => ErrorCode::InvalidJson,
        "INTERNAL" => ErrorCode::Internal,
        other => ErrorCode::Other(other.into()),
    };
    Error::new(code, e.to_string())
}

fn copilot_failed(e: copilot::Error) -> Error {
    let code = match e.code() {
        "INVALID_JSON" => ErrorCode::InvalidJson,
        "INTERNAL" => ErrorCode::Internal,
        other => ErrorCode::Other(other.into()),
    };
    Error::new(code, e.to_string())
}

fn shown(p: Option<PathBuf>) -> Option<String> {
    p.map(|p| p.display().to_string())
}

/// `clients.connect`: checks the client, the profile (it must exist: an entry naming a
/// missing one opens no session) and the file before anything is written.
pub(crate) fn connect(core: &Core, p: &ClientConnect) -> Result<ClientChange, Error> {
    let target = client(&p.client)?;
    let d = dirs(core)?;
    let tap_home: &Path = &core.config.data_dir;
    if let Some(profile) = &p.profile {
        crate::profiles::file::find(tap_home, profile)
            .map_err(|why| Error::new(ErrorCode::NotFound, why))?;
    }
    let c = match target {
        Target::File(c) => c,
        Target::Copilot => return connect_copilot(core, d, p),
    };
    let tap = tap_program(core).map_err(|why| Error::new(ErrorCode::NotFound, why))?;
    let plan = tap_connect::plan_connect(c, d, &tap, p.profile.as_deref()).map_err(failed)?;
    let diff = plan.diff();
    if p.dry_run {
        return Ok(ClientChange {
            client: one(core, d, c, Some(&tap)),
            diff,
            written: false,
            backup: None,
            note: None,
        });
    }
    let written = !plan.unchanged();
    let done = plan.apply(tap_home).map_err(failed)?;
    tracing::info!(client = c.word(), profile = ?p.profile, written, "client connected");
    core.events.emit(crate::events::GatewayEvent::StatusChanged);
    Ok(ClientChange {
        client: one(core, d, c, Some(&tap)),
        diff,
        written,
        backup: shown(done.backup),
        note: done.note,
    })
}

/// `clients.disconnect`: removes the entry named `tap` and nothing else.
pub(crate) fn disconnect(core: &Core, p: &ClientDisconnect) -> Result<ClientChange, Error> {
    let target = client(&p.client)?;
    let d = dirs(core)?;
    let c = match target {
        Target::File(c) => c,
        Target::Copilot => return disconnect_copilot(core, d, p.dry_run),
    };
    let tap_home: &Path = &core.config.data_dir;
    let tap = tap_program(core).ok();
    let plan = tap_connect::plan_disconnect(c, d, tap_home).map_err(failed)?;
    let diff = plan.diff();
    let written = matches!(plan.removal, tap_connect::Removal::Remove { .. });
    if p.dry_run {
        return Ok(ClientChange {
            client: one(core, d, c, tap.as_deref()),
            diff,
            written: false,
            backup: None,
            note: None,
        });
    }
    let done = plan.apply(tap_home).map_err(failed)?;
    tracing::info!(client = c.word(), written, "client disconnected");
    core.events.emit(crate::events::GatewayEvent::StatusChanged);
    Ok(ClientChange {
        client: one(core, d, c, tap.as_deref()),
        diff,
        written,
        backup: shown(done.backup),
        note: done.note,
    })
}

/// The Copilot CLI's `clients.connect`: this tap's extension with the profile, and Copilot's
/// extensions feature on. Another's extension file is refused (the CLI's `--force` replaces
/// it), as are settings tap cannot edit, before anything is written.
fn connect_copilot(core: &Core, d: &Dirs, p: &ClientConnect) -> Result<ClientChange, Error> {
    let l = copilot::Layout::new(d.copilot.clone());
    let profile = p.profile.as_deref();
    let plan = copilot::plan(&l, true, profile).map_err(copilot_failed)?;
    let diff = plan.diff();
    let written = !plan.unchanged();
    if p.dry_run || !written {
        return Ok(ClientChange {
            client: copilot_one(core, d),
            diff,
            written: false,
            backup: None,
            note: None,
        });
    }
    copilot::write_extension(&l, profile, false).map_err(copilot_failed)?;
    copilot::enable_flag(&l, copilot::running_tap().as_deref()).map_err(copilot_failed)?;
    copilot::skills::install(&l, false).map_err(copilot_failed)?;
    tracing::info!(client = copilot::WORD, profile = ?p.profile, "client connected");
    core.events.emit(crate::events::GatewayEvent::StatusChanged);
    Ok(ClientChange {
        client: copilot_one(core, d),
        diff,
        written,
        backup: None,
        // As `tap install copilot` says: the extension is loaded when a session starts.
        note: Some("new Copilot CLI sessions connect to the gateway".into()),
    })
}

/// The Copilot CLI's `clients.disconnect`: removes tap's extension and skills, and turns
/// Copilot's extensions feature off again when connecting turned it on.
fn disconnect_copilot(core: &Core, d: &Dirs, dry_run: bool) -> Result<ClientChange, Error> {
    let l = copilot::Layout::new(d.copilot.clone());
    let plan = copilot::plan(&l, false, None).map_err(copilot_failed)?;
    let diff = plan.diff();
    let written = !plan.unchanged();
    if dry_run || !written {
        return Ok(ClientChange {
            client: copilot_one(core, d),
            diff,
            written: false,
            backup: None,
            note: None,
        });
    }
    copilot::remove_extension(&l).map_err(copilot_failed)?;
    let note = match copilot::disable_flag(&l).map_err(copilot_failed)? {
        copilot::FlagOff::LeftAsIs(why) => Some(format!(
            "{} was left as it is ({why})",
            l.settings.display()
        )),
        _ => None,
    };
    // tap's skills and instructions only: a user's file at their paths stays.
    copilot::skills::remove(&l).map_err(copilot_failed)?;
    tracing::info!(client = copilot::WORD, "client disconnected");
    core.events.emit(crate::events::GatewayEvent::StatusChanged);
    Ok(ClientChange {
        client: copilot_one(core, d),
        diff,
        written,
        backup: None,
        note,
    })
}
