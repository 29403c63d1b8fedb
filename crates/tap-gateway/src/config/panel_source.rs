//! Where this gateway's panel comes from: `GatewayConfig::ui_dir` when set (an override,
//! even when it holds no panel), else the panel built into the program.

use super::embedded_panel::EmbeddedPanel;
use crate::config::GatewayConfig;
use std::path::Path as FsPath;

/// Where this gateway's panel comes from.
pub(crate) enum Source<'a> {
    Dir(&'a FsPath),
    Embedded(EmbeddedPanel),
    None,
}

pub(crate) fn source(config: &GatewayConfig) -> Source<'_> {
    match (&config.ui_dir, config.embedded_panel) {
        (Some(dir), _) => Source::Dir(dir),
        (None, Some(panel)) => Source::Embedded(panel),
        (None, None) => Source::None,
    }
}

/// Whether `GET /` serves a panel (and a `ui.login` link leads somewhere).
pub(crate) fn has_panel(config: &GatewayConfig) -> bool {
    match source(config) {
        Source::Dir(dir) => dir.join("index.html").is_file(),
        Source::Embedded(panel) => panel.has_index(),
        Source::None => false,
    }
}
