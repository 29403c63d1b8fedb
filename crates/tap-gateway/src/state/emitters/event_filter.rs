//! The EventFilter of an emitter: ordered rules `{match, outcome}`, each `match` a
//! case-insensitive, unanchored regex (size-bounded, linear time); the first match decides,
//! no match (or no rules) keeps the line.
//!
//! Config accepts both forms, `"eventFilter": [ … ]` and `"eventFilter": {"rules": [ … ]}`,
//! and the reference's legacy `includePattern` / `excludePattern` / `notifyPattern`,
//! compiled in its order: exclude → drop, notify → inject, include → keep, then `.*` → drop.
//!
//! A run's lines are decided a read at a time ([`EventFilter::decide_all`]): a rule whose
//! regex cannot match across a line break is searched over the read's lines at once, in
//! multi-line mode, instead of once per line. Most lines match no rule, and one search
//! over a 64 KiB read skips them at the regex engine's literal-scan speed, where a search
//! per line pays the engine's per-search set-up for every line.

use crate::error::Error;
use crate::limits::{
    EMITTER_REGEX_SIZE_LIMIT, MAX_EMITTER_FILTER_BYTES, MAX_EMITTER_PATTERN_BYTES,
    MAX_EMITTER_RULES,
};
use crate::processes::command::Batch;
use regex::{Regex, RegexBuilder};
use regex_syntax::hir::{Class, Hir, HirKind, Look};
use serde_json::Value;
use tap_protocol::emitters::EmitterRule;
use tap_protocol::ledger::EventOutcome;
use tap_protocol::ErrorCode;

/// In [`EventFilter::decide_all`]'s answer: the line matched no rule.
pub(crate) const NO_RULE: u8 = u8::MAX;

// A rule's index must fit the answer's bytes, with `NO_RULE` to spare.
const _: () = assert!(MAX_EMITTER_RULES < NO_RULE as usize);

/// A compiled filter.
#[derive(Debug, Default)]
pub(crate) struct EventFilter {
    rules: Vec<Rule>,
    /// The rules as given, for listing.
    pub source: Vec<EmitterRule>,
}

#[derive(Debug)]
struct Rule {
    /// Matches one line.
    line: Regex,
    /// The same pattern in multi-line mode, when it cannot match a line break: it then
    /// matches within a line of many joined by `\n` exactly where `line` matches that line.
    lines: Option<Regex>,
    outcome: EventOutcome,
}

impl EventFilter {
    /// Compiles `rules`; a bad one is an error naming its index and the regex error.
    pub fn compile(rules: &[EmitterRule]) -> Result<Self, Error> {
        if rules.len() > MAX_EMITTER_RULES {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                format!(
                    "{} filter rules; an emitter's filter may have at most {MAX_EMITTER_RULES}",
                    rules.len()
                ),
            ));
        }
        if let Some((i, r)) = rules
            .iter()
            .enumerate()
            .find(|(_, r)| r.pattern.len() > MAX_EMITTER_PATTERN_BYTES)
        {
            return Err(Error::new(ErrorCode::InvalidJson, format!(
                "eventFilter rule {i}: the pattern is {} bytes; a pattern may have at most {MAX_EMITTER_PATTERN_BYTES}",
                r.pattern.len()
            )));
        }
        let total: usize = rules.iter().map(|r| r.pattern.len()).sum();
        if total > MAX_EMITTER_FILTER_BYTES {
            return Err(Error::new(ErrorCode::InvalidJson, format!(
                "the eventFilter's patterns are {total} bytes in all; a filter may have at most {MAX_EMITTER_FILTER_BYTES}"
            )));
        }
        crate::patterns::cost::check_list(
            "the eventFilter's patterns",
            rules.iter().map(|r| r.pattern.as_str()).enumerate(),
            true,
        )
        .map_err(|e| Error::invalid(e.message))?;
        let compiled = rules
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let line = build(&r.pattern, false).map_err(|e| {
                    Error::invalid(format!(
                        "eventFilter rule {i}: '{}' is not a valid regex: {e}",
                        r.pattern
                    ))
                })?;
                let lines = within_a_line(&r.pattern)
                    .then(|| build(&r.pattern, true).ok())
                    .flatten();
                Ok(Rule {
                    line,
                    lines,
                    outcome: r.outcome,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Self {
            rules: compiled,
            source: rules.to_vec(),
        })
    }

    /// The index of the rule that matched (none: kept) and the outcome.
    pub fn decide(&self, line: &str) -> (Option<usize>, EventOutcome) {
        match self.rules.iter().position(|r| r.line.is_match(line)) {
            Some(i) => (Some(i), self.rules[i].outcome),
            None => (None, EventOutcome::Keep),
        }
    }

    /// What [`Self::decide`] gives each line of `batch`, as `out[i]`: the rule's index, or
    /// [`NO_RULE`]. Rules are tried in order, each only on the lines no earlier rule took.
    pub fn decide_all(&self, batch: &Batch, out: &mut Vec<u8>) {
        out.clear();
        out.resize(batch.len(), NO_RULE);
        let mut open = batch.len();
        for (i, rule) in self.rules.iter().enumerate() {
            if open == 0 {
                break;
            }
            let i = i as u8;
            match &rule.lines {
                Some(re) => open -= search_lines(re, &rule.line, batch, i, out),
                None => {
                    for (line, decided) in batch.iter().zip(out.iter_mut()) {
                        if *decided == NO_RULE && rule.line.is_match(line) {
                            *decided = i;
                            open -= 1;
                        }
                    }
                }
            }
        }
    }

    /// The outcome of a rule index [`Self::decide_all`] gave.
    pub fn outcome(&self, rule: u8) -> EventOutcome {
        match self.rules.get(rule as usize) {
            Some(r) => r.outcome,
            None => EventOutcome::Keep,
        }
    }
}

