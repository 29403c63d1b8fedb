use super::copilot_holder::{self, Holder, Holding};
use crate::GatewayError;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use tap_protocol::settings::DEFAULT_PORT;

/// Where a running gateway leaves what other processes need to reach it. All files are
/// written with mode 0600 and removed on clean shutdown.
#[derive(Debug, Clone)]
pub struct GatewayFiles {
    /// `$TAP_HOME/provider-token`: the gateway token.
    pub provider_token: PathBuf,
    /// `<COPILOT_HOME>/extensions/tap/.provider-token`: the same token where spec providers
    /// look. One file for every gateway of the user, so only one gateway holds it (see
    /// [`GatewayFiles::claim_copilot_token`]); `None` when this gateway does not.
    pub copilot_provider_token: Option<PathBuf>,
    /// `$TAP_HOME/host-token`: the session-host token.
    pub host_token: PathBuf,
    /// `$TAP_HOME/gateway.json`: address, pid and start time of the running gateway.
    pub state: PathBuf,
    /// `$TAP_HOME/control-token`: the control-plane token (panel, `tap pairing`).
    pub control_token: PathBuf,
}

impl GatewayFiles {
    /// The file locations for a data directory and an optional Copilot home.
    pub fn locate(data_dir: &Path, copilot_home: Option<&Path>) -> Self {
        Self {
            provider_token: data_dir.join("provider-token"),
            copilot_provider_token: copilot_home
                .map(|h| h.join("extensions").join("tap").join(".provider-token")),
            host_token: data_dir.join("host-token"),
            state: data_dir.join("gateway.json"),
            control_token: data_dir.join("control-token"),
        }
    }

    /// Every file this gateway writes.
    pub fn all(&self) -> impl Iterator<Item = &Path> {
        [
            &self.provider_token,
            &self.host_token,
            &self.control_token,
            &self.state,
        ]
        .into_iter()
        .map(PathBuf::as_path)
        .chain(self.copilot_provider_token.as_deref())
    }

    /// Whether this gateway, listening on `port`, takes the Copilot token file: the
    /// gateway on the default port always does (it is the one spec providers expect at
    /// `ws://localhost:9400`); another when no gateway holds the file, or when the gateway
    /// that wrote it no longer runs ([`copilot_holder`]). Without the claim,
    /// [`GatewayFiles::copilot_provider_token`] becomes `None`: this gateway neither writes
    /// nor removes it.
    pub fn claim_copilot_token(&mut self, port: u16) -> CopilotClaim {
        let Some(path) = self.copilot_provider_token.as_deref() else {
            return CopilotClaim::NotConfigured;
        };
        let claim = match copilot_holder::holding(path) {
            Holding::Gone(h) => CopilotClaim::TookOver(h),
            _ if port == DEFAULT_PORT => CopilotClaim::Claimed,
            Holding::Free => CopilotClaim::Claimed,
            Holding::Live(h) => CopilotClaim::Held(Some(h)),
            Holding::Unknown => CopilotClaim::Held(None),
        };
        if matches!(claim, CopilotClaim::Held(_)) {
            self.copilot_provider_token = None;
        }
        claim
    }

    /// Removes every file; missing ones are fine. The Copilot token file (and its holder
    /// record) is removed only while it still holds `own_token`: another gateway (the one
    /// on the default port) may have taken it over since. Errors are returned for logging only.
    pub fn remove_all(&self, own_token: &str) -> Vec<(PathBuf, std::io::Error)> {
        let taken_over = |p: &Path| {
            self.copilot_provider_token.as_deref() == Some(p)
                && read_secret_file(p).is_ok_and(|t| t != own_token)
        };
        let holder = self
            .copilot_provider_token
            .as_deref()
            .filter(|p| !taken_over(p))
            .map(copilot_holder::record_path);
        self.all()
            .filter(|p| !taken_over(p))
            .chain(holder.as_deref())
            .filter_map(|p| match fs::remove_file(p) {
                Ok(()) => None,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => Some((p.to_path_buf(), e)),
            })
            .collect()
    }
}

/// What [`GatewayFiles::claim_copilot_token`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopilotClaim {
    /// No Copilot home: there is no such file.
    NotConfigured,
    /// This gateway writes the file.
    Claimed,
    /// This gateway writes the file, which the gateway in it left behind when it stopped
    /// running without removing it.
    TookOver(Holder),
    /// Another gateway holds it (`None`: one that did not record itself).
    Held(Option<Holder>),
}

/// Writes `contents` to `path` with mode 0600, atomically: a reader sees the old file or
/// the whole new one, never a partial token.
pub fn write_private(path: &Path, contents: &str) -> Result<(), GatewayError> {
    let err = |source| GatewayError::File {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        create_private_dir(dir).map_err(err)?;
    }
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&tmp).map_err(err)?;
    f.write_all(contents.as_bytes()).map_err(err)?;
    f.sync_all().map_err(err)?;
    fs::rename(&tmp, path).map_err(err)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

/// Reads a token file, trimming the trailing newline editors add.
pub fn read_secret_file(path: &Path) -> std::io::Result<String> {
    Ok(fs::read_to_string(path)?.trim().to_string())
}
