//! Every limit in one place (issue 35): the wire limits in `tap_protocol::limits`, the
//! engine's in `src/limits.rs`, each listed in `docs/architecture.md`'s table ("Where each
//! limit is enforced"), and none defined anywhere else in `src/`.

use crate::scan;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn manifest_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The two limits modules, from `crates/tap-gateway`.
const MODULES: [&str; 2] = ["../tap-protocol/src/limits.rs", "src/limits.rs"];

/// Names a limit is spelled with: a bound (`MAX_`, `MIN_`), a default, or what it bounds
/// (a size, a time, a count kept, a queue, a rate).
const PREFIXES: &[&str] = &["MAX_", "MIN_", "DEFAULT_"];
const SUFFIXES: &[&str] = &[
    "_ATTEMPTS",
    "_BACKOFF",
    "_BATCH",
    "_BUFFER",
    "_BURST",
    "_BYTES",
    "_CAP",
    "_CAPACITY",
    "_CHARS",
    "_DEADLINE",
    "_DEBOUNCE",
    "_EVERY",
    "_GRACE",
    "_INTERVAL",
    "_KEPT",
    "_KIB",
    "_LEN",
    "_LIMIT",
    "_LINES",
    "_MIB",
    "_QUEUE",
    "_QUEUED",
    "_RETENTION",
    "_ROWS",
    "_TIMEOUT",
    "_TTL",
    "_WAIT",
    "_WINDOW",
];

/// Constants outside the limits modules that the naming rule would take for limits, and
/// why they are not.
const NOT_LIMITS: &[(&str, &str)] = &[
    (
        "logs/redact.rs MIN_SECRET_LEN",
        "which runs of characters look like a secret: bounds nothing",
    ),
    (
        "fuzzing.rs SETTLE",
        "the fuzz harness's sleep, longer than every timer of its gateway",
    ),
    (
        "logs/mod.rs DEFAULT_CAPACITY",
        "`LogBuffer::DEFAULT_CAPACITY`, the public name of `LOG_BUFFER_CAPACITY`",
    ),
    (
        "patterns/cost.rs MAPPINGS_PER_ENTRY",
        "a fact of Unicode's case folding table, in the cost model",
    ),
    (
        "mcp/watch.rs GRACE",
        "a test's resume grace, handed to the gateway's configuration",
    ),
];

/// Whether a constant named `name`, of type `ty`, is a limit by the rule above: its name,
/// or a `Duration` (every wait is a limit).
fn looks_like_a_limit(name: &str, ty: &str) -> bool {
    PREFIXES.iter().any(|p| name.starts_with(p))
        || SUFFIXES.iter().any(|s| name.ends_with(s))
        || name.contains("_PER_")
        || ty.trim_start_matches("std::time::").starts_with("Duration")
}

/// Every `const NAME: Type` of `code` (comments and literals already blanked), at any
/// depth and visibility: (name, type, line).
fn consts(code: &str) -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("const ") {
            let before = rest[..at].chars().last();
            rest = &rest[at + "const ".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = rest[name.len()..].trim_start();
            // `const fn` and `const { … }` have no `:` after a name.
            let (Some(ty), false) = (after.strip_prefix(':'), name.is_empty()) else {
                continue;
            };
            if name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                let ty = ty.split(['=', ';', '>', ')']).next().unwrap_or("").trim();
                out.push((name, ty.to_string(), i + 1));
            }
        }
    }
    out
}

/// The names the two limits modules define.
fn defined_limits() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for module in MODULES {
        let path = manifest_dir().join(module);
        let text = std::fs::read_to_string(&path).unwrap();
        let found = consts(&scan::code_only(&text));
        assert!(!found.is_empty(), "{} defines no limit", path.display());
        for (name, _, _) in found {
            assert!(
                names.insert(name.clone()),
                "{name} is defined in both limits modules"
            );
        }
    }
    names
}

/// The names in the first column of `docs/architecture.md`'s limits table.
fn listed_limits() -> BTreeSet<String> {
    let path = manifest_dir().join("../../docs/architecture.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let heading = "## Where each limit is enforced";
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("{} has no section `{heading}`", path.display()));
    let section = &doc[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut names = BTreeSet::new();
    for row in section.lines().filter(|l| l.starts_with("| `")) {
        let first = row[1..].split('|').next().unwrap_or("");
        for (k, part) in first.split('`').enumerate() {
            if k % 2 == 1 {
                names.insert(part.to_string());
            }
        }
    }
    names
}

#[test]
fn every_limit_is_in_the_docs_table() {
    let defined = defined_limits();
    let listed = listed_limits();
    let missing: Vec<_> = defined.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&defined).collect();
    assert!(
        missing.is_empty(),
        "limits missing from docs/architecture.md (\"Where each limit is enforced\"): {missing:?}"
    );
    assert!(
        stale.is_empty(),
        "docs/architecture.md's limits table names what neither limits module defines: {stale:?}"
    );
}

#[test]
fn no_limit_is_defined_outside_the_limits_modules() {
    let src = manifest_dir().join("src");
    let defined = defined_limits();
    let mut stray = Vec::new();
    let mut exempt_used = BTreeSet::new();
    for file in scan::rust_files(&src) {
        let rel = file.strip_prefix(&src).unwrap().display().to_string();
        if rel == "limits.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (name, ty, line) in consts(&scan::code_only(&text)) {
            let key = format!("{rel} {name}");
            if NOT_LIMITS.iter().any(|(k, _)| *k == key) {
                exempt_used.insert(key);
            } else if defined.contains(&name) || looks_like_a_limit(&name, &ty) {
                stray.push(format!("src/{rel}:{line}: const {name}: {ty}"));
            }
        }
    }
    assert!(
        stray.is_empty(),
        "limits belong in src/limits.rs (the engine's) or tap_protocol::limits (the wire's), \
         listed in docs/architecture.md; found elsewhere:\n{}",
        stray.join("\n")
    );
    let unused: Vec<_> = NOT_LIMITS
        .iter()
        .filter(|(k, _)| !exempt_used.contains(*k))
        .map(|(k, _)| k)
        .collect();
    assert!(
        unused.is_empty(),
        "NOT_LIMITS names constants that are gone: {unused:?}"
    );
}

#[test]
fn the_naming_rule_finds_what_it_should() {
    let code = "pub(crate) const MAX_X: usize = 1;\n    const WAIT_FOR: Duration = D;\nconst fn f() {}\nstruct H<const N: usize>;\nconst NAME: &str = \"x\";";
    let found = consts(code);
    let names: Vec<_> = found
        .iter()
        .map(|(n, t, _)| (n.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("MAX_X", "usize"),
            ("WAIT_FOR", "Duration"),
            ("N", "usize"),
            ("NAME", "&str")
        ]
    );
    assert!(looks_like_a_limit("MAX_X", "usize"));
    assert!(looks_like_a_limit("WAIT_FOR", "Duration"));
    assert!(looks_like_a_limit("LEDGER_QUEUE_BYTES", "usize"));
    assert!(!looks_like_a_limit("N", "usize"));
    assert!(!looks_like_a_limit("NAME", "&str"));
}
