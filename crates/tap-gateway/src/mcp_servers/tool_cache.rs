//! The tool list each server offered last, kept in `$TAP_HOME/mcp-tools/`, so a lazy
//! server's tools are in the sessions before its process ever runs in this gateway.
//! A missing or unreadable file only means the server starts to learn its tools.

use super::catalog::Catalog;
use super::server::Server;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const DIR: &str = "mcp-tools";

/// One file per server and the file that configures it.
fn path(data_dir: &Path, server: &Server) -> PathBuf {
    let key = Sha256::digest(format!("{}\n{}", server.config_path, server.spec.name).as_bytes());
    let hex: String = key.iter().take(8).map(|b| format!("{b:02x}")).collect();
    data_dir
        .join(DIR)
        .join(format!("{}-{hex}.json", server.spec.name))
}

/// Keeps `catalog` (a failure to write is logged: only the next lazy start is slower).
pub(crate) fn save(data_dir: &Path, server: &Server, catalog: &Catalog) {
    let path = path(data_dir, server);
    let written = std::fs::create_dir_all(path.parent().expect("a directory"))
        .and_then(|()| std::fs::write(&path, catalog.to_cache().to_string()));
    if let Err(e) = written {
        tracing::warn!(target: super::connect::LOG_TARGET, server = %server.spec.name, error = %e, "could not keep the server's tool list");
    }
}

/// The tools the server offered last, if known.
pub(crate) fn load(data_dir: &Path, server: &Server) -> Option<Catalog> {
    let bytes = std::fs::read(path(data_dir, server)).ok()?;
    Catalog::from_cache(&serde_json::from_slice(&bytes).ok()?)
}
