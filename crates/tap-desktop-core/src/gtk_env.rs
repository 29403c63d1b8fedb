//! What the app asks of GTK through its own environment, set before GTK (or any thread)
//! starts, and kept from the processes the engine starts.
//!
//! GDK on X11 makes a GL context as soon as it opens the display, to choose visuals for GL,
//! before any window exists. That loads the GL driver into the app for its whole life: under
//! Mesa's software rasteriser (llvmpipe, what Xvfb and many VMs have) that is `libLLVM`,
//! 42 MiB of the 130 MiB the app took while hidden at login (docs/performance-log.md,
//! "Desktop footprint"). The app needs no GL of its own: GTK 3 draws its widgets with
//! cairo, and the panel's pages are rendered by WebKit's web process, which sets up its own
//! GL. So the app starts GDK with `GDK_GL=disable`, unless the user set `GDK_GL` (to any
//! value, even empty: then GTK's default applies).

use std::ffi::OsString;
use std::sync::OnceLock;

/// GDK's variable for its GL use (GTK 3: `disable`, `always`, `software-draw`, …).
pub const GDK_GL: &str = "GDK_GL";

/// What the app sets for itself.
const WANTED: [(&str, &str); 1] = [(GDK_GL, "disable")];

/// What [`apply`] set, for the engine's children to drop.
static APPLIED: OnceLock<Vec<String>> = OnceLock::new();

/// The variables to set: each of [`WANTED`] the environment (`env`) does not have.
pub fn wanted(env: impl Fn(&str) -> Option<OsString>) -> Vec<(&'static str, &'static str)> {
    WANTED
        .into_iter()
        .filter(|(key, _)| env(key).is_none())
        .collect()
}

/// Sets [`wanted`] in this process's environment. Call first thing in `main`, while the
/// process has one thread: changing the environment races with C code reading it.
pub fn apply() {
    let set = wanted(|k| std::env::var_os(k));
    for (key, value) in &set {
        std::env::set_var(key, value);
    }
    let _ = APPLIED.set(set.into_iter().map(|(k, _)| k.to_string()).collect());
}

/// The variables [`apply`] set (none when it did not run): the engine removes them from
/// the environment of provider processes and emitter commands, which are the user's own
/// programs and get the user's environment.
pub fn applied() -> Vec<String> {
    APPLIED.get().cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gl_is_disabled_unless_the_user_chose() {
        assert_eq!(wanted(|_| None), vec![(GDK_GL, "disable")]);
        let user = |value: &'static str| move |k: &str| (k == GDK_GL).then(|| value.into());
        assert!(wanted(user("always")).is_empty());
        assert!(wanted(user("")).is_empty(), "empty means GTK's default");
    }
}
