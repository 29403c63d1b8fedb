//! The `tap` program that MCP clients' entries launch when the panel connects them
//! (`clients.connect`, `GatewayConfig::tap_program`): the desktop app is not it (it has no
//! `mcp` command). The .deb installs `/usr/bin/tap` beside `/usr/bin/tap-desktop`
//! (scripts/package-linux.sh), so the `tap` beside this program comes first, then `PATH`'s.
//! An AppImage's files live in a mount that changes at every start, so from an AppImage
//! only `PATH` counts: an entry must still work after the app has quit.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where to look: this program's path, whether it runs from an AppImage, and `PATH`.
pub fn locate(exe: &Path, appimage: bool, path: Option<OsString>) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if !appimage {
        let exe = std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
        if let Some(beside) = exe.parent().map(|d| d.join("tap")) {
            if runnable(&beside) {
                return Ok(beside);
            }
        }
    }
    if let Some(found) = path
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("tap"))
        .find(|p| runnable(p))
    {
        return Ok(found);
    }
    let beside = if appimage {
        "an AppImage's own tap moves at every start"
    } else {
        "none beside the desktop app"
    };
    Err(format!(
        "no `tap` command was found for clients to launch ({beside}, none on PATH): install \
         the tap package (its .deb puts tap in /usr/bin) or put tap on PATH, then restart the \
         app; `tap connect CLIENT` in a terminal does the same"
    ))
}

/// [`locate`] for this process.
pub fn locate_from_env() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    locate(
        &exe,
        std::env::var_os("APPIMAGE").is_some(),
        std::env::var_os("PATH"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn program(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn beside_the_app_then_path_then_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("usr/bin/tap-desktop");
        program(&app);
        let on_path = dir.path().join("bin/tap");
        program(&on_path);
        let path = Some(OsString::from(dir.path().join("bin")));
        assert_eq!(locate(&app, false, path.clone()).unwrap(), on_path);
        let beside = dir.path().join("usr/bin/tap");
        program(&beside);
        assert_eq!(
            locate(&app, false, path.clone()).unwrap(),
            std::fs::canonicalize(&beside).unwrap()
        );
        assert_eq!(locate(&app, true, path).unwrap(), on_path);
        let why = locate(&app, true, None).unwrap_err();
        assert!(why.contains("PATH") && why.contains("AppImage"), "{why}");
    }
}