fn build(pattern: &str, multi_line: bool) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .multi_line(multi_line)
        .size_limit(EMITTER_REGEX_SIZE_LIMIT)
        .build()
}

/// A whole-read search turns into a search per line once it has found a match in more
/// than one line in this many: past that, each match costs a search of its own anyway,
/// and a whole-read search costs more per call than one over a single line.
const DENSE_MATCHES: usize = 4;

/// Gives rule `rule` the lines of `batch` that `re` (multi-line) matches within and no
/// earlier rule took; how many it took. One search per matching line at most: after a
/// match the search goes on from the next line. When matches turn out dense, the rest of
/// the lines are tried one by one with `line_re`.
fn search_lines(re: &Regex, line_re: &Regex, batch: &Batch, rule: u8, out: &mut [u8]) -> usize {
    let (text, ends) = (batch.text(), batch.ends());
    let (mut line, mut taken, mut found, mut at) = (0, 0, 0, 0);
    while let Some(m) = re.find_at(text, at) {
        // `ends[line]` is where the line's text ends (its `\n`); a match, which holds no
        // `\n`, lies in the first line ending at or after its start.
        while line < ends.len() && ends[line] < m.start() {
            line += 1;
        }
        let Some(&end) = ends.get(line) else { break };
        if out[line] == NO_RULE {
            out[line] = rule;
            taken += 1;
        }
        found += 1;
        line += 1;
        at = end + 1;
        if at >= text.len() {
            break;
        }
        if line >= 64 && found * DENSE_MATCHES > line {
            for (l, decided) in batch.iter().zip(out.iter_mut()).skip(line) {
                if *decided == NO_RULE && line_re.is_match(l) {
                    *decided = rule;
                    taken += 1;
                }
            }
            break;
        }
    }
    taken
}

/// Whether every match of `pattern` (case-insensitive, multi-line) lies within one line,
/// with the same anchors there as in that line alone: it matches no `\n`, and looks only
/// at line starts and ends (`^`, `$`) and word boundaries (a `\n` is not a word
/// character, like a text's edge). `\A`, `\z` and CRLF anchors, or a class or literal
/// holding `\n` (`(?s).`, `\s`, `[^a]`), make a rule go line by line instead.
///
/// Parsed case-sensitively, though the rule matches case-insensitively: no codepoint folds
/// to or from `\n`, so the answer is the same, and the parse folds nothing (a rule's
/// translations are what its compile costs, `crate::patterns::cost`).
fn within_a_line(pattern: &str) -> bool {
    let parsed = regex_syntax::ParserBuilder::new()
        .multi_line(true)
        .build()
        .parse(pattern);
    parsed.is_ok_and(|hir| stays_in_line(&hir))
}

fn stays_in_line(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Empty => true,
        HirKind::Literal(lit) => !lit.0.contains(&b'\n'),
        HirKind::Class(Class::Unicode(c)) => !c
            .ranges()
            .iter()
            .any(|r| r.start() <= '\n' && '\n' <= r.end()),
        HirKind::Class(Class::Bytes(c)) => !c
            .ranges()
            .iter()
            .any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
        HirKind::Look(look) => matches!(
            look,
            Look::StartLF
                | Look::EndLF
                | Look::WordAscii
                | Look::WordAsciiNegate
                | Look::WordUnicode
                | Look::WordUnicodeNegate
                | Look::WordStartAscii
                | Look::WordEndAscii
                | Look::WordStartUnicode
                | Look::WordEndUnicode
                | Look::WordStartHalfAscii
                | Look::WordEndHalfAscii
                | Look::WordStartHalfUnicode
                | Look::WordEndHalfUnicode
        ),
        HirKind::Repetition(r) => stays_in_line(&r.sub),
        HirKind::Capture(c) => stays_in_line(&c.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().all(stays_in_line),
    }
}

