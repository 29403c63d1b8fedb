//! `tap-bench --quick --only s10` end to end, against the `tap` of the same target
//! directory (which `cargo test --workspace` builds): every path answers, and the
//! signed-in path sends its token on every call (the bench fails the scenario otherwise).

use std::path::PathBuf;
use std::process::Command;

/// `target/<profile>/tap`, next to the `tap-bench` this test runs; `None` when it was not
/// built.
fn tap_binary() -> Option<PathBuf> {
    let bench = PathBuf::from(env!("CARGO_BIN_EXE_tap-bench"));
    let tap = bench.parent()?.join("tap");
    tap.is_file().then_some(tap)
}

#[test]
fn s10_quick_runs_and_the_signed_in_path_carries_the_bearer() {
    let Some(tap) = tap_binary() else {
        eprintln!("skipped: no tap binary next to tap-bench (cargo build -p tap-cli)");
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_tap-bench"))
        .args(["--quick", "--only", "s10", "--tap"])
        .arg(&tap)
        .output()
        .expect("tap-bench runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for row in [
        "S10 remote MCP server (direct, HTTP)",
        "S10 remote MCP server (through the gateway)",
        "S10 remote MCP server (gateway, signed in)",
        "S10 remote MCP server (signed in / no auth)",
    ] {
        assert!(stdout.contains(row), "no {row} in\n{stdout}");
    }
    // Quick counts: 50 warm-up, 500 sequential and 1,000 in flight, all with the bearer.
    let bearer = stdout
        .lines()
        .find(|l| l.contains("calls with the bearer / 401s"))
        .unwrap_or_else(|| panic!("no bearer row in\n{stdout}"));
    assert!(bearer.contains("1550 / 0"), "{bearer}");
}
