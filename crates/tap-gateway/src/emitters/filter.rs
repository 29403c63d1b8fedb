//! The EventFilter of an emitter: ordered rules `{match, outcome}`, each `match` a
//! case-insensitive, unanchored regex (size-bounded, linear time); the first match decides,
//! no match (or no rules) keeps the line.
//!
//! Config accepts both forms, `"eventFilter": [ … ]` and `"eventFilter": {"rules": [ … ]}`,
//! and the reference's legacy `includePattern` / `excludePattern` / `notifyPattern`,
//! compiled in its order: exclude → drop, notify → inject, include → keep, then `.*` → drop.

use regex::{Regex, RegexBuilder};
use serde_json::Value;
use tap_protocol::emitters::EmitterRule;
use tap_protocol::ledger::EventOutcome;

/// Most rules in one filter.
pub(crate) const MAX_EMITTER_RULES: usize = 64;

/// A pattern's compiled size bound (the hook rules' bound).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A compiled filter.
#[derive(Debug, Default)]
pub(crate) struct EventFilter {
    rules: Vec<(Regex, EventOutcome)>,
    /// The rules as given, for listing.
    pub source: Vec<EmitterRule>,
}

impl EventFilter {
    /// Compiles `rules`; a bad one is an error naming its index and the regex error.
    pub fn compile(rules: &[EmitterRule]) -> Result<Self, String> {
        if rules.len() > MAX_EMITTER_RULES {
            return Err(format!(
                "{} filter rules; an emitter's filter may have at most {MAX_EMITTER_RULES}",
                rules.len()
            ));
        }
        let compiled = rules
            .iter()
            .enumerate()
            .map(|(i, r)| {
                RegexBuilder::new(&r.pattern)
                    .case_insensitive(true)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map(|re| (re, r.outcome))
                    .map_err(|e| {
                        format!(
                            "eventFilter rule {i}: '{}' is not a valid regex: {e}",
                            r.pattern
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            rules: compiled,
            source: rules.to_vec(),
        })
    }

    /// The index of the rule that matched (none: kept) and the outcome.
    pub fn decide(&self, line: &str) -> (Option<usize>, EventOutcome) {
        match self.rules.iter().position(|(re, _)| re.is_match(line)) {
            Some(i) => (Some(i), self.rules[i].1),
            None => (None, EventOutcome::Keep),
        }
    }
}

/// The rules a config entry declares: `eventFilter` in either form, else the legacy
/// patterns, else none.
pub(crate) fn rules_of(entry: &serde_json::Map<String, Value>) -> Result<Vec<EmitterRule>, String> {
    if let Some(f) = entry.get("eventFilter") {
        let list = match f {
            Value::Array(_) => f.clone(),
            Value::Object(o) => o.get("rules").cloned().unwrap_or(Value::Array(Vec::new())),
            Value::Null => Value::Array(Vec::new()),
            _ => return Err("'eventFilter' must be a list of rules or {\"rules\": [...]}".into()),
        };
        return serde_json::from_value(list)
            .map_err(|e| format!("'eventFilter': {e} (each rule is {{\"match\": REGEX, \"outcome\": drop|keep|surface|inject}})"));
    }
    let text = |k: &str| {
        entry
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let mut rules = Vec::new();
    let rule = |p: &str, outcome| EmitterRule {
        pattern: p.to_string(),
        outcome,
    };
    if let Some(p) = text("excludePattern") {
        rules.push(rule(p, EventOutcome::Drop));
    }
    if let Some(p) = text("notifyPattern") {
        rules.push(rule(p, EventOutcome::Inject));
    }
    if let Some(p) = text("includePattern") {
        rules.push(rule(p, EventOutcome::Keep));
        rules.push(rule(".*", EventOutcome::Drop));
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use EventOutcome::*;

    fn rules(v: Value) -> Vec<EmitterRule> {
        rules_of(v.as_object().unwrap()).unwrap()
    }

    #[test]
    fn first_match_wins_case_insensitively_and_no_match_keeps() {
        let f = EventFilter::compile(&rules(json!({"eventFilter": [
            {"match": "error", "outcome": "inject"},
            {"match": "warn|error", "outcome": "surface"},
            {"match": "^debug", "outcome": "drop"}]})))
        .unwrap();
        assert_eq!(f.decide("Build ERROR here"), (Some(0), Inject));
        assert_eq!(f.decide("a warning"), (Some(1), Surface));
        assert_eq!(f.decide("DEBUG x"), (Some(2), Drop));
        assert_eq!(f.decide("all good"), (None, Keep));
        assert_eq!(EventFilter::default().decide("x"), (None, Keep));
    }

    #[test]
    fn both_config_forms_and_the_legacy_patterns() {
        let list = json!([{"match": "x", "outcome": "drop"}]);
        assert_eq!(
            rules(json!({"eventFilter": list})),
            rules(json!({"eventFilter": {"rules": list}}))
        );
        let legacy = rules(
            json!({"includePattern": "PASS|FAIL", "excludePattern": "noise", "notifyPattern": "FAIL"}),
        );
        let f = EventFilter::compile(&legacy).unwrap();
        assert_eq!(f.decide("noise FAIL").1, Drop, "exclude first");
        assert_eq!(f.decide("FAIL 3").1, Inject);
        assert_eq!(f.decide("PASS 4").1, Keep);
        assert_eq!(
            f.decide("other").1,
            Drop,
            "include means everything else goes"
        );
    }

    #[test]
    fn a_bad_regex_names_its_rule() {
        let e = EventFilter::compile(&rules(json!({"eventFilter": [
            {"match": "ok", "outcome": "keep"}, {"match": "(unclosed", "outcome": "drop"}]})))
        .unwrap_err();
        assert!(e.starts_with("eventFilter rule 1: '(unclosed'"), "{e}");
        assert!(rules_of(
            json!({"eventFilter": [{"match": "x", "outcome": "shout"}]})
                .as_object()
                .unwrap()
        )
        .is_err());
    }
}
