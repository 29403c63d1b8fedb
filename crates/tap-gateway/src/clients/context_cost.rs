//! What a tool's definition costs a client that lists it: its `tools/list` entry as MCP
//! clients receive it (`name`, `description`, `inputSchema`, `annotations`), as compact
//! JSON, in bytes and in tokens of OpenAI's `o200k_base` (GPT-4o and later; the `tiktoken-rs`
//! crate, with the BPE compiled in). Other models' tokenizers count differently; the figure
//! is for comparing tool sets, not for billing.

use crate::limits::MAX_COUNTED_TOOL_ENTRIES;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use tap_protocol::provider::ToolDef;

/// The tokenizer's name, as `profiles.list` reports it.
pub const TOKENIZER: &str = "o200k_base";

/// Token counts of entries already counted, by their text's hash: the panel asks for the
/// list again after each burst of status changes, and tools rarely change between two.
static COUNTED: Mutex<Option<HashMap<u64, u32>>> = Mutex::new(None);

/// (tokens, bytes) of `def`'s `tools/list` entry.
pub fn of(def: &ToolDef) -> (u32, u32) {
    let text = entry(def).to_string();
    let key = {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        h.finish()
    };
    if let Some(n) = COUNTED.lock().unwrap().as_ref().and_then(|m| m.get(&key)) {
        return (*n, text.len() as u32);
    }
    let n = tokens(&text);
    let mut counted = COUNTED.lock().unwrap();
    let map = counted.get_or_insert_with(HashMap::new);
    // Bounded: a gateway whose tools keep changing starts the memory over.
    if map.len() >= MAX_COUNTED_TOOL_ENTRIES {
        map.clear();
    }
    map.insert(key, n);
    (n, text.len() as u32)
}

/// Tokens of `text`.
pub fn tokens(text: &str) -> u32 {
    tiktoken_rs::o200k_base_singleton()
        .encode_with_special_tokens(text)
        .len() as u32
}

/// The entry a client receives for `def`.
fn entry(def: &ToolDef) -> Value {
    let mut entry = json!({
        "name": def.name,
        "description": def.description,
        "inputSchema": def.parameters,
    });
    if let Some(annotations) = def.annotations.as_ref() {
        entry["annotations"] = serde_json::to_value(annotations).unwrap_or(Value::Null);
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_tokenizer_on_a_fixed_definition() {
        // The figures an independent o200k_base implementation gives for the same text
        // (npm gpt-tokenizer 2, `encode` of `gpt-tokenizer/encoding/o200k_base`): 9 for the
        // sentence, 37 for the entry below.
        assert_eq!(tokens("Echoes the message back to the caller."), 9);
        let def: ToolDef = serde_json::from_value(json!({
            "name": "echo",
            "description": "Echoes the message back to the caller.",
            "parameters": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}
        }))
        .unwrap();
        let text = entry(&def).to_string();
        assert_eq!(
            text,
            r#"{"name":"echo","description":"Echoes the message back to the caller.","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}"#
        );
        assert_eq!(of(&def), (37, text.len() as u32));
        // Counted once, remembered: the same answer again.
        assert_eq!(of(&def), (37, text.len() as u32));
    }
}
