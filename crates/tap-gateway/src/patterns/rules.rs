//! Validation and compilation of `onPreToolUse` rules.

use crate::error::Error;
use regex::{Regex, RegexBuilder};
use std::sync::Arc;
use tap_protocol::limits::{
    HOOK_REGEX_SIZE_LIMIT, MAX_HOOK_PATTERN_BYTES, MAX_HOOK_RULES_PER_PROVIDER,
};
use tap_protocol::provider::{HookAction, HookRule};
use tap_protocol::ErrorCode;

/// A validated rule, ready to match.
#[derive(Debug)]
pub(crate) struct CompiledRule {
    /// Position in the provider's list (for messages).
    pub index: usize,
    pub tool: Option<String>,
    pub args: Option<Regex>,
    pub provider: Option<String>,
    /// `match.profile` and `match.client`: this gateway's extension to the spec's keys.
    pub profile: Option<String>,
    pub client: Option<String>,
    pub action: HookAction,
    pub reason: Option<String>,
    pub content: Option<String>,
    pub gate_id: Option<String>,
    pub fail_open: bool,
}

/// Who is asking: the session's profile and client, which `match.profile` and
/// `match.client` name.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Asker<'a> {
    /// The profile the session was opened with.
    pub profile: Option<&'a str>,
    /// The client the session is for (`HostEntry::client`).
    pub client: Option<&'a str>,
}

impl CompiledRule {
    /// Whether the rule applies to `tool` (owned by `provider`, if it is a provider's
    /// tool) with `args_json` (the compact JSON of the arguments) in a session of `asker`.
    /// Each key compares exactly, as `match.tool` does; a session without a profile is
    /// matched by no `match.profile`.
    pub fn matches(
        &self,
        tool: &str,
        provider: Option<&str>,
        args_json: &str,
        asker: Asker<'_>,
    ) -> bool {
        // An absent key matches anything; a present one only its exact value.
        let fits = |key: &Option<String>, have: Option<&str>| {
            key.as_deref().is_none_or(|k| have == Some(k))
        };
        if !fits(&self.tool, Some(tool))
            || !fits(&self.profile, asker.profile)
            || !fits(&self.client, asker.client)
        {
            return false;
        }
        if let Some(p) = &self.provider {
            if provider != Some(p.as_str()) {
                return false;
            }
        }
        self.args.as_ref().is_none_or(|re| re.is_match(args_json))
    }
}

/// Validates and compiles a provider's complete rule list. Errors name the offending rule.
pub(crate) fn compile(rules: &[HookRule]) -> Result<Arc<Vec<CompiledRule>>, Error> {
    if rules.len() > MAX_HOOK_RULES_PER_PROVIDER {
        return Err(Error::new(
            ErrorCode::PayloadTooLarge,
            format!(
                "{} hook rules; a provider may register at most {MAX_HOOK_RULES_PER_PROVIDER}",
                rules.len()
            ),
        ));
    }
    check_patterns(
        "the onPreToolUse rules' patterns",
        rules
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i, r.matcher.args.as_deref()?))),
    )?;
    rules
        .iter()
        .enumerate()
        .map(|(i, r)| compile_one(i, r))
        .collect::<Result<Vec<_>, _>>()
        .map(Arc::new)
}

/// Refuses a list of user patterns (`match.args`, `filter.set` rules) whose case folding
/// would cost too much to compile (`super::cost`), before any is compiled. Patterns over the
/// byte bound are skipped here: `compile_pattern` refuses them with a clearer error.
pub(crate) fn check_patterns<'a>(
    what: &str,
    patterns: impl Iterator<Item = (usize, &'a str)>,
) -> Result<(), Error> {
    let sized = patterns.filter(|(_, p)| p.len() <= MAX_HOOK_PATTERN_BYTES);
    crate::patterns::cost::check_list(what, sized, false)
}

/// Compiles one user pattern (`match.args`, `filter.set` rules) with the size bounds;
/// the error completes "'<field>' …".
pub(crate) fn compile_pattern(p: &str) -> Result<Regex, Error> {
    if p.len() > MAX_HOOK_PATTERN_BYTES {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            format!(
                "is {} bytes; patterns are limited to {MAX_HOOK_PATTERN_BYTES}",
                p.len()
            ),
        ));
    }
    RegexBuilder::new(p)
        .size_limit(HOOK_REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| Error::new(ErrorCode::InvalidJson, format!("is not a valid regex: {e}")))
}

fn compile_one(index: usize, r: &HookRule) -> Result<CompiledRule, Error> {
    let bad = |why: String| {
        Error::new(
            ErrorCode::InvalidJson,
            format!("onPreToolUse rule {index}: {why}"),
        )
    };
    let args = match &r.matcher.args {
        None => None,
        Some(p) => Some(compile_pattern(p).map_err(|why| bad(format!("'match.args' {why}")))?),
    };
    let non_empty = |v: &Option<String>| v.as_ref().filter(|s| !s.is_empty()).cloned();
    if r.action == HookAction::Context && non_empty(&r.content).is_none() {
        return Err(bad("a 'context' rule needs a non-empty 'content'".into()));
    }
    Ok(CompiledRule {
        index,
        tool: r.matcher.tool.clone(),
        args,
        provider: r.matcher.provider.clone(),
        profile: r.matcher.profile.clone(),
        client: r.matcher.client.clone(),
        action: r.action,
        reason: non_empty(&r.reason),
        content: non_empty(&r.content),
        gate_id: r.gate_id.clone(),
        fail_open: r.fail_open,
    })
}
