//! The one place a message enum's wire names are written.

/// Declares the message enum of one protocol direction from a single list of
/// `"wire.name" => Variant(Payload)` entries. From that list come the enum (serde tagged
/// by `type`, each variant renamed to its wire name), `TYPES` and `type_name()`.
///
/// Why: each name is needed three times (the serde rename, `TYPES` for [`crate::decode`],
/// `type_name()` for logs and `replyTo`), and copies written by hand drift apart. A name
/// missing from `TYPES` makes a valid message fail as `UNKNOWN_TYPE`; a wrong
/// `type_name()` puts the wrong `replyTo` on an error. Written once, they cannot disagree.
///
/// The caller writes the enum's docs and derives (they must include `Serialize` and
/// `Deserialize`, which the generated `#[serde(...)]` attributes need); every variant
/// holds exactly one payload, boxed where it is large.
macro_rules! wire_messages {
    (
        $(#[$enum_meta:meta])*
        $vis:vis enum $enum:ident {
            $(
                $(#[doc = $doc:literal])*
                $name:literal => $variant:ident($payload:ty),
            )*
        }
    ) => {
        $(#[$enum_meta])*
        #[serde(tag = "type")]
        $vis enum $enum {
            $(
                $(#[doc = $doc])*
                #[serde(rename = $name)]
                $variant($payload),
            )*
        }

        impl $enum {
            /// Every wire `type` of this enum, in declaration order.
            pub const TYPES: &'static [&'static str] = &[$($name),*];

            /// The wire `type` of this message.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => $name,)*
                }
            }
        }
    };
}

pub(crate) use wire_messages;
