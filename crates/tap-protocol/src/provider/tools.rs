//! Tools: definitions, concurrency limits, calls, cancellation, progress and results.

use crate::{ErrorCode, Json, JsonText};
use serde::{Deserialize, Serialize};

/// A tool definition, as in `hello.tools` and `tools.update.tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Tool name, unique within the session.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments (an object schema; `{}` means "no arguments"), kept
    /// as text: it is compiled once and otherwise only forwarded.
    #[serde(default = "JsonText::empty_object")]
    pub parameters: JsonText,
    /// Per-call timeout in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// A human title (MCP's `title`). This and the fields below are additions to the spec
    /// (providers ignore unknown fields, the gateway accepts their absence): an MCP server's
    /// tool keeps them on its way to MCP clients, and any provider may declare them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// MCP tool annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
    /// `openWorldHint`, `title`), as the server gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<crate::JsonObject>,
    /// JSON Schema of the tool's structured result (MCP's `outputSchema`).
    #[serde(
        default,
        rename = "outputSchema",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_schema: Option<crate::JsonObject>,
    /// How the tool's `tool.result.data` is to be read: absent for any value, `"mcp"`
    /// when it is an MCP `CallToolResult` (`content`, `structuredContent`, `isError`),
    /// which MCP clients then receive unchanged.
    #[serde(
        default,
        rename = "resultFormat",
        skip_serializing_if = "Option::is_none"
    )]
    pub result_format: Option<ResultFormat>,
}

impl Default for ToolDef {
    fn default() -> Self {
        ToolDef {
            name: String::new(),
            description: String::new(),
            parameters: JsonText::empty_object(),
            timeout: None,
            title: None,
            annotations: None,
            output_schema: None,
            result_format: None,
        }
    }
}

/// `ToolDef.resultFormat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultFormat {
    /// `data` is an MCP `CallToolResult`.
    Mcp,
}

/// `hello.concurrency`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concurrency {
    /// Maximum concurrent in-flight calls.
    pub max: u32,
    /// What the limit applies to.
    #[serde(default)]
    pub scope: ConcurrencyScope,
}

/// The scope of a concurrency limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConcurrencyScope {
    /// Per `name` + `instance`.
    #[default]
    Instance,
    /// Across all instances of the provider.
    Provider,
    /// Per tool name.
    Tool,
}

/// `tools.update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsUpdate {
    /// Correlates the `ack` (required by v2; optional in the Core Profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Only this session (else every bound session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The new tool list (or the tools to add, with `remove`).
    #[serde(default)]
    pub tools: Vec<ToolDef>,
    /// Tool names to remove.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove: Option<Vec<String>>,
}

/// `tool.call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Globally unique call id.
    pub id: String,
    /// The calling session.
    pub session_id: String,
    /// Tool name.
    pub tool: String,
    /// Arguments.
    pub args: Json,
    /// W3C trace context of the gateway's span for this call (`00-<trace>-<span>-01`): a
    /// provider may continue the trace. An addition to the spec; providers ignore unknown
    /// fields, so every provider keeps working.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

/// `tool.cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCancel {
    /// The call id.
    pub id: String,
    /// The calling session.
    pub session_id: String,
    /// Why: `timeout`, `cancelled` (by the caller), `session ended`, `rebind`.
    pub reason: String,
}

/// `tool.progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolProgress {
    /// The `tool.call` id.
    pub id: String,
    /// Human-readable status.
    pub message: String,
}

/// `tool.result`. Exactly one of `data`, `error` or `file` should be present.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The `tool.call` id.
    pub id: String,
    /// Success payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Json>,
    /// Failure message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Failure code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    /// Whether the gateway may retry on another instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// A large result written to `persistDir`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileRef>,
}

/// `tool.result.file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileRef {
    /// Absolute path inside the provider's `persistDir`.
    pub path: String,
    /// MIME type of the file.
    pub mime_type: String,
    /// Size in bytes.
    pub size: u64,
    /// Seconds until the provider may delete it.
    pub ttl: u64,
}
