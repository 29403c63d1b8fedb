//! The panel's TypeScript (`ui/src/generated/`) is generated from the control-plane types
//! in `tap_protocol::control` (ts-rs), and committed. This test renders every type again
//! and fails when a committed file differs, is missing, or is left over.
//!
//! Regenerate with:
//!
//! ```sh
//! TAP_UPDATE_TS=1 cargo test -p tap-protocol --test generated_typescript
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tap_protocol::control::{self, ClientFrame, ServerFrame};
use ts_rs::{Config, TypeVisitor, TS};

const REGENERATE: &str = "TAP_UPDATE_TS=1 cargo test -p tap-protocol --test generated_typescript";

/// The header of files written by this test rather than by ts-rs itself.
const NOTE: &str =
    "// Generated from crates/tap-protocol/src/control.rs by tests/generated_typescript.rs. Do not edit.\n";

fn generated_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/generated")
}

/// u64 fields (uptime, seq, revisions) are JSON numbers on the wire, never above 2^53.
fn config() -> Config {
    Config::new().with_large_int("number")
}

/// Every exported type reachable from the roots: relative path → (TS name, file text).
struct Collect<'a> {
    cfg: &'a Config,
    files: BTreeMap<PathBuf, (String, String)>,
}

impl TypeVisitor for Collect<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        let Some(path) = T::output_path() else { return };
        if self.files.contains_key(&path) {
            return;
        }
        let text = T::export_to_string(self.cfg)
            .unwrap_or_else(|e| panic!("cannot render {}: {e}", T::ident(self.cfg)));
        self.files.insert(path, (T::ident(self.cfg), text));
        T::visit_dependencies(self);
    }
}

/// An import path as ts-rs writes them: relative, without the extension.
fn import_path(path: &Path) -> String {
    let p = path.with_extension("");
    format!("./{}", p.to_string_lossy().replace('\\', "/"))
}

fn render() -> BTreeMap<PathBuf, String> {
    let cfg = config();
    let mut c = Collect {
        cfg: &cfg,
        files: BTreeMap::new(),
    };
    c.visit::<ClientFrame>();
    c.visit::<ServerFrame>();

    // ControlMethods.ts: method → {params, result}, the base of the panel's typed rpc().
    // Visiting the params and result types also exports those reachable only from here.
    let (decl, deps) = control::typescript_method_map(&cfg, &mut c);
    let mut imports = BTreeMap::new();
    for dep in deps {
        imports.insert(dep.ts_name.clone(), import_path(&dep.output_path));
    }
    let mut methods = String::from(NOTE);
    for (name, path) in &imports {
        methods.push_str(&format!("import type {{ {name} }} from \"{path}\";\n"));
    }
    methods.push_str("\n/** Every control-plane method: its params and its result. */\n");
    methods.push_str(&decl);
    methods.push_str(&format!(
        "\n/** Every method name, in declaration order. */\nexport const CONTROL_METHODS = {} as const;\n",
        serde_json::to_string(control::ControlCall::METHODS).unwrap()
    ));
    methods.push_str(&format!(
        "\n/** The control protocol version this gateway speaks. */\nexport const CONTROL_PROTOCOL_VERSION = {};\n",
        control::CONTROL_PROTOCOL_VERSION
    ));

    let mut files: BTreeMap<PathBuf, String> = c
        .files
        .iter()
        .map(|(p, (_, text))| (p.clone(), text.clone()))
        .collect();
    let mut index = String::from(NOTE);
    let names: BTreeSet<(&String, &PathBuf)> = c.files.iter().map(|(p, (n, _))| (n, p)).collect();
    for (name, path) in names {
        index.push_str(&format!(
            "export type {{ {name} }} from \"{}\";\n",
            import_path(path)
        ));
    }
    index.push_str(
        "export type { ControlMethods } from \"./ControlMethods\";\nexport { CONTROL_METHODS, CONTROL_PROTOCOL_VERSION } from \"./ControlMethods\";\n",
    );
    files.insert("ControlMethods.ts".into(), methods);
    files.insert("index.ts".into(), index);
    files.insert("masking.ts".into(), masking_ts());
    files
}

/// `masking.ts`: the approval prompts' masking patterns (`tap_protocol::masking`) as
/// `RegExp`s. Each pattern is written as a JSON string, which is a valid JavaScript string
/// literal with every backslash escaped.
fn masking_ts() -> String {
    use tap_protocol::masking;
    let regexp = |pattern: &str, ignore_case: bool| {
        let flags = if ignore_case { "i" } else { "" };
        format!(
            "new RegExp({}, {})",
            serde_json::to_string(pattern).unwrap(),
            serde_json::to_string(flags).unwrap()
        )
    };
    let mut out = String::from(
        "// Generated from crates/tap-protocol/src/masking.rs by tests/generated_typescript.rs. Do not edit.\n",
    );
    out.push_str(&format!(
        "\n/** A key whose value is a secret whatever it holds (matched on the key with every character\n * other than A-Z, a-z, 0-9 and _ read as _). */\nexport const SECRET_KEY = {};\n",
        regexp(masking::SECRET_KEY, true)
    ));
    out.push_str("\n/** Values that look like secrets whatever their key. */\nexport const SECRET_VALUE: readonly RegExp[] = [\n");
    for shape in masking::SECRET_SHAPES {
        out.push_str(&format!(
            "  {}, // {}\n",
            regexp(shape.pattern, shape.ignore_case),
            shape.what
        ));
    }
    out.push_str(&format!(
        "];\n\n/** What a masked value shows, before its length. */\nexport const MASK_PREFIX = {};\n",
        serde_json::to_string(masking::MASK_PREFIX).unwrap()
    ));
    out
}

fn committed(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let path = e.expect("read_dir entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn generated_typescript_is_up_to_date() {
    let dir = generated_dir();
    let want = render();
    let have = committed(&dir);
    if std::env::var_os("TAP_UPDATE_TS").is_some_and(|v| v == "1") {
        for path in have.keys().filter(|p| !want.contains_key(*p)) {
            std::fs::remove_file(dir.join(path)).unwrap();
        }
        for (path, text) in &want {
            let full = dir.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        return;
    }
    let mut problems = Vec::new();
    for (path, text) in &want {
        match have.get(path) {
            None => problems.push(format!("missing: {}", path.display())),
            Some(t) if t != text => problems.push(format!("stale: {}", path.display())),
            Some(_) => {}
        }
    }
    for path in have.keys().filter(|p| !want.contains_key(*p)) {
        problems.push(format!("not generated any more: {}", path.display()));
    }
    assert!(
        problems.is_empty(),
        "ui/src/generated/ does not match the Rust control-plane types:\n  {}\nRegenerate with:\n  {REGENERATE}\nand commit the result.",
        problems.join("\n  ")
    );
}

#[test]
fn method_map_lists_every_method() {
    let cfg = config();
    let mut c = Collect {
        cfg: &cfg,
        files: BTreeMap::new(),
    };
    let (decl, _) = control::typescript_method_map(&cfg, &mut c);
    for m in control::ControlCall::METHODS {
        assert!(
            decl.contains(&format!("{m:?}: {{ params: ")),
            "{m} missing in {decl}"
        );
    }
}

#[test]
fn u64_fields_are_numbers_not_bigint() {
    for (path, text) in render() {
        assert!(!text.contains("bigint"), "{} uses bigint", path.display());
    }
}
