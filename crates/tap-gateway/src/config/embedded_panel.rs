//! A panel compiled into the program ([`EmbeddedPanel`]): what `tap` and the desktop app
//! serve when no `ui_dir` overrides it. With the `embedded-panel` feature, `build.rs`
//! builds `ui/` (when `ui/dist` is missing or stale) and lists `dist/index.html` and
//! `dist/assets/**` for [`EmbeddedPanel::built_in`].

use std::fmt;

/// A built panel held in memory: `index.html` and `assets/…`, keyed by their path under
/// the panel's `dist/` (`/` separators).
#[derive(Clone, Copy)]
pub struct EmbeddedPanel {
    files: &'static [(&'static str, &'static [u8])],
}

impl EmbeddedPanel {
    /// A panel made of `files`: `("index.html", …)` and `("assets/NAME", …)` entries.
    /// Without an `index.html` it is no panel (`GET /` answers with the plain-text note).
    pub const fn new(files: &'static [(&'static str, &'static [u8])]) -> Self {
        Self { files }
    }

    /// The panel this program was built with (`ui/dist` at build time), or `None` when
    /// tap-gateway was built without the `embedded-panel` feature.
    pub fn built_in() -> Option<Self> {
        #[cfg(feature = "embedded-panel")]
        {
            const FILES: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/panel_files.rs"));
            Some(Self::new(FILES))
        }
        #[cfg(not(feature = "embedded-panel"))]
        {
            None
        }
    }

    /// The bytes of `path` (e.g. `index.html`, `assets/index-B4x.js`).
    pub(crate) fn get(&self, path: &str) -> Option<&'static [u8]> {
        self.files
            .iter()
            .find(|(name, _)| *name == path)
            .map(|(_, bytes)| *bytes)
    }

    /// Whether there is a page to serve at `/`.
    pub(crate) fn has_index(&self) -> bool {
        self.get("index.html").is_some()
    }
}

/// The file names, not their bytes.
impl fmt::Debug for EmbeddedPanel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.files.iter().map(|(name, _)| name))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_files_up_by_their_exact_path() {
        let p = EmbeddedPanel::new(&[("index.html", b"<p>"), ("assets/a.js", b"1")]);
        assert!(p.has_index());
        assert_eq!(p.get("assets/a.js"), Some(&b"1"[..]));
        assert_eq!(p.get("a.js"), None);
        assert_eq!(format!("{p:?}"), r#"["index.html", "assets/a.js"]"#);
        assert!(!EmbeddedPanel::new(&[("assets/a.js", b"1")]).has_index());
    }

    #[cfg(feature = "embedded-panel")]
    #[test]
    fn the_built_in_panel_is_the_built_ui() {
        let p = EmbeddedPanel::built_in().expect("built with the feature");
        let index = std::str::from_utf8(p.get("index.html").expect("index.html")).unwrap();
        assert!(index.contains("<title>Tap panel</title>"), "{index}");
        // Vite rewrote the entry to a hashed asset, and that asset is embedded too.
        let script = index
            .split("src=\"/")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("a script tag");
        assert!(script.starts_with("assets/"), "{script}");
        assert!(p.get(script).is_some(), "{script} in {p:?}");
    }
}
