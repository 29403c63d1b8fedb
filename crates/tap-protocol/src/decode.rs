use crate::ErrorCode;
use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// Why a frame could not become a typed message.
#[derive(Debug, Clone, PartialEq)]
pub enum DecodeError {
    /// Not JSON, not an object, or no string `type`.
    InvalidJson(String),
    /// A `type` this protocol does not have. The connection stays open.
    UnknownType(String),
    /// A known `type` whose fields are missing or mistyped.
    InvalidMessage {
        /// The message's `type`.
        type_name: String,
        /// What is wrong with it.
        detail: String,
    },
}

impl DecodeError {
    /// The error code the spec asks for.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::UnknownType(_) => ErrorCode::UnknownType,
            Self::InvalidJson(_) | Self::InvalidMessage { .. } => ErrorCode::InvalidJson,
        }
    }

    /// A message a provider author can act on.
    pub fn message(&self) -> String {
        match self {
            Self::InvalidJson(d) => format!("Malformed message: {d}"),
            Self::UnknownType(t) => format!("Unknown message type '{t}'"),
            Self::InvalidMessage { type_name, detail } => {
                format!("Invalid '{type_name}' message: {detail}")
            }
        }
    }

    /// The `type` of the offending message, when it had one.
    pub fn type_name(&self) -> Option<&str> {
        match self {
            Self::InvalidJson(_) => None,
            Self::UnknownType(t) => Some(t),
            Self::InvalidMessage { type_name, .. } => Some(type_name),
        }
    }
}

/// A message enum tagged by `type` (declared with `wire_messages!`), which can also be read
/// straight from the fields that follow a leading `type`.
pub trait Tagged: DeserializeOwned {
    /// The variant whose wire name is `tag`, its payload read from `rest` (the map's other
    /// entries); `None` when `tag` is not one of this enum's.
    fn from_payload<'de, A: MapAccess<'de>>(tag: &str, rest: A) -> Result<Option<Self>, A::Error>;
}

/// Decodes one frame into `T`, one of the tagged message enums, whose known tags are `types`.
///
/// The fast path is a single typed parse. Only when it fails does the frame get parsed a
/// second time, loosely, to tell "not JSON" from "unknown type" from "bad fields".
///
/// A frame that starts `{"type":"` (every frame the gateway, the SDKs and the spec's examples
/// write) is read without serde's buffering of internally tagged enums, which copies every
/// field into a tree before the variant reads it and doubled the cost of a `tool.result`
/// (docs/performance.md run 30). It accepts exactly what the derived path does (a second
/// `type` is refused as a duplicate field), and a frame it refuses is decoded again the
/// derived way, so that errors say what they always said.
pub fn decode<T: Tagged>(frame: &[u8], types: &[&str]) -> Result<T, DecodeError> {
    match frame.starts_with(LEADING_TYPE) {
        true => match leading_type::<T>(frame) {
            Ok(msg) => Ok(msg),
            // The error is the derived path's: some of serde_json's own words for a field of
            // the wrong kind are vaguer ("expected value" for an enum given `null`).
            Err(_) => decode_derived(frame, types),
        },
        false => decode_derived(frame, types),
    }
}

/// [`decode`] through serde's derived path only: what a frame without a leading `type`
/// takes, and the reference the fast path is tested against (`tests/decode_fast.rs`).
pub fn decode_derived<T: DeserializeOwned>(frame: &[u8], types: &[&str]) -> Result<T, DecodeError> {
    serde_json::from_slice::<T>(frame).map_err(|e| classify(frame, types, e))
}

/// How a frame whose first key is `type` begins, byte for byte.
const LEADING_TYPE: &[u8] = br#"{"type":""#;

fn leading_type<T: Tagged>(frame: &[u8]) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(frame);
    let msg = de.deserialize_map(LeadingType(PhantomData::<T>))?;
    de.end()?;
    Ok(msg)
}

struct LeadingType<T>(PhantomData<T>);

impl<'de, T: Tagged> Visitor<'de> for LeadingType<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        // `decode` saw the key's bytes; read it anyway, so the map is where serde expects.
        let Some(Key(key)) = map.next_key::<Key>()? else {
            return Err(de::Error::missing_field("type"));
        };
        debug_assert_eq!(key, "type");
        let Key(tag) = map.next_value::<Key>()?;
        T::from_payload(&tag, NoSecondType(map))?
            .ok_or_else(|| de::Error::custom(format_args!("unknown variant `{tag}`")))
    }
}

/// A key or a tag as JSON has it: borrowed from the frame unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

/// The entries after the tag, as the variant's payload reads them: a second `type` is an
/// error, as it is for serde's own tagged enums (which would otherwise hand it to the
/// payload, where an unknown field is ignored).
struct NoSecondType<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for NoSecondType<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.0.next_key::<Key>()? {
            None => Ok(None),
            Some(Key(key)) if key == "type" => Err(de::Error::duplicate_field("type")),
            Some(Key(Cow::Borrowed(key))) => seed
                .deserialize(BorrowedStrDeserializer::new(key))
                .map(Some),
            Some(Key(Cow::Owned(key))) => seed.deserialize(StringDeserializer::new(key)).map(Some),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

fn classify(frame: &[u8], types: &[&str], typed_err: serde_json::Error) -> DecodeError {
    let value: serde_json::Value = match serde_json::from_slice(frame) {
        Ok(v) => v,
        Err(e) => return DecodeError::InvalidJson(e.to_string()),
    };
    let Some(obj) = value.as_object() else {
        return DecodeError::InvalidJson("expected a JSON object".into());
    };
    let Some(type_name) = obj.get("type").and_then(|t| t.as_str()) else {
        return DecodeError::InvalidJson("missing string field 'type'".into());
    };
    if !types.contains(&type_name) {
        return DecodeError::UnknownType(type_name.to_string());
    }
    DecodeError::InvalidMessage {
        type_name: type_name.to_string(),
        detail: strip_position(&typed_err.to_string()),
    }
}

/// serde_json appends "at line 1 column 57", which means nothing to the sender of a
/// one-line frame.
fn strip_position(s: &str) -> String {
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s.to_string(),
    }
}
