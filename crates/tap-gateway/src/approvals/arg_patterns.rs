//! Argument patterns of rules and grants: a JSON pointer into the call's arguments and a
//! regex its value must match, compiled with the bounds of hook rules' patterns
//! (`crate::patterns::rules`: bytes, compiled size, case-folding cost).

use crate::error::Error;
use crate::limits::MAX_ARG_PATTERNS;
use regex::Regex;
use tap_protocol::approvals::ArgPattern;
use tap_protocol::{ErrorCode, Json};

/// Compiled patterns: every one must match.
#[derive(Debug, Clone, Default)]
pub(crate) struct ArgMatch(Vec<(String, Regex)>);

impl ArgMatch {
    /// Compiles `patterns`; errors complete "<what>: …".
    pub fn compile(what: &str, patterns: &[ArgPattern]) -> Result<Self, Error> {
        let bad = |why: String| Error::new(ErrorCode::InvalidJson, format!("{what}: {why}"));
        if patterns.len() > MAX_ARG_PATTERNS {
            return Err(bad(format!(
                "{} argument patterns; at most {MAX_ARG_PATTERNS}",
                patterns.len()
            )));
        }
        crate::patterns::rules::check_patterns(
            what,
            patterns
                .iter()
                .enumerate()
                .map(|(i, p)| (i, p.regex.as_str())),
        )?;
        let mut out = Vec::with_capacity(patterns.len());
        for (i, p) in patterns.iter().enumerate() {
            if !(p.pointer.is_empty() || p.pointer.starts_with('/')) {
                return Err(bad(format!(
                    "argument pattern {i}: pointer '{}' is not a JSON pointer (it starts with '/', or is \"\" for the whole arguments)",
                    p.pointer
                )));
            }
            let re = crate::patterns::rules::compile_pattern(&p.regex)
                .map_err(|e| bad(format!("argument pattern {i}: 'regex' {}", e.message)))?;
            out.push((p.pointer.clone(), re));
        }
        Ok(Self(out))
    }

    /// No patterns: matches any arguments.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether every pattern matches `args`: the value at its pointer, a string as it is
    /// and anything else as compact JSON. An absent value never matches.
    pub fn matches(&self, args: &Json) -> bool {
        self.0
            .iter()
            .all(|(pointer, re)| match args.pointer(pointer) {
                Some(Json::String(s)) => re.is_match(s),
                Some(v) => re.is_match(&v.to_string()),
                None => false,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pat(pointer: &str, regex: &str) -> ArgPattern {
        ArgPattern {
            pointer: pointer.into(),
            regex: regex.into(),
        }
    }

    #[test]
    fn pointers_strings_and_other_values() {
        let m = ArgMatch::compile("t", &[pat("/path", "^/tmp/"), pat("/n", "^4\\d$")]).unwrap();
        assert!(m.matches(&json!({"path": "/tmp/x", "n": 42})));
        assert!(!m.matches(&json!({"path": "/etc/x", "n": 42})));
        assert!(
            !m.matches(&json!({"path": "/tmp/x"})),
            "absent never matches"
        );
        assert!(ArgMatch::default().matches(&json!(null)));
    }

    #[test]
    fn hostile_patterns_are_refused_with_their_place() {
        let e = ArgMatch::compile("rule 'r'", &[pat("path", "x")]).unwrap_err();
        assert!(
            e.message
                .contains("rule 'r': argument pattern 0: pointer 'path'"),
            "{e}"
        );
        let e = ArgMatch::compile("rule 'r'", &[pat("/a", "(")]).unwrap_err();
        assert!(e.message.contains("not a valid regex"), "{e}");
        let huge = "a".repeat(100_000);
        let e = ArgMatch::compile("rule 'r'", &[pat("/a", &huge)]).unwrap_err();
        assert!(e.message.contains("patterns are limited to"), "{e}");
        let e = ArgMatch::compile("rule 'r'", &[pat("/a", "\\w{1000}\\w{1000}\\w{1000}")]);
        assert!(e.is_err());
        let many = vec![pat("/a", "x"); MAX_ARG_PATTERNS + 1];
        assert!(ArgMatch::compile("r", &many)
            .unwrap_err()
            .message
            .contains("at most"));
    }
}
