//! Reading module paths out of Rust source, enough for the fence: comments and literals
//! blanked, `mod name { … }` blocks tracked so `super::` resolves, `crate::{a, b::c}`
//! groups split. Not a parser: it errs towards finding an import, never towards missing one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The module path of a file relative to `src/` (`providers/registry.rs` →
/// `[providers, registry]`, `state/mod.rs` → `[state]`); `None` for `lib.rs`.
pub fn module_path(rel: &Path) -> Option<Vec<String>> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_str().expect("UTF-8 paths").to_string())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs").expect("a .rs file");
    if stem != "mod" {
        parts.push(stem.to_string());
    }
    (!parts.is_empty()).then_some(parts)
}

/// `text` with comments and the insides of string and char literals replaced by spaces, so
/// a path in a doc comment or a message is not an import. Lengths and newlines are kept.
pub fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' if !ident_byte(prev(b, i)) && raw_string_start(b, i).is_some() => {
                let (hashes, open) = raw_string_start(b, i).unwrap();
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let end = b[open + 1..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |p| open + 1 + p + close.len());
                blank(&mut out, open + 1, end.saturating_sub(close.len()));
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j.min(b.len()));
                i = j + 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\'', '\u{..}') or a lifetime ('a).
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|p| i + 2 + p)
                } else {
                    let ch_len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    (b.get(i + 1 + ch_len) == Some(&b'\'')).then_some(i + 1 + ch_len)
                };
                match end {
                    Some(end) => {
                        blank(&mut out, i + 1, end);
                        i = end + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("only ASCII was written over whole characters")
}

fn prev(b: &[u8], i: usize) -> u8 {
    if i == 0 {
        b' '
    } else {
        b[i - 1]
    }
}

fn ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// At `r"`, `r#"`, `r##"`…: the number of hashes and the index of the opening quote.
fn raw_string_start(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let mut j = i + 1;
    while b.get(j) == Some(&b'#') {
        j += 1;
    }
    (b.get(j) == Some(&b'"')).then_some((j - i - 1, j))
}

/// The first segment of every absolute module path `text` (the file of module `module`)
/// names: `crate::x…` gives `x`, `super::…` is resolved against the module (and the inline
/// `mod name { … }` blocks around it) and gives the room it lands in.
pub fn imported_roots(text: &str, module: &[String]) -> Vec<String> {
    let code = code_only(text);
    let b = code.as_bytes();
    let mut out = Vec::new();
    // Inline modules open around the cursor: (name, brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'{' {
            depth += 1;
            i += 1;
            continue;
        }
        if c == b'}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            i += 1;
            continue;
        }
        if !ident_byte(c) || ident_byte(prev(b, i)) {
            i += 1;
            continue;
        }
        let word_end = b[i..]
            .iter()
            .position(|&c| !ident_byte(c))
            .map_or(b.len(), |p| i + p);
        let word = &code[i..word_end];
        if word == "mod" {
            // `mod name {` opens an inline module; `mod name;` is a file.
            let rest = code[word_end..].trim_start();
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && rest[name.len()..].trim_start().starts_with('{') {
                inline.push((name, depth + 1));
            }
        } else if (word == "crate" || word == "super")
            && code[word_end..].starts_with("::")
            && prev(b, i) != b':'
        {
            let mut base: Vec<String> = if word == "crate" {
                Vec::new()
            } else {
                let mut here: Vec<String> = module.to_vec();
                here.extend(inline.iter().map(|(n, _)| n.clone()));
                here.pop();
                here
            };
            let mut rest = &code[word_end + 2..];
            while let Some(r) = rest.trim_start().strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            if let Some(first) = base.first() {
                out.push(first.clone());
            } else {
                out.extend(first_segments(rest));
            }
        }
        i = word_end;
    }
    out
}

/// The first segment of a path's tail (`x::y` → `x`), or of each member of a group
/// (`{a, b::c}` → `a`, `b`).
fn first_segments(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)];
    };
    let mut members = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (k, ch) in group.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' if depth == 0 => {
                members.push(ident(&group[start..k]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                members.push(ident(&group[start..k]));
                start = k + 1;
            }
            _ => {}
        }
    }
    members.retain(|m| !m.is_empty());
    members
}

/// What `lib.rs` re-exports at the crate root, by name → the room it comes from
/// (`pub use error::GatewayError;` → `GatewayError` → `error`), so `crate::GatewayError`
/// counts as an import of `error`.
pub fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let code = code_only(lib);
    let mut out = BTreeMap::new();
    for stmt in code.split(';') {
        let stmt = stmt.trim();
        let Some(path) = stmt.strip_prefix("pub use ") else {
            continue;
        };
        let path = path.trim();
        let room: String = path
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let names: Vec<String> = match path.find('{') {
            Some(open) => path[open + 1..path.rfind('}').unwrap_or(path.len())]
                .split(',')
                .map(|s| {
                    s.trim()
                        .rsplit(" as ")
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string()
                })
                .collect(),
            None => vec![path
                .rsplit("::")
                .next()
                .unwrap_or("")
                .rsplit(" as ")
                .next()
                .unwrap_or("")
                .trim()
                .to_string()],
        };
        for name in names.into_iter().filter(|n| !n.is_empty()) {
            out.insert(name, room.clone());
        }
    }
    out
}

#[test]
fn the_scanner_finds_what_it_should() {
    let m = |s: &str| s.split('/').map(String::from).collect::<Vec<_>>();
    let text = r#"
        use crate::{a::X, b, c::{d, e}};
        // use crate::commented;
        let s = "crate::in_a_string";
        let c = '"';
        fn f<'a>(x: &'a str) -> crate::f::G { super::sibling::h() }
        mod tests {
            use super::super::up;
            use super::*;
        }
    "#;
    let mut roots = imported_roots(text, &m("room/file"));
    roots.sort();
    // `super::sibling` from room/file is room::sibling: the same room. From the inline
    // `tests`, `super::super::up` is room::up: the same room too.
    assert_eq!(roots, ["a", "b", "c", "f", "room", "room", "room"]);
    assert_eq!(
        imported_roots("fn g() { super::other::x() }", &m("top")),
        ["other"]
    );
    let lib =
        "pub use auth::files::{read_secret_file, GatewayFiles};\npub use error::GatewayError;";
    let r = root_reexports(lib);
    assert_eq!(r["GatewayError"], "error");
    assert_eq!(r["GatewayFiles"], "auth");
}