/// The rules a config entry declares: `eventFilter` in either form, else the legacy
/// patterns, else none.
pub(crate) fn rules_of(entry: &serde_json::Map<String, Value>) -> Result<Vec<EmitterRule>, Error> {
    if let Some(f) = entry.get("eventFilter") {
        let list = match f {
            Value::Array(_) => f.clone(),
            Value::Object(o) => o.get("rules").cloned().unwrap_or(Value::Array(Vec::new())),
            Value::Null => Value::Array(Vec::new()),
            _ => {
                return Err(Error::new(
                    ErrorCode::InvalidJson,
                    "'eventFilter' must be a list of rules or {\"rules\": [...]}",
                ))
            }
        };
        return serde_json::from_value(list)
            .map_err(|e| Error::new(ErrorCode::InvalidJson, format!("'eventFilter': {e} (each rule is {{\"match\": REGEX, \"outcome\": drop|keep|surface|inject}})")));
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
    fn patterns_are_bounded_in_bytes_before_they_are_compiled() {
        let rule = |pattern: String| EmitterRule {
            pattern,
            outcome: Keep,
        };
        let at_limit = "[^a]".repeat(MAX_EMITTER_PATTERN_BYTES / 4);
        let e = EventFilter::compile(&[rule(format!("{at_limit}x"))]).unwrap_err();
        assert!(
            e.message
                .starts_with("eventFilter rule 0: the pattern is 4097 bytes"),
            "{e}"
        );
        // Each pattern within its bound, but five of them over the filter's.
        let five = vec![rule("a".repeat(MAX_EMITTER_PATTERN_BYTES)); 5];
        let e = EventFilter::compile(&five).unwrap_err();
        assert!(e.message.contains("20480 bytes in all"), "{e}");
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
        assert!(
            e.message.starts_with("eventFilter rule 1: '(unclosed'"),
            "{e}"
        );
        assert!(rules_of(
            json!({"eventFilter": [{"match": "x", "outcome": "shout"}]})
                .as_object()
                .unwrap()
        )
        .is_err());
    }

    /// `decide_all` over a read must give each line what `decide` gives it alone, for
    /// every kind of pattern: anchors, word boundaries, empty matches, classes that hold a
    /// line break (those go line by line), and rules that take lines before later ones.
    #[test]
    fn deciding_a_read_at_once_agrees_with_deciding_each_line() {
        let patterns = [
            "^9",
            "7$",
            "^1000$",
            ".",
            "",
            "x*",
            "$",
            "^",
            "^$",
            r"\bfoo\b",
            r"\Bo",
            r"o\B",
            r"\s",
            r"(?s).o",
            r"\Afoo",
            r"bar\z",
            r"[^a]",
            "é",
            "(?-m)^foo",
            "(?m)^bar$",
            "foo|^ba",
            r"\d{3}",
            "(?i)ERROR",
            r"(?u:\b)x",
            "a+$",
            r"\n",
            r"[\s\S]",
        ];
        let lines = [
            "foo", "bar", "foo bar", "error: x", "9 ends 7", "1000", "17", "x", "é", "o", "foobar",
            "ab", "  ", "bar foo", "999", "a", "aaa",
        ];
        // Past 64 lines a dense rule goes on line by line: the read repeats the lines so
        // both halves of that switch are checked.
        let lines: Vec<&str> = lines
            .iter()
            .copied()
            .cycle()
            .take(lines.len() * 5)
            .collect();
        let mut batch = Batch::default();
        for l in &lines {
            batch.push(l);
        }
        let mut out = Vec::new();
        for a in patterns {
            for b in patterns {
                let f = EventFilter::compile(&[
                    EmitterRule {
                        pattern: a.into(),
                        outcome: Drop,
                    },
                    EmitterRule {
                        pattern: b.into(),
                        outcome: Surface,
                    },
                ])
                .unwrap();
                f.decide_all(&batch, &mut out);
                for (line, &rule) in lines.iter().zip(&out) {
                    let want = f.decide(line);
                    let got = ((rule != NO_RULE).then_some(rule as usize), f.outcome(rule));
                    assert_eq!(got, want, "rules [{a:?}, {b:?}], line {line:?}");
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn case_folding_never_changes_whether_a_pattern_stays_in_a_line(
            tokens in proptest::collection::vec(proptest::sample::select(&[
                "a", "K", "k", "s", "\\n", "\\s", "\\S", "\\w", ".", "(?s)", "(?i)", "(?-i)",
                "[", "]", "[^", "\\x{0}-\\x{10FFFF}", "\\x{9}-\\x{D}", "\\pL", "\\P{Lu}",
                "^", "$", "\\b", "(", ")", "|", "*", "&&", "--", "\\x{212A}", "\\x{17F}",
            ][..]), 1..10)
        ) {
            let p: String = tokens.concat();
            let folded = regex_syntax::ParserBuilder::new()
                .case_insensitive(true)
                .multi_line(true)
                .build()
                .parse(&p)
                .is_ok_and(|hir| stays_in_line(&hir));
            proptest::prop_assert_eq!(within_a_line(&p), folded, "{}", p);
        }
    }

    #[test]
    fn only_patterns_that_stay_in_a_line_search_a_read_at_once() {
        for p in ["^9", "7$", r"\bx", "a.b", "[a-z]+", ""] {
            assert!(within_a_line(p), "{p}");
        }
        for p in [
            r"\s", "(?s).", r"\A", r"\z", "[^a]", r"\n", "(?-m)^x", "(?R)$",
        ] {
            assert!(!within_a_line(p), "{p}");
        }
    }
}
