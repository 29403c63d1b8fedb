//! `filter.set`: gateway-side EventFilters on a provider's own streams (spec: "filter.set",
//! "Stream access control", "Regex execution safety").
//!
//! A filter is an ordered rule list; the first rule whose regex matches the event text
//! decides the outcome (`drop`, `keep`, `surface`, `inject`), overriding the push's
//! `level`. No matching rule leaves the push as sent. Patterns are compiled with the hook
//! rules' helper (`patterns::rules::compile_pattern`): the `regex` crate matches in linear
//! time and the pattern and program sizes are bounded.

/// An error code and message.
pub(crate) type Invalid = Error;
use crate::error::Error;
use regex::Regex;
use std::sync::Arc;
use tap_protocol::limits::MAX_FILTER_RULES;
use tap_protocol::provider::{FilterOutcome, FilterSet, PushLevel};
use tap_protocol::ErrorCode;

/// A compiled filter: first match wins.
#[derive(Debug)]
pub(crate) struct Filter {
    rules: Vec<(Regex, FilterOutcome)>,
}

impl Filter {
    /// The level a push with `text` gets: `None` when it is dropped, the push's own
    /// `level` when no rule matches.
    pub fn apply(&self, text: &str, level: PushLevel) -> Option<PushLevel> {
        match self.rules.iter().find(|(re, _)| re.is_match(text)) {
            None => Some(level),
            Some((_, FilterOutcome::Drop)) => None,
            Some((_, FilterOutcome::Keep)) => Some(PushLevel::Keep),
            Some((_, FilterOutcome::Surface)) => Some(PushLevel::Surface),
            Some((_, FilterOutcome::Inject)) => Some(PushLevel::Inject),
        }
    }
}

/// Validates a `filter.set` from the provider named `name` and compiles it: the provider's
/// own stream it is for, and its filter (`None`: empty `rules` removes the stream's filter).
pub(crate) fn compile<'a>(
    name: &str,
    f: &'a FilterSet,
) -> Result<(&'a str, Option<Arc<Filter>>), Invalid> {
    let stream = own_stream(&f.stream, name)?;
    if f.rules.len() > MAX_FILTER_RULES {
        return Err(Error::new(
            ErrorCode::PayloadTooLarge,
            format!(
                "{} filter rules; a stream's filter may have at most {MAX_FILTER_RULES}",
                f.rules.len()
            ),
        ));
    }
    crate::patterns::rules::check_patterns(
        "the filter's patterns",
        f.rules.iter().map(|r| r.pattern.as_str()).enumerate(),
    )?;
    let filter = if f.rules.is_empty() {
        None
    } else {
        let rules = f
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| {
                crate::patterns::rules::compile_pattern(&r.pattern)
                    .map(|re| (re, r.outcome))
                    .map_err(|why| {
                        Error::new(
                            ErrorCode::InvalidJson,
                            format!("filter rule {i}: 'match' {why}"),
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Some(Arc::new(Filter { rules }))
    };
    Ok((stream, filter))
}

/// The provider's own stream named by `stream` (`name` or `name@<own provider name>`);
/// another provider's `stream@provider` is `UNAUTHORIZED`.
fn own_stream<'a>(stream: &'a str, provider: &str) -> Result<&'a str, Invalid> {
    let own = match stream.split_once('@') {
        None => stream,
        Some((s, p)) if p == provider => s,
        Some((_, p)) => {
            return Err(Error::new(
                ErrorCode::Unauthorized,
                format!("'filter.set' works on the provider's own streams only; '{stream}' belongs to '{p}'"),
            ))
        }
    };
    if own.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            "'stream' must not be empty",
        ));
    }
    Ok(own)
}
