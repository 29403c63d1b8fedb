//! `$TAP_HOME/policy.json`: the user's rules, read, checked (errors name the rule) and
//! indexed so that an allowed call pays for the rules that could apply to its tool only:
//! rules whose `match.tool` is a plain name sit in a map by that name; globbed ones in maps
//! by their literal prefix (the text before the first `*` or `?`), one map per prefix
//! length, so a call looks up its own name's prefixes of those lengths (a few lookups)
//! instead of walking every glob (a rule without a tool has the empty prefix).

use super::arg_patterns::ArgMatch;
use super::CallFacts;
use crate::error::Error;
use crate::limits::{
    DEFAULT_APPROVAL_TIMEOUT, MAX_APPROVAL_TIMEOUT, MAX_POLICY_FILE_BYTES, MAX_POLICY_RULES,
    MAX_RULE_ID_BYTES,
};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;
use tap_protocol::approvals::{PolicyFile, PolicyRule};
use tap_protocol::limits::MAX_HOOK_PATTERN_BYTES;
use tap_protocol::{ErrorCode, Json};

/// The file's name in `$TAP_HOME`.
pub const FILE_NAME: &str = "policy.json";

/// One checked rule.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub rule: PolicyRule,
    /// `match.tool` when it holds a glob character.
    glob: Option<String>,
    args: ArgMatch,
}

impl Compiled {
    fn applies(&self, c: &CallFacts<'_>) -> bool {
        let m = &self.rule.matcher;
        let fits = |key: &Option<String>, have: Option<&str>| {
            key.as_deref().is_none_or(|k| have == Some(k))
        };
        self.glob
            .as_deref()
            .is_none_or(|g| crate::profiles::glob::matches(g, c.tool))
            && fits(&m.provider, Some(c.provider))
            && fits(&m.session, Some(c.session))
            && fits(&m.client, c.client)
            && fits(&m.profile, c.profile)
            && (self.args.is_empty() || self.args.matches(c.args))
    }
}

/// The rules in force.
#[derive(Debug, Default)]
pub(crate) struct Policy {
    pub rules: Vec<Compiled>,
    /// Rules naming one tool exactly, by that name: indexes into `rules`, ascending.
    exact: HashMap<String, Vec<usize>>,
    /// Every other rule by the length of its literal prefix (ascending), then by that
    /// prefix: indexes into `rules`, ascending.
    globbed: Vec<(usize, HashMap<String, Vec<usize>>)>,
    pub timeout: Duration,
    /// Some rule has `match.client` or `match.profile`.
    pub uses_who: bool,
    /// Why the file could not be used: every call of a provider's tool is then asked
    /// (the user meant something by the file; failing open would ignore it).
    pub error: Option<String>,
}

impl Policy {
    /// The policy of a file that could not be used.
    pub fn broken(error: String) -> Self {
        Self {
            timeout: DEFAULT_APPROVAL_TIMEOUT,
            error: Some(error),
            ..Self::default()
        }
    }

