//! A provider's tool list with each tool's `parameters` compiled once (at `hello` and
//! `tools.update`), and the check of a call's `args` against it before dispatch: a call
//! the schema refuses never reaches the provider and ends `INVALID_JSON` naming the
//! failing path (decision 34).
//!
//! Cost: compiling is bounded by `MAX_TOOL_SCHEMA_BYTES` per schema and the message cap; patterns use the linear-time
//! `regex` engine with `SCHEMA_REGEX_SIZE_LIMIT`, so neither compiling nor matching a hostile
//! pattern can run away. Remote `$ref`s are never fetched (no resolver is built in): a schema
//! that needs one does not compile. An empty schema (`{}`) accepts everything and is not
//! compiled at all; a call to such a tool costs nothing here. One that says only "an
//! object" (MCP's usual `{"type": "object", "properties": {}}` for a tool without
//! parameters) shares one compiled validator with every other such tool: compiled, it held
//! about 750 bytes a tool (heaptrack, docs/performance.md run 25).

use crate::error::Error;
use crate::limits::{MAX_ARGS_ERROR_CHARS, SCHEMA_REGEX_SIZE_LIMIT};
use crate::text::cut;
use jsonschema::{PatternOptions, Validator};
use std::ops::Deref;
use std::sync::{Arc, OnceLock};
use tap_protocol::limits::MAX_TOOL_SCHEMA_BYTES;
use tap_protocol::provider::ToolDef;
use tap_protocol::{ErrorCode, Json};

/// A refusal: the spec's code and a readable reason.
type Invalid = Error;

/// A compiled `parameters` schema; `None` for one that accepts everything.
pub(crate) type Schema = Option<Arc<Validator>>;

/// A provider's tools, each with its compiled schema. Reads as `[Arc<ToolDef>]`: each
/// definition is stored once, and a session's tool map and the holders of a tool share it
/// (a rebuild on every bind and update copies pointers, not schemas).
#[derive(Default)]
pub(crate) struct ToolList {
    defs: Vec<Arc<ToolDef>>,
    schemas: Vec<Schema>,
}

impl std::fmt::Debug for ToolList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.defs.iter().map(|d| &d.name))
            .finish()
    }
}

impl Deref for ToolList {
    type Target = [Arc<ToolDef>];
    fn deref(&self) -> &[Arc<ToolDef>] {
        &self.defs
    }
}

