//! [`JsonText`]: a JSON value kept as its compact text instead of as a tree.
//!
//! A tool's `parameters` schema is read once (at `hello` or `tools.update`), compiled once,
//! and then only forwarded: to every session host's tool list, to MCP's `tools/list`, to the
//! playground. As a `serde_json::Value` tree it cost many times its text (each node is a
//! 72-byte `Value`, each object an index map with its own hash table;
//! docs/performance-log.md runs 25 and 34), it was held for as long as the provider stayed
//! connected, and it was copied node by node into every host's tool list. As text it costs
//! its length, a copy is a reference count, and writing it out is a `memcpy`. Whoever needs
//! the tree (the schema compiler, `target` injection) parses it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
// serde_json's own names, not the crate's aliases: lib.rs re-exports this file.
use serde_json::{Map, Value as Json};
use std::fmt;
use std::sync::Arc;

/// A JSON value held as compact text. Built from a [`Json`] value or read off the wire;
/// either way the text is valid JSON in compact form (no whitespace between tokens), with
/// object keys in the order they were written.
#[derive(Clone)]
pub struct JsonText(Arc<RawValue>);

impl JsonText {
    /// `{}`.
    pub fn empty_object() -> Self {
        Self::from(&Json::Object(Map::new()))
    }

    /// The compact text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// Whether the value is a JSON object (compact text starts with its brace).
    pub fn is_object(&self) -> bool {
        self.as_str().starts_with('{')
    }

    /// The value as a tree, for whoever needs to look inside it.
    pub fn to_value(&self) -> Json {
        // The text came from a `Value` (serialized by serde_json) or from a frame serde_json
        // parsed, so it parses again; the only way it could not is nesting deeper than
        // serde_json's recursion limit in a value built in code, never read off the wire.
        serde_json::from_str(self.as_str()).unwrap_or(Json::Null)
    }
}

impl From<&Json> for JsonText {
    fn from(value: &Json) -> Self {
        // Serializing a `Value` cannot fail: its keys are strings and its numbers finite.
        let raw =
            serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::NULL.to_owned());
        Self(Arc::from(raw))
    }
}

impl From<Json> for JsonText {
    fn from(value: Json) -> Self {
        Self::from(&value)
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.as_str() == other.as_str()
    }
}

impl Eq for JsonText {}

impl PartialEq<Json> for JsonText {
    fn eq(&self, other: &Json) -> bool {
        self.to_value() == *other
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonText {
    /// Through a `Value`, not straight into a `RawValue`: the messages that carry a
    /// `JsonText` are internally tagged enums, which serde buffers before it knows the
    /// variant, and a `RawValue` cannot be read from that buffer. The tree lives only until
    /// it is written out as text.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Json::deserialize(deserializer).map(|v| Self::from(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_compact_and_keeps_key_order() {
        let t: JsonText = serde_json::from_str(r#"{ "z": 1, "a": [ true, null ] }"#).unwrap();
        assert_eq!(t.as_str(), r#"{"z":1,"a":[true,null]}"#);
        assert_eq!(serde_json::to_string(&t).unwrap(), t.as_str());
        assert!(t.is_object());
        assert_eq!(t.to_value(), json!({"z": 1, "a": [true, null]}));
    }

    #[test]
    fn reads_inside_an_internally_tagged_enum() {
        #[derive(Deserialize)]
        #[serde(tag = "type")]
        enum M {
            #[serde(rename = "x")]
            X { p: JsonText },
        }
        let M::X { p } = serde_json::from_str(r#"{"type":"x","p":{"b":2,"a":1}}"#).unwrap();
        assert_eq!(p.as_str(), r#"{"b":2,"a":1}"#);
    }

    #[test]
    fn a_non_object_is_told_apart() {
        assert!(!JsonText::from(json!("s")).is_object());
        assert!(!JsonText::from(json!([{}])).is_object());
        assert!(JsonText::empty_object().is_object());
    }

    #[test]
    fn equal_texts_are_equal_values() {
        let a = JsonText::from(json!({"type": "object"}));
        assert_eq!(a, JsonText::from(json!({"type": "object"})));
        assert_ne!(a, JsonText::from(json!({"type": "string"})));
        assert_eq!(a, json!({"type": "object"}));
    }
}
