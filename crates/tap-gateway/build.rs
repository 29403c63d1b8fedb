//! With the `embedded-panel` feature: builds the control panel (`ui/`) when `ui/dist` is
//! missing or older than its sources, then writes `$OUT_DIR/panel_files.rs`, the list of
//! `dist/index.html` and `dist/assets/**` as `include_bytes!`, which
//! `config/embedded_panel.rs` includes. Without the feature it does nothing.
//!
//! A fresh `ui/dist` costs no process and no network: only mtimes are compared. Building
//! runs `npm install` (only without `ui/node_modules`) and `npm run build` in `ui/`; when
//! `npm` is not there the build fails with a message saying what to install.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

/// What `npm run build` reads, relative to `ui/`: a change to any of these (the newest
/// mtime, recursively for directories) makes `ui/dist` stale.
const UI_INPUTS: &[&str] = &[
    "src",
    "index.html",
    "package.json",
    "package-lock.json",
    "vite.config.ts",
    "tsconfig.json",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_EMBEDDED_PANEL").is_none() {
        return;
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let ui = manifest.join("../../ui");
    let ui = ui.canonicalize().unwrap_or(ui);
    if !ui.join("package.json").is_file() {
        fail(&format!(
            "the `embedded-panel` feature needs the panel's sources in {} (this crate is built \
             from the Tap Gateway source tree)",
            ui.display()
        ));
    }
    for input in UI_INPUTS {
        println!("cargo:rerun-if-changed={}", ui.join(input).display());
    }
    let dist = ui.join("dist");
    // Also when the panel is rebuilt by hand: the file list may change.
    println!("cargo:rerun-if-changed={}", dist.display());

    if let Some(why) = stale(&ui, &dist) {
        build_panel(&ui, &why);
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("panel_files.rs"), file_list(&dist))
        .unwrap_or_else(|e| fail(&format!("cannot write panel_files.rs: {e}")));
}

/// Why `dist` must be (re)built, or `None` when it is newer than every input.
fn stale(ui: &Path, dist: &Path) -> Option<String> {
    let built = match mtime(&dist.join("index.html")) {
        Some(t) => t,
        None => return Some(format!("{} is not built", dist.display())),
    };
    let newest = UI_INPUTS
        .iter()
        .filter_map(|i| newest_mtime(&ui.join(i)))
        .max()?;
    (newest > built).then(|| format!("{} is older than its sources", dist.display()))
}

fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The newest mtime of `path` and, for a directory, of everything under it.
fn newest_mtime(path: &Path) -> Option<SystemTime> {
    let own = mtime(path)?;
    let Ok(entries) = std::fs::read_dir(path) else {
        return Some(own);
    };
    entries
        .flatten()
        .filter_map(|e| newest_mtime(&e.path()))
        .chain([own])
        .max()
}

/// `npm install` (when `node_modules` is missing) and `npm run build` in `ui/`. Their
/// output goes to this script's stderr, which cargo shows when the build fails.
fn build_panel(ui: &Path, why: &str) {
    let npm = if cfg!(windows) { "npm.cmd" } else { "npm" };
    println!("cargo:warning=building the panel: {why}; running `npm run build` in ui/");
    let mut steps: Vec<&[&str]> = Vec::new();
    if !ui.join("node_modules").is_dir() {
        steps.push(&["install", "--no-audit", "--no-fund"]);
    }
    steps.push(&["run", "build"]);
    for args in steps {
        let status = Command::new(npm)
            .args(args)
            .current_dir(ui)
            .stdin(Stdio::null())
            // npm's progress output would otherwise go to cargo's captured stdout, where
            // `cargo:` lines are parsed.
            .stdout(Stdio::from(std::io::stderr()))
            .status();
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => fail(&format!(
                "`npm {}` in {} failed ({s}); its output is above",
                args.join(" "),
                ui.display()
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => fail(&format!(
                "{why}, and `npm` was not found to build it. Install Node.js 20 or newer \
                 (with npm), or build the panel elsewhere and copy it to ui/dist \
                 (`npm install && npm run build` in ui/)"
            )),
            Err(e) => fail(&format!("cannot run `npm`: {e}")),
        }
    }
}

/// The Rust expression `&[("index.html", include_bytes!("/abs/…")), ("assets/…", …)]`:
/// `index.html` and everything under `assets/`, which is all the gateway serves.
fn file_list(dist: &Path) -> String {
    let mut files = Vec::new();
    files.push("index.html".to_string());
    collect(&dist.join("assets"), "assets", &mut files);
    files.sort();
    let mut code = String::from("&[\n");
    for rel in files {
        let abs = dist.join(&rel);
        let abs = abs
            .canonicalize()
            .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", abs.display())));
        let abs = abs.to_str().unwrap_or_else(|| {
            fail(&format!("the path {} is not UTF-8", abs.display()));
        });
        writeln!(code, "    ({rel:?}, include_bytes!({abs:?})),").expect("to a String");
    }
    code.push(']');
    code
}

/// Every regular file under `dir`, as `prefix/relative/path` with `/` separators.
fn collect(dir: &Path, prefix: &str, files: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            fail(&format!("{} is not UTF-8", entry.path().display()));
        };
        let rel = format!("{prefix}/{name}");
        let path = entry.path();
        if path.is_dir() {
            collect(&path, &rel, files);
        } else if path.is_file() {
            files.push(rel);
        }
    }
}

/// Ends the build with `message` (cargo prints a failed build script's stderr).
fn fail(message: &str) -> ! {
    eprintln!("error: cannot embed the Tap panel: {message}");
    std::process::exit(1);
}
