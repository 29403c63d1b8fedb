//! `settings.get` and `settings.set`: the engine side.

use super::{Settings, SettingsError, SettingsPatch};
use crate::events::GatewayEvent;
use crate::gateway::Gateway;
use std::sync::Mutex;
use tap_protocol::settings::SettingsResult;

/// One `settings.set` at a time in this process, so two clients' changes cannot
/// interleave between the read and the write. Never held across an await.
static WRITING: Mutex<()> = Mutex::new(());

impl Gateway {
    /// The saved settings, where they are, and whether the port differs from the one
    /// this gateway listens on.
    pub fn settings(&self) -> Result<SettingsResult, SettingsError> {
        let settings = super::load(&self.shared().config.data_dir)?;
        Ok(self.settings_result(settings))
    }

    /// Applies `patch`, saves, and tells every control client (`settings.changed`).
    pub fn set_settings(&self, patch: &SettingsPatch) -> Result<SettingsResult, SettingsError> {
        let dir = &self.shared().config.data_dir;
        let saved = {
            let _one = WRITING.lock().unwrap_or_else(|e| e.into_inner());
            // A file that cannot be read is replaced rather than left blocking every change.
            let current = match super::load(dir) {
                Ok(s) => s,
                Err(SettingsError::Malformed { .. } | SettingsError::Invalid(_)) => {
                    Settings::default()
                }
                Err(e) => return Err(e),
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
        self.emit(GatewayEvent::SettingsChanged(saved));
        Ok(self.settings_result(saved))
    }

    fn settings_result(&self, settings: Settings) -> SettingsResult {
        let running_port = self.address().port();
        SettingsResult {
            settings,
            file: super::path(&self.shared().config.data_dir)
                .display()
                .to_string(),
            running_port,
            restart_required: settings.port != running_port,
        }
    }
}