    /// Checks and indexes a file's content.
    pub fn compile(file: PolicyFile) -> Result<Self, Error> {
        let bad = |m: String| Error::new(ErrorCode::InvalidJson, m);
        if file.rules.len() > MAX_POLICY_RULES {
            return Err(bad(format!(
                "{} rules; at most {MAX_POLICY_RULES}",
                file.rules.len()
            )));
        }
        let timeout = match file.approval_timeout_secs {
            None => DEFAULT_APPROVAL_TIMEOUT,
            Some(0) => return Err(bad("'approvalTimeoutSecs' must be at least 1".into())),
            Some(s) if Duration::from_secs(s) > MAX_APPROVAL_TIMEOUT => {
                return Err(bad(format!(
                    "'approvalTimeoutSecs' is {s}; at most {}",
                    MAX_APPROVAL_TIMEOUT.as_secs()
                )))
            }
            Some(s) => Duration::from_secs(s),
        };
        let mut policy = Policy {
            timeout,
            ..Policy::default()
        };
        let mut ids = std::collections::HashSet::new();
        for (i, rule) in file.rules.into_iter().enumerate() {
            let what = format!("rule {i} ('{}')", rule.id);
            let fail = |why: String| bad(format!("{what}: {why}"));
            if rule.id.is_empty() || rule.id.len() > MAX_RULE_ID_BYTES {
                return Err(fail(format!("'id' must be 1 to {MAX_RULE_ID_BYTES} bytes")));
            }
            if !ids.insert(rule.id.clone()) {
                return Err(fail("another rule has this 'id'".into()));
            }
            let tool = rule.matcher.tool.as_deref();
            if tool.is_some_and(|t| t.len() > MAX_HOOK_PATTERN_BYTES) {
                return Err(fail(format!(
                    "'match.tool' is longer than {MAX_HOOK_PATTERN_BYTES} bytes"
                )));
            }
            let args = ArgMatch::compile(&what, &rule.matcher.args)?;
            policy.uses_who |= rule.matcher.client.is_some() || rule.matcher.profile.is_some();
            let glob = tool.filter(|t| t.contains(['*', '?'])).map(str::to_string);
            match (tool, &glob) {
                (Some(t), None) => policy.exact.entry(t.to_string()).or_default().push(i),
                (t, _) => {
                    let t = t.unwrap_or("");
                    let prefix = &t[..t.find(['*', '?']).unwrap_or(t.len())];
                    let at = match policy.globbed.binary_search_by_key(&prefix.len(), |g| g.0) {
                        Ok(at) => at,
                        Err(at) => {
                            policy.globbed.insert(at, (prefix.len(), HashMap::new()));
                            at
                        }
                    };
                    let by_prefix = &mut policy.globbed[at].1;
                    by_prefix.entry(prefix.to_string()).or_default().push(i);
                }
            }
            policy.rules.push(Compiled { rule, glob, args });
        }
        Ok(policy)
    }

    /// The first rule, in file order, that applies to the call.
    pub fn first(&self, c: &CallFacts<'_>) -> Option<&Compiled> {
        // Rules that could apply: those of this exact name, and the globbed ones whose
        // literal prefix begins the name. No allocation when there are none.
        let mut candidates: Vec<usize> = Vec::new();
        if let Some(e) = self.exact.get(c.tool) {
            candidates.extend_from_slice(e);
        }
        for (len, by_prefix) in &self.globbed {
            if *len > c.tool.len() {
                break;
            }
            if !c.tool.is_char_boundary(*len) {
                continue;
            }
            if let Some(g) = by_prefix.get(&c.tool[..*len]) {
                candidates.extend_from_slice(g);
            }
        }
        // File order decides.
        candidates.sort_unstable();
        candidates
            .into_iter()
            .map(|i| &self.rules[i])
            .find(|r| r.applies(c))
    }

    /// The file as it stands (for `policy.set` and `policy.remove` to change).
    pub fn file(&self, timeout_set: Option<u64>) -> PolicyFile {
        PolicyFile {
            rules: self.rules.iter().map(|r| r.rule.clone()).collect(),
            approval_timeout_secs: timeout_set,
        }
    }
}

/// Reads `policy.json` in `data_dir`: the policy and the timeout the file sets (absent: no
/// file, or no key). A missing file is no rules; one that cannot be used is
/// [`Policy::broken`], saying why.
pub(crate) fn read(data_dir: &Path) -> (Policy, Option<u64>) {
    let path = data_dir.join(FILE_NAME);
    match read_file(&path) {
        Ok(None) => (
            Policy {
                timeout: DEFAULT_APPROVAL_TIMEOUT,
                ..Policy::default()
            },
            None,
        ),
        Ok(Some(file)) => {
            let set = file.approval_timeout_secs;
            match Policy::compile(file) {
                Ok(p) => (p, set),
                Err(e) => (Policy::broken(format!("{}: {e}", path.display())), set),
            }
        }
        Err(e) => (Policy::broken(format!("{}: {e}", path.display())), None),
    }
}

fn read_file(path: &Path) -> Result<Option<PolicyFile>, String> {
    let text = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
        Ok(m) if m.len() > MAX_POLICY_FILE_BYTES => {
            return Err(format!(
                "{} bytes; the file is limited to {MAX_POLICY_FILE_BYTES}",
                m.len()
            ))
        }
        Ok(_) => std::fs::read_to_string(path).map_err(|e| e.to_string())?,
    };
    parse(&text).map(Some)
}

