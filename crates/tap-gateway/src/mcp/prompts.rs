//! The gateway's own MCP prompts. `tap_context`: the ambient context the session's providers
//! ask to add to prompts (`hello.context`, `context.update`), after the user's text. MCP clients do not hand a server
//! their system-prompt sections, so section transforms (`prompt.apply`'s) have nowhere to
//! act here; what fits MCP is this: a prompt the user inserts into their conversation. Then
//! the agent skills (`super::skills`: `tap-goal`, `tap-loop`, `tap-monitor`,
//! `tap-orchestrate`), each the skill's text with the user's request after it.

use super::errors::gateway_error;
use crate::state::mcp_binding::Binding;
use crate::state::Core;
use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use rmcp::ErrorData as McpError;
use std::collections::BTreeMap;

pub(crate) const CONTEXT_PROMPT: &str = "tap_context";

pub(crate) fn list() -> Vec<Prompt> {
    let context = Prompt::new(
        CONTEXT_PROMPT,
        Some("Your prompt with the context this session's Tap providers add to prompts"),
        Some(vec![PromptArgument::new("prompt")
            .with_description("Your prompt; the providers' context follows it")
            .with_required(false)]),
    );
    let skills = super::skills::all().iter().map(|s| {
        Prompt::new(
            s.name,
            Some(s.description),
            Some(vec![PromptArgument::new(s.argument)
                .with_description(s.argument_description)
                .with_required(false)]),
        )
    });
    std::iter::once(context).chain(skills).collect()
}

pub(crate) async fn get(
    core: &Core,
    binding: &Binding,
    name: &str,
    arguments: Option<&rmcp::model::JsonObject>,
) -> Result<GetPromptResult, McpError> {
    if let Some(skill) = super::skills::find(name) {
        let request = arguments
            .and_then(|a| a.get(skill.argument))
            .and_then(|p| p.as_str());
        let mut result = GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            skill.text(request),
        )]);
        result.description = Some(skill.description.to_string());
        return Ok(result);
    }
    if name != CONTEXT_PROMPT {
        let skills: Vec<&str> = super::skills::all().iter().map(|s| s.name).collect();
        return Err(McpError::invalid_params(
            format!(
                "Unknown prompt '{name}'; this server has '{CONTEXT_PROMPT}' and the skills {}",
                skills.join(", ")
            ),
            None,
        ));
    }
    let prompt = arguments
        .and_then(|a| a.get("prompt"))
        .and_then(|p| p.as_str())
        .unwrap_or_default();
    let applied =
        crate::transforms::apply::apply_prompt(core, &binding.session_id, BTreeMap::new())
            .await
            .map_err(gateway_error)?;
    let text = std::iter::once(prompt)
        .chain(applied.context.iter().map(String::as_str))
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
    result.description = Some(format!(
        "{} context block(s) from the session's providers",
        applied.context.len()
    ));
    Ok(result)
}
