//! The fence: the engine's rooms import one way, as `table.rs` says, and
//! `docs/architecture.md` shows that table.
//!
//! Reads every `.rs` file under `src/`, finds each `crate::…` and `super::…` path outside
//! comments and string literals (grouped `use crate::{a, b}` included, `super::` resolved
//! through inline modules), and maps it to the room it reaches. `TAP_BLESS=1` rewrites the
//! generated part of `docs/architecture.md` instead of failing on it.
//!
//! `limits.rs`: every limit is in one of the two limits modules and in the docs' table.

mod limits;
mod scan;
mod table;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use table::{Layer, ROOMS};

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The rooms that exist on disk: every folder and `.rs` file of `src/` but the crate root.
fn rooms_on_disk() -> BTreeSet<String> {
    std::fs::read_dir(src_dir())
        .expect("src/ is readable")
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .into_string()
                .expect("UTF-8 names")
        })
        .filter_map(|n| match n.strip_suffix(".rs") {
            Some("lib") => None,
            Some(stem) => Some(stem.to_string()),
            None => Some(n),
        })
        .collect()
}

/// room → rooms it imports (outside itself), with one file that does, for messages.
fn actual_imports() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = src_dir();
    let rooms = rooms_on_disk();
    let root_items = scan::root_reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for file in scan::rust_files(&src) {
        let rel = file.strip_prefix(&src).unwrap().to_path_buf();
        let Some(module) = scan::module_path(&rel) else {
            continue; // lib.rs, the crate root, declares the rooms
        };
        let room = module[0].clone();
        let text = std::fs::read_to_string(&file).unwrap();
        for target in scan::imported_roots(&text, &module) {
            let target = root_items.get(&target).cloned().unwrap_or(target);
            if target != room && rooms.contains(&target) {
                out.entry(room.clone())
                    .or_default()
                    .entry(target)
                    .or_insert_with(|| rel.display().to_string());
            }
        }
    }
    out
}

#[test]
fn every_room_is_in_the_table_once() {
    let listed: Vec<&str> = ROOMS.iter().map(|r| r.name).collect();
    let unique: BTreeSet<&str> = listed.iter().copied().collect();
    assert_eq!(unique.len(), listed.len(), "a room is listed twice");
    let on_disk = rooms_on_disk();
    let listed: BTreeSet<String> = unique.iter().map(|s| s.to_string()).collect();
    let missing: Vec<_> = on_disk.difference(&listed).collect();
    let gone: Vec<_> = listed.difference(&on_disk).collect();
    assert!(
        missing.is_empty(),
        "rooms in src/ but not in tests/rooms/table.rs: {missing:?}"
    );
    assert!(
        gone.is_empty(),
        "rooms in tests/rooms/table.rs but not in src/: {gone:?}"
    );
}

