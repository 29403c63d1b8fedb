//! The Copilot CLI's `settings.json` feature flag for extensions
//! (`enabledFeatureFlags.EXTENSIONS`). Edits are textual, so every other setting keeps its
//! place, spacing and order: serde_json would sort the keys on rewrite, and users keep their
//! own settings in this file.

use serde_json::Value;

/// Where the flag stands in a settings text.
#[derive(Debug, PartialEq, Eq)]
pub enum Flag {
    /// `enabledFeatureFlags.EXTENSIONS` is `true`.
    On,
    /// `"experimental": true` turns every experimental feature on, extensions included.
    OnByExperimental,
    /// Not set, or `false`.
    Off,
}

/// Reads the flag; `Err` when the text is not a JSON object.
pub fn flag(text: &str) -> Result<Flag, String> {
    let v: Value = parse(text)?;
    if v["enabledFeatureFlags"]["EXTENSIONS"] == Value::Bool(true) {
        Ok(Flag::On)
    } else if v["experimental"] == Value::Bool(true) {
        Ok(Flag::OnByExperimental)
    } else {
        Ok(Flag::Off)
    }
}

fn parse(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let v: Value = serde_json::from_str(text).map_err(|e| format!("it is not valid JSON: {e}"))?;
    if !v.is_object() {
        return Err("it is not a JSON object".into());
    }
    Ok(v)
}

/// `text` with `enabledFeatureFlags.EXTENSIONS` set to `on`, all else unchanged.
pub fn set_flag(text: &str, on: bool) -> Result<String, String> {
    let v = parse(text)?;
    let value = if on { "true" } else { "false" };
    if text.trim().is_empty() {
        return Ok(format!(
            "{{\n  \"enabledFeatureFlags\": {{\n    \"EXTENSIONS\": {value}\n  }}\n}}\n"
        ));
    }
    let root = skip_ws(text, 0);
    match members(text, root)
        .into_iter()
        .find(|m| m.key == "enabledFeatureFlags")
    {
        Some(flags) if v["enabledFeatureFlags"].is_object() => {
            match members(text, flags.start)
                .into_iter()
                .find(|m| m.key == "EXTENSIONS")
            {
                Some(ext) => Ok(format!("{}{value}{}", &text[..ext.start], &text[ext.end..])),
                None => Ok(insert_first(text, flags.start, "EXTENSIONS", value)),
            }
        }
        Some(_) => Err("its 'enabledFeatureFlags' is not an object".into()),
        None => Ok(insert_first(
            text,
            root,
            "enabledFeatureFlags",
            &format!("{{ \"EXTENSIONS\": {value} }}"),
        )),
    }
}

/// Inserts `"key": value` as the first member of the object whose `{` is at `open`, on its
/// own line with the indentation of the existing first member.
fn insert_first(text: &str, open: usize, key: &str, value: &str) -> String {
    let after = open + 1;
    let first = skip_ws(text, after);
    let empty = text.as_bytes().get(first) == Some(&b'}');
    let gap = &text[after..first];
    let indent = gap.rsplit('\n').next().unwrap_or("");
    let (lead, sep) = if gap.contains('\n') {
        (format!("\n{indent}"), ",")
    } else {
        (" ".to_string(), ",")
    };
    let member = format!("{lead}\"{key}\": {value}");
    if empty {
        format!("{}{member}{}", &text[..after], &text[after..])
    } else {
        format!("{}{member}{sep}{}", &text[..after], &text[after..])
    }
}

struct Member {
    key: String,
    /// Byte range of the value.
    start: usize,
    end: usize,
}

/// The members of the (valid JSON) object whose `{` is at `open`.
fn members(text: &str, open: usize) -> Vec<Member> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = skip_ws(text, open + 1);
    while i < b.len() && b[i] == b'"' {
        let key_end = skip_value(text, i);
        let key: String = serde_json::from_str(&text[i..key_end]).unwrap_or_default();
        i = skip_ws(text, key_end);
        i = skip_ws(text, i + 1); // ':'
        let end = skip_value(text, i);
        out.push(Member { key, start: i, end });
        i = skip_ws(text, end);
        if i < b.len() && b[i] == b',' {
            i = skip_ws(text, i + 1);
        }
    }
    out
}

fn skip_ws(text: &str, mut i: usize) -> usize {
    let b = text.as_bytes();
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The end of the JSON value starting at `i` (the text is known to be valid JSON).
fn skip_value(text: &str, i: usize) -> usize {
    let b = text.as_bytes();
    match b[i] {
        b'"' => {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        }
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_value(text, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            j
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']') && !b[j].is_ascii_whitespace()
            {
                j += 1;
            }
            j
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_the_flag_keeping_other_settings_in_place() {
        let text = "{\n  \"theme\": \"dark\",\n  \"model\": \"x\"\n}\n";
        let out = set_flag(text, true).unwrap();
        assert_eq!(
            out,
            "{\n  \"enabledFeatureFlags\": { \"EXTENSIONS\": true },\n  \"theme\": \"dark\",\n  \"model\": \"x\"\n}\n"
        );
        assert_eq!(flag(&out).unwrap(), Flag::On);
    }

    #[test]
    fn flips_an_existing_flag_and_adds_to_existing_flags() {
        let text = r#"{"z": [1, {"a": "}"}], "enabledFeatureFlags": {"OTHER": true, "EXTENSIONS": false}}"#;
        let on = set_flag(text, true).unwrap();
        assert_eq!(
            on,
            r#"{"z": [1, {"a": "}"}], "enabledFeatureFlags": {"OTHER": true, "EXTENSIONS": true}}"#
        );
        assert_eq!(set_flag(&on, false).unwrap(), text);
        let text = r#"{"enabledFeatureFlags": {}}"#;
        assert_eq!(
            set_flag(text, true).unwrap(),
            r#"{"enabledFeatureFlags": { "EXTENSIONS": true}}"#
        );
    }

    #[test]
    fn empty_or_missing_file_gets_a_fresh_object_and_bad_json_is_refused() {
        assert_eq!(flag(&set_flag("", true).unwrap()).unwrap(), Flag::On);
        assert_eq!(
            flag(r#"{"experimental": true}"#).unwrap(),
            Flag::OnByExperimental
        );
        assert!(set_flag("{ // comment\n}", true).is_err());
        assert!(set_flag("[]", true).is_err());
    }
}
