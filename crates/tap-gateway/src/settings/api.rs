//! `settings.get` and `settings.set`: the engine side.

use super::{Settings, SettingsPatch};
use crate::error::Error;
use crate::events::GatewayEvent;
use crate::ledger::record::Record;
use crate::state::Core;
use std::sync::Mutex;
use tap_protocol::settings::SettingsResult;

/// One `settings.set` at a time in this process, so two clients' changes cannot
/// interleave between the read and the write. Never held across an await.
static WRITING: Mutex<()> = Mutex::new(());

/// The saved settings, where they are, and whether the port differs from the one
/// this gateway listens on.
pub(crate) fn get(core: &Core) -> Result<SettingsResult, Error> {
    let settings = super::load(&core.config.data_dir)?;
    Ok(result(core, settings))
}

/// Applies `patch`, saves, and tells every control client (`settings.changed`).
pub(crate) fn set(core: &Core, patch: &SettingsPatch) -> Result<SettingsResult, Error> {
    let dir = &core.config.data_dir;
    let saved = {
        let _one = WRITING.lock().unwrap_or_else(|e| e.into_inner());
        // A file that cannot be read is replaced rather than left blocking every change.
        let path = super::path(dir);
        let current = match super::read(&path)? {
            Some(text) => super::parse(&path, &text).unwrap_or_default(),
            None => Settings::default(),
        };
        let next = super::apply(current, patch)?;
        super::save(dir, &next)?;
        next
    };
    tracing::info!(
        port = saved.port,
        notifications = saved.notifications,
        "settings saved"
    );
    core.events.emit(GatewayEvent::SettingsChanged(saved));
    Ok(result(core, saved))
}

/// The ledger's retention as of `now`, with the limits the saved settings hold now (the
/// defaults when the file cannot be read).
pub(crate) fn history_trim(core: &Core, now: std::time::SystemTime) -> Record {
    let settings = super::load(&core.config.data_dir).unwrap_or_default();
    Record::Trim {
        now,
        max_age: std::time::Duration::from_secs(u64::from(settings.history_days) * 86_400),
        max_bytes: u64::from(settings.history_max_mib) * 1024 * 1024,
    }
}

fn result(core: &Core, settings: Settings) -> SettingsResult {
    let running_port = core.address.port();
    SettingsResult {
        settings,
        file: super::path(&core.config.data_dir).display().to_string(),
        running_port,
        restart_required: settings.port != running_port,
    }
}