/// Parses the file's text; a rule that does not parse is named by its place and id.
pub(crate) fn parse(text: &str) -> Result<PolicyFile, String> {
    let doc: Json = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let Json::Object(mut top) = doc else {
        return Err("not a JSON object".into());
    };
    let rules = match top.remove("rules") {
        None => Vec::new(),
        Some(Json::Array(rules)) => rules,
        Some(_) => return Err("'rules' is not a list".into()),
    };
    let mut parsed = Vec::with_capacity(rules.len().min(MAX_POLICY_RULES));
    for (i, r) in rules.into_iter().enumerate() {
        let id = r.get("id").and_then(Json::as_str).unwrap_or("").to_string();
        let rule: PolicyRule =
            serde_json::from_value(r).map_err(|e| format!("rule {i} ('{id}'): {e}"))?;
        parsed.push(rule);
    }
    let mut file: PolicyFile =
        serde_json::from_value(Json::Object(top)).map_err(|e| format!("{e}"))?;
    file.rules = parsed;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn facts<'a>(tool: &'a str, args: &'a Json) -> CallFacts<'a> {
        CallFacts {
            tool,
            provider: "p",
            session: "s1",
            client: Some("claude-code"),
            profile: None,
            args,
            destructive: false,
        }
    }

    #[test]
    fn the_first_rule_in_file_order_decides_across_exact_and_globbed() {
        let file = parse(
            &json!({"rules": [
                {"id": "a", "match": {"tool": "gh__*"}, "action": "ask"},
                {"id": "b", "match": {"tool": "gh__read"}, "action": "allow"},
                {"id": "c", "match": {"tool": "x", "client": "cursor"}, "action": "deny"},
                {"id": "d", "match": {"tool": "x", "args": [{"pointer": "/p", "regex": "^/etc"}]}, "action": "deny"},
            ]})
            .to_string(),
        )
        .unwrap();
        let p = Policy::compile(file).unwrap();
        let none = json!({});
        assert_eq!(p.first(&facts("gh__read", &none)).unwrap().rule.id, "a");
        assert!(p.first(&facts("x", &none)).is_none());
        let etc = json!({"p": "/etc/passwd"});
        assert_eq!(p.first(&facts("x", &etc)).unwrap().rule.id, "d");
    }

    #[test]
    fn globs_are_found_by_their_literal_prefix_whatever_its_length() {
        let file = parse(
            &json!({"rules": [
                {"id": "srv1", "match": {"tool": "srv1__*"}, "action": "ask"},
                {"id": "srv10", "match": {"tool": "srv10__*"}, "action": "deny"},
                {"id": "del", "match": {"tool": "*__delete?"}, "action": "deny"},
                {"id": "é", "match": {"tool": "é*"}, "action": "deny"},
                {"id": "all", "match": {"client": "claude-code"}, "action": "allow"},
            ]})
            .to_string(),
        )
        .unwrap();
        let p = Policy::compile(file).unwrap();
        let none = json!({});
        let id = |tool: &str| p.first(&facts(tool, &none)).map(|r| r.rule.id.clone());
        assert_eq!(id("srv1__x").as_deref(), Some("srv1"));
        assert_eq!(id("srv10__x").as_deref(), Some("srv10"));
        assert_eq!(id("srv2__deletes").as_deref(), Some("del"));
        assert_eq!(id("éa").as_deref(), Some("é"));
        // A multi-byte name shorter than a prefix, or cut inside a char: no panic.
        assert_eq!(id("ü").as_deref(), Some("all"));
        assert_eq!(id("srv1_").as_deref(), Some("all"));
    }

    #[test]
    fn bad_files_name_the_rule() {
        let e =
            parse(r#"{"rules": [{"id": "ok", "action": "ask"}, {"id": "r2", "action": "maybe"}]}"#)
                .unwrap_err();
        assert!(e.starts_with("rule 1 ('r2'): unknown variant"), "{e}");
        let e = parse(r#"{"rules": [], "other": 1}"#).unwrap_err();
        assert!(e.contains("unknown field `other`"), "{e}");
        let dup =
            parse(r#"{"rules": [{"id": "a", "action": "ask"}, {"id": "a", "action": "deny"}]}"#)
                .unwrap();
        let e = Policy::compile(dup).unwrap_err();
        assert_eq!(e.message, "rule 1 ('a'): another rule has this 'id'");
        let e = Policy::compile(parse(r#"{"approvalTimeoutSecs": 0}"#).unwrap()).unwrap_err();
        assert!(e.message.contains("at least 1"));
    }
}
