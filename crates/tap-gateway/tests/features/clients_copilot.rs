//! The Copilot CLI on the Clients page (docs/clients.md, "The panel"): `clients.*` install,
//! repair and remove tap's extension under the gateway's `COPILOT_HOME` (here a temporary
//! one, `GatewayConfig::client_dirs`), as `tap connect copilot` does: the profile written into
//! the extension, Copilot's extensions feature turned on and off again, a dry run's diff,
//! another's extension file refused and left alone.

use super::clients_control::{read, row, start, write};
use serde_json::json;
use std::path::PathBuf;
use tap_testkit::*;

const SETTINGS: &str = "{\n  \"model\": \"gpt-5\",\n  \"theme\": \"dark\"\n}\n";

struct Copilot {
    home: PathBuf,
}

impl Copilot {
    fn file(&self) -> PathBuf {
        self.home.join("extensions/tap/extension.mjs")
    }
    fn settings(&self) -> PathBuf {
        self.home.join("settings.json")
    }
}

fn copilot(user: &std::path::Path) -> Copilot {
    let c = Copilot {
        home: user.join(".copilot"),
    };
    write(&c.settings(), SETTINGS);
    c
}

/// Every file under `dir`, for "nothing else was written".
fn files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn copilot_connects_with_a_profile_and_disconnects_to_its_settings_bytes() {
    // No `tap` program: the extension launches none, so Copilot connects without one.
    let h = start(false).await;
    let cp = copilot(&h.user);
    let (mut c, _) = Control::authed(&h.gw).await;
    let list = c.ok("clients.list", json!({})).await;
    let row0 = row(&list, "copilot");
    assert_eq!(row0["state"], "installed", "{row0}");
    assert_eq!(row0["editable"], true);
    assert_eq!(row0["file"], cp.file().display().to_string());
    assert_eq!(row0["command"], "tap connect copilot");

    let dry = c
        .ok(
            "clients.connect",
            json!({"client": "copilot", "profile": "review", "dryRun": true}),
        )
        .await;
    assert_eq!(dry["written"], false);
    let diff = dry["diff"].as_str().unwrap();
    assert!(
        diff.contains("+// tap-gateway copilot extension")
            && diff.contains("+const INSTALLED_PROFILE = \"review\";"),
        "{diff}"
    );
    assert!(
        diff.contains("+  \"enabledFeatureFlags\": { \"EXTENSIONS\": true },"),
        "{diff}"
    );
    assert!(!cp.file().exists(), "a dry run writes nothing");
    assert_eq!(read(&cp.settings()), SETTINGS);

    let done = c
        .ok(
            "clients.connect",
            json!({"client": "copilot", "profile": "review"}),
        )
        .await;
    assert_eq!(done["written"], true, "{done}");
    assert_eq!(done["client"]["state"], "connected", "{done}");
    assert_eq!(done["client"]["profile"], "review", "{done}");
    let ext = read(&cp.file());
    assert!(
        ext.starts_with("// tap-gateway copilot extension "),
        "{}",
        &ext[..80]
    );
    assert!(ext.contains("\nconst INSTALLED_PROFILE = \"review\";\n"));
    let settings: serde_json::Value = serde_json::from_str(&read(&cp.settings())).unwrap();
    assert_eq!(settings["enabledFeatureFlags"]["EXTENSIONS"], true);
    assert_eq!(settings["theme"], "dark");

    // Again: nothing to change. Another profile: the one line.
    let again = c
        .ok(
            "clients.connect",
            json!({"client": "copilot", "profile": "review"}),
        )
        .await;
    assert_eq!(
        (&again["written"], &again["diff"]),
        (&json!(false), &json!(""))
    );
    let other = c
        .ok(
            "clients.connect",
            json!({"client": "copilot", "dryRun": true}),
        )
        .await;
    let changed: Vec<&str> = other["diff"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect();
    assert_eq!(
        changed,
        [
            "-const INSTALLED_PROFILE = \"review\";",
            "+const INSTALLED_PROFILE = null;"
        ]
    );

    let dry = c
        .ok(
            "clients.disconnect",
            json!({"client": "copilot", "dryRun": true}),
        )
        .await;
    let diff = dry["diff"].as_str().unwrap();
    assert!(diff.contains("-// tap-gateway copilot extension"), "{diff}");
    assert!(
        diff.contains("+  \"enabledFeatureFlags\": { \"EXTENSIONS\": false },"),
        "{diff}"
    );
    assert!(cp.file().exists());
    let done = c
        .ok("clients.disconnect", json!({"client": "copilot"}))
        .await;
    assert_eq!(done["written"], true, "{done}");
    assert_eq!(done["client"]["state"], "installed", "{done}");
    assert!(done["client"].get("profile").is_none(), "{done}");
    assert!(!cp.file().exists());
    assert!(
        !cp.home.join("extensions/tap").exists(),
        "its directory too"
    );
    // The flag is off again; every other setting kept its place.
    assert_eq!(
        read(&cp.settings()),
        "{\n  \"enabledFeatureFlags\": { \"EXTENSIONS\": false },\n  \"model\": \"gpt-5\",\n  \"theme\": \"dark\"\n}\n"
    );
    let none = c
        .ok("clients.disconnect", json!({"client": "copilot"}))
        .await;
    assert_eq!(
        (&none["written"], &none["diff"]),
        (&json!(false), &json!(""))
    );
}

#[tokio::test]
async fn an_older_taps_extension_is_drifted_and_repaired() {
    let h = start(true).await;
    let cp = copilot(&h.user);
    write(
        &cp.file(),
        "// tap-gateway copilot extension 0.0.1\nconst INSTALLED_PROFILE = \"review\";\n",
    );
    let (mut c, _) = Control::authed(&h.gw).await;
    let list = c.ok("clients.list", json!({})).await;
    let r = row(&list, "copilot");
    assert_eq!(r["state"], "drifted", "{r}");
    assert_eq!(r["detail"], "its extension is tap 0.0.1's");
    assert_eq!(r["profile"], "review");
    let done = c
        .ok(
            "clients.connect",
            json!({"client": "copilot", "profile": "review"}),
        )
        .await;
    assert_eq!(done["client"]["state"], "connected", "{done}");
    assert!(!read(&cp.file()).starts_with("// tap-gateway copilot extension 0.0.1\n"));
}

#[tokio::test]
async fn anothers_extension_file_and_bad_input_are_refused_and_nothing_is_written() {
    let h = start(true).await;
    let cp = copilot(&h.user);
    let theirs = "// my own Copilot extension\nexport default {};\n";
    write(&cp.file(), theirs);
    let before = files(&cp.home);
    let (mut c, _) = Control::authed(&h.gw).await;
    let list = c.ok("clients.list", json!({})).await;
    let r = row(&list, "copilot");
    assert_eq!(r["state"], "installed", "{r}");
    assert_eq!(r["detail"], "an extension tap did not write is in the way");
    for dry_run in [true, false] {
        let e = c
            .err(
                "clients.connect",
                json!({"client": "copilot", "dryRun": dry_run}),
                "CONFLICT",
            )
            .await;
        let msg = e["message"].as_str().unwrap();
        assert!(
            msg.contains("was not written by tap") && msg.contains("tap install copilot --force"),
            "{msg}"
        );
        c.err(
            "clients.disconnect",
            json!({"client": "copilot", "dryRun": dry_run}),
            "CONFLICT",
        )
        .await;
    }
    assert_eq!(read(&cp.file()), theirs);

    // A profile that does not exist, and settings that are not JSON tap can edit.
    std::fs::remove_file(cp.file()).unwrap();
    c.err(
        "clients.connect",
        json!({"client": "copilot", "profile": "nope"}),
        "NOT_FOUND",
    )
    .await;
    write(&cp.settings(), "{ // a comment\n}\n");
    let e = c
        .err(
            "clients.connect",
            json!({"client": "copilot"}),
            "INVALID_JSON",
        )
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("nothing was written"),
        "{e}"
    );
    assert!(!cp.file().exists());
    assert_eq!(read(&cp.settings()), "{ // a comment\n}\n");
    assert_eq!(files(&cp.home), [cp.settings()], "was {before:?}");
}