#[test]
fn the_table_goes_one_way() {
    let position: BTreeMap<&str, (Layer, usize)> = ROOMS
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name, (r.layer, i)))
        .collect();
    let mut wrong = Vec::new();
    for room in ROOMS {
        for &to in room.imports {
            let Some(&(layer, index)) = position.get(to) else {
                wrong.push(format!("{} may import {to}, which is no room", room.name));
                continue;
            };
            let (own_layer, own_index) = position[room.name];
            // Below, or before it in its own layer: the table's order is a topological
            // order, so no loop can be written down.
            if layer > own_layer || (layer == own_layer && index >= own_index) {
                wrong.push(format!(
                    "{} ({:?}) may import {to} ({layer:?}), which does not stand below it",
                    room.name, own_layer
                ));
            }
        }
        let mut sorted = room.imports.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(
            sorted, room.imports,
            "{}: keep its imports sorted, once each",
            room.name
        );
    }
    assert!(
        wrong.is_empty(),
        "the table goes up or round:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_import_is_in_the_table_and_every_entry_is_used() {
    let actual = actual_imports();
    let mut unlisted = Vec::new();
    let mut unused = Vec::new();
    for room in ROOMS {
        let uses = actual.get(room.name).cloned().unwrap_or_default();
        for (to, file) in &uses {
            if !room.imports.contains(&to.as_str()) {
                unlisted.push(format!(
                    "{file} imports crate::{to}, which {} may not",
                    room.name
                ));
            }
        }
        for &to in room.imports {
            if !uses.contains_key(to) {
                unused.push(format!(
                    "{} may import {to} but nothing in it does",
                    room.name
                ));
            }
        }
    }
    assert!(
        unlisted.is_empty() && unused.is_empty(),
        "tests/rooms/table.rs and the code disagree (change the code, or the table with \
         a reason; a new import must not go up a layer):\n{}",
        unlisted
            .into_iter()
            .chain(unused)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

const BEGIN: &str = "<!-- rooms: generated from crates/tap-gateway/tests/rooms/table.rs; TAP_BLESS=1 cargo test -p tap-gateway --test rooms rewrites it -->";
const END: &str = "<!-- rooms: end -->";

/// The docs' room table: one section per layer, top layer first, as a reader walks down.
fn docs_table() -> String {
    let mut out = String::new();
    let mut layers: Vec<Layer> = ROOMS.iter().map(|r| r.layer).collect();
    layers.dedup();
    for layer in layers.into_iter().rev() {
        out.push_str(&format!(
            "\n**{}**\n\n| Room | What it holds | May import |\n|---|---|---|\n",
            layer.title()
        ));
        for room in ROOMS.iter().rev().filter(|r| r.layer == layer) {
            let imports = if room.imports.is_empty() {
                "nothing of the engine".to_string()
            } else {
                room.imports
                    .iter()
                    .map(|i| format!("`{i}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            out.push_str(&format!(
                "| `{}` | {} | {imports} |\n",
                room.name, room.about
            ));
        }
    }
    out
}

#[test]
fn architecture_doc_shows_the_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (Some(start), Some(end)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!(
            "{} has no generated room table (markers `{BEGIN}` … `{END}`)",
            path.display()
        );
    };
    let current = &doc[start + BEGIN.len()..end];
    let wanted = format!("{}\n", docs_table());
    if current == wanted {
        return;
    }
    if std::env::var_os("TAP_BLESS").is_some() {
        let new = format!("{}{BEGIN}{wanted}{}", &doc[..start], &doc[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    panic!(
        "docs/architecture.md's room table is stale: run `TAP_BLESS=1 cargo test -p tap-gateway --test rooms`"
    );
}

/// File names more than one room uses, each for the same role in parallel rooms. Any other
/// shared name hides what a file holds: name it after what it does.
const PARALLEL_NAMES: &[(&str, &str)] = &[
    (
        "api.rs",
        "a capability's commands for the façade: emitters, pairing, settings",
    ),
    (
        "auth.rs",
        "a protocol handler's authentication: host_protocol, provider_protocol",
    ),
    (
        "calls.rs",
        "an entry point's tool calls: host_protocol, mcp",
    ),
    (
        "config.rs",
        "a room's part of tap.config.json: emitters, project",
    ),
    (
        "file_result.rs",
        "file results on the provider's socket and in the call path: provider_protocol, tools",
    ),
    (
        "route.rs",
        "where something goes: an emitter's lines (emitters), a call (tools)",
    ),
];

#[test]
fn no_two_files_share_a_name_unless_parallel() {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let src = src_dir();
    for file in scan::rust_files(&src) {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        if name != "mod.rs" {
            let rel = file.strip_prefix(&src).unwrap().display().to_string();
            seen.entry(name).or_default().push(rel);
        }
    }
    let shared: Vec<String> = seen
        .into_iter()
        .filter(|(name, paths)| paths.len() > 1 && !PARALLEL_NAMES.iter().any(|(n, _)| n == name))
        .map(|(_, paths)| paths.join(", "))
        .collect();
    assert!(shared.is_empty(), "files that share a name: {shared:?}");
}