impl ToolList {
    /// Compiles every schema of `defs`, reusing the compiled schema of a tool in one of
    /// `compiled` with the same name and the same `parameters` (a reconnect, a
    /// `tools.update` that keeps tools). Errors name the tool and why its schema does not
    /// compile.
    pub fn build(
        defs: Vec<impl Into<Arc<ToolDef>>>,
        compiled: &[&ToolList],
    ) -> Result<Self, Invalid> {
        let defs: Vec<Arc<ToolDef>> = defs.into_iter().map(Into::into).collect();
        let schemas = defs
            .iter()
            .map(|d| match reuse(d, compiled) {
                Some(schema) => Ok(schema),
                None => compile(d),
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { defs, schemas })
    }

    /// Each tool with its compiled schema.
    pub fn with_schemas(&self) -> impl Iterator<Item = (&Arc<ToolDef>, &Schema)> {
        self.defs.iter().zip(&self.schemas)
    }
}

/// A compiled schema of the same tool in `compiled`: the same definition (a kept tool) or
/// one with the same name and parameters.
fn reuse(def: &Arc<ToolDef>, compiled: &[&ToolList]) -> Option<Schema> {
    compiled.iter().find_map(|list| {
        list.with_schemas()
            .find(|(d, _)| {
                Arc::ptr_eq(d, def) || (d.name == def.name && d.parameters == def.parameters)
            })
            .map(|(_, s)| s.clone())
    })
}

fn compile(def: &ToolDef) -> Result<Schema, Invalid> {
    if def.parameters.as_str() == "{}" {
        return Ok(None);
    }
    let size = def.parameters.as_str().len();
    if size > MAX_TOOL_SCHEMA_BYTES {
        return Err(Error::new(
            ErrorCode::PayloadTooLarge,
            format!(
                "Tool '{}': 'parameters' is {size} bytes; a tool's schema may be at most {MAX_TOOL_SCHEMA_BYTES}",
                def.name
            ),
        ));
    }
    // The tree lives only while the schema compiles; the definition keeps the text.
    let parameters = def.parameters.to_value();
    if only_an_object(&parameters) {
        return Ok(Some(any_object()));
    }
    jsonschema::options()
        .with_pattern_options(PatternOptions::regex().size_limit(SCHEMA_REGEX_SIZE_LIMIT))
        .build(&parameters)
        .map(|v| Some(Arc::new(v)))
        .map_err(|e| {
            Error::new(
                ErrorCode::InvalidJson,
                cut(
                    &format!(
                        "Tool '{}': 'parameters' is not a JSON Schema this gateway can use: {e}",
                        def.name
                    ),
                    MAX_ARGS_ERROR_CHARS,
                ),
            )
        })
}

/// Whether `parameters` says nothing but "an object": `type` "object", and at most an
/// empty `properties`, an empty `required`, a `title` and a `description` (annotations).
fn only_an_object(parameters: &Json) -> bool {
    let Some(o) = parameters.as_object() else {
        return false;
    };
    o.get("type").and_then(Json::as_str) == Some("object")
        && o.iter().all(|(k, v)| match k.as_str() {
            "type" => true,
            "properties" => v.as_object().is_some_and(|m| m.is_empty()),
            "required" => v.as_array().is_some_and(|a| a.is_empty()),
            "title" | "description" => v.is_string(),
            _ => false,
        })
}

/// `{"type": "object"}` compiled once, for every tool whose schema says only that.
fn any_object() -> Arc<Validator> {
    static ANY_OBJECT: OnceLock<Arc<Validator>> = OnceLock::new();
    ANY_OBJECT
        .get_or_init(|| {
            let schema = serde_json::json!({"type": "object"});
            Arc::new(jsonschema::validator_for(&schema).expect("a valid schema"))
        })
        .clone()
}

/// Checks a call's `args` against `schema`: the first failure, with its JSON pointer.
pub(crate) fn check(tool: &str, schema: &Schema, args: &Json) -> Result<(), Error> {
    let Some(v) = schema else { return Ok(()) };
    v.validate(args).map_err(|e| {
        let path = e.instance_path().to_string();
        let at = if path.is_empty() { "/" } else { &path };
        Error::new(
            ErrorCode::InvalidJson,
            cut(
                &format!("Invalid arguments for tool '{tool}' at '{at}': {e}"),
                MAX_ARGS_ERROR_CHARS,
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(name: &str, parameters: Json) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: parameters.into(),
            timeout: None,
            ..Default::default()
        }
    }

    #[test]
    fn names_the_failing_path_and_bounds_the_message() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}},
                            "required": ["name"]});
        let list = ToolList::build(vec![def("greet", schema)], &[]).unwrap();
        let (_, s) = list.with_schemas().next().unwrap();
        let Error {
            code, message: msg, ..
        } = check("greet", s, &json!({"name": 42})).unwrap_err();
        assert_eq!(code, ErrorCode::InvalidJson);
        assert!(msg.contains("'/name'") && msg.contains("string"), "{msg}");
        let msg = check("greet", s, &json!({})).unwrap_err().message;
        assert!(msg.contains("at '/'") && msg.contains("name"), "{msg}");
        let msg = check("greet", s, &json!({"name": 1, "x": "y".repeat(5000)}))
            .unwrap_err()
            .message;
        assert!(msg.chars().count() <= MAX_ARGS_ERROR_CHARS + 1, "{msg}");
        assert!(check("greet", s, &json!({"name": "Ada"})).is_ok());
    }

    #[test]
    fn refuses_schemas_that_do_not_compile_and_never_fetches_remote_refs() {
        let bad = def("t", json!({"type": "nonsense"}));
        assert!(ToolList::build(vec![bad], &[]).is_err());
        let remote = def("t", json!({"$ref": "https://example.invalid/schema.json"}));
        let e = ToolList::build(vec![remote], &[]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidJson);
        let lookaround = def("t", json!({"properties": {"a": {"pattern": "(?=a)"}}}));
        assert!(ToolList::build(vec![lookaround], &[]).is_err());
    }

    #[test]
    fn reuses_a_compiled_schema_when_the_declaration_is_unchanged() {
        let p = json!({"type": "object"});
        let first = ToolList::build(vec![def("a", p.clone())], &[]).unwrap();
        let again = ToolList::build(vec![def("a", p)], &[&first]).unwrap();
        let (a, b) = (&first.schemas[0], &again.schemas[0]);
        assert!(Arc::ptr_eq(a.as_ref().unwrap(), b.as_ref().unwrap()));
    }

    #[test]
    fn schemas_that_only_say_an_object_share_one_validator_that_still_checks_it() {
        let only = [
            json!({"type": "object", "properties": {}}),
            json!({"type": "object", "required": [], "description": "no arguments"}),
            json!({"type": "object"}),
        ];
        let list = ToolList::build(
            only.iter()
                .enumerate()
                .map(|(i, p)| def(&format!("t{i}"), p.clone()))
                .collect(),
            &[],
        )
        .unwrap();
        let shared: Vec<_> = list.schemas.iter().map(|s| s.clone().unwrap()).collect();
        assert!(shared.iter().all(|s| Arc::ptr_eq(s, &shared[0])));
        let Error {
            code, message: msg, ..
        } = check("t0", &list.schemas[0], &json!(["not", "an", "object"])).unwrap_err();
        assert_eq!(code, ErrorCode::InvalidJson);
        assert!(msg.contains("object"), "{msg}");
        assert!(check("t0", &list.schemas[0], &json!({"any": 1})).is_ok());
        // Anything more is compiled on its own.
        let more = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let own = ToolList::build(vec![def("t", more)], &[]).unwrap();
        assert!(!Arc::ptr_eq(own.schemas[0].as_ref().unwrap(), &shared[0]));
        assert!(check("t", &own.schemas[0], &json!({"a": 1})).is_err());
    }

    #[test]
    fn refuses_a_schema_over_the_size_limit() {
        let big = json!({"description": "x".repeat(MAX_TOOL_SCHEMA_BYTES)});
        let e = ToolList::build(vec![def("t", big)], &[]).unwrap_err();
        assert_eq!(e.code, ErrorCode::PayloadTooLarge);
    }
}
