//! Session injectors: per emitter stream, whether and how its lines reach the session
//! (`tap_enable_injector` / `tap_disable_injector`, a config file's `streams`).
//!
//! The filter decides each line's outcome; the injector decides what of that is delivered:
//!
//! | delivery | keep | surface | inject |
//! |---|---|---|---|
//! | `surface` (default) | kept | shown | new turn |
//! | `important`, `inject` | kept | kept | new turn |
//! | `all` | shown | shown | new turn |
//! | `keep`, `drop`, or disabled | kept | kept | kept |
//!
//! Routing reads the mode from an atomic per line, so a change applies to the next line
//! of a running emitter without a lock on the hot path.

use crate::error::Error;
use serde::Serialize;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};
use tap_protocol::emitters::{Lifespan, Ownership};
use tap_protocol::ledger::EventOutcome;
use tap_protocol::ErrorCode;

/// What an injector delivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum DeliveryMode {
    Surface,
    Important,
    Inject,
    All,
    Keep,
    Drop,
}

impl DeliveryMode {
    pub fn parse(s: &str) -> Result<Self, Error> {
        Ok(match s {
            "surface" => Self::Surface,
            "important" => Self::Important,
            "inject" => Self::Inject,
            "all" => Self::All,
            "keep" => Self::Keep,
            "drop" => Self::Drop,
            other => {
                return Err(Error::new(
                    ErrorCode::InvalidJson,
                    format!(
                        "'delivery' must be surface, important, inject, all, keep or drop, not '{other}'"
                    ),
                ))
            }
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Surface => "surface",
            Self::Important => "important",
            Self::Inject => "inject",
            Self::All => "all",
            Self::Keep => "keep",
            Self::Drop => "drop",
        }
    }
}

/// An injector's settings, as the tools and `tap_list_streams` show them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Policy {
    pub enabled: bool,
    pub delivery: DeliveryMode,
    pub lifespan: Lifespan,
    pub ownership: Ownership,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            enabled: true,
            delivery: DeliveryMode::Surface,
            lifespan: Lifespan::Temporary,
            ownership: Ownership::ModelOwned,
            description: None,
        }
    }
}

// The routing modes, in the atomic.
const OFF: u8 = 0;
const OUTCOME: u8 = 1;
const INJECT_ONLY: u8 = 2;
const ALL: u8 = 3;

fn mode_of(p: &Policy) -> u8 {
    match (p.enabled, p.delivery) {
        (false, _) | (_, DeliveryMode::Keep | DeliveryMode::Drop) => OFF,
        (true, DeliveryMode::Surface) => OUTCOME,
        (true, DeliveryMode::Important | DeliveryMode::Inject) => INJECT_ONLY,
        (true, DeliveryMode::All) => ALL,
    }
}

/// One stream's injector.
pub(crate) struct Injector {
    mode: AtomicU8,
    policy: Mutex<Policy>,
}

impl Default for Injector {
    fn default() -> Self {
        Self::new(Policy::default())
    }
}

impl Injector {
    pub fn new(policy: Policy) -> Self {
        Self {
            mode: AtomicU8::new(mode_of(&policy)),
            policy: Mutex::new(policy),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Policy> {
        self.policy.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn policy(&self) -> Policy {
        self.lock().clone()
    }

    /// Whether `by` may change it: a user-owned injector changes for the model only with
    /// `force`.
    pub fn check_change(&self, stream: &str, by: Ownership, force: bool) -> Result<(), Error> {
        protected(&self.lock(), stream, by, force)
    }

    /// Replaces the policy for `by` (see [`Injector::check_change`]).
    pub fn set(
        &self,
        stream: &str,
        policy: Policy,
        by: Ownership,
        force: bool,
    ) -> Result<(), Error> {
        let mut current = self.lock();
        protected(&current, stream, by, force)?;
        self.mode.store(mode_of(&policy), Ordering::Relaxed);
        *current = policy;
        Ok(())
    }

    /// Gives the stream a description if it has none.
    pub fn describe(&self, description: String) {
        self.lock().description.get_or_insert(description);
    }

    /// What a line with the filter's `outcome` becomes: its delivery outcome (`Keep`:
    /// stored only).
    pub fn deliver_as(&self, outcome: EventOutcome) -> EventOutcome {
        match (self.mode.load(Ordering::Relaxed), outcome) {
            (_, EventOutcome::Drop) => EventOutcome::Drop,
            (OFF, _) => EventOutcome::Keep,
            (INJECT_ONLY, EventOutcome::Surface) => EventOutcome::Keep,
            (ALL, EventOutcome::Keep) => EventOutcome::Surface,
            (_, other) => other,
        }
    }
}

fn protected(current: &Policy, stream: &str, by: Ownership, force: bool) -> Result<(), Error> {
    if current.ownership == Ownership::UserOwned && by == Ownership::ModelOwned && !force {
        return Err(Error::new(
            ErrorCode::Unauthorized,
            format!(
                "The session injector of stream '{stream}' is user-owned; pass force to change it"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use EventOutcome::*;

    fn with(enabled: bool, delivery: DeliveryMode) -> Injector {
        Injector::new(Policy {
            enabled,
            delivery,
            ..Policy::default()
        })
    }

    #[test]
    fn each_delivery_mode_maps_outcomes_as_the_table_says() {
        let cases = [
            (DeliveryMode::Surface, [Keep, Surface, Inject]),
            (DeliveryMode::Important, [Keep, Keep, Inject]),
            (DeliveryMode::Inject, [Keep, Keep, Inject]),
            (DeliveryMode::All, [Surface, Surface, Inject]),
            (DeliveryMode::Keep, [Keep, Keep, Keep]),
            (DeliveryMode::Drop, [Keep, Keep, Keep]),
        ];
        for (mode, want) in cases {
            let i = with(true, mode);
            let got = [Keep, Surface, Inject].map(|o| i.deliver_as(o));
            assert_eq!(got, want, "{mode:?}");
            assert_eq!(i.deliver_as(Drop), Drop);
        }
        let off = with(false, DeliveryMode::All);
        assert_eq!(
            [Keep, Surface, Inject].map(|o| off.deliver_as(o)),
            [Keep; 3]
        );
    }

    #[test]
    fn a_user_owned_injector_changes_for_the_model_only_with_force() {
        let i = Injector::new(Policy {
            ownership: Ownership::UserOwned,
            ..Policy::default()
        });
        let off = Policy {
            enabled: false,
            ..Policy::default()
        };
        let e = i.set("ci", off.clone(), Ownership::ModelOwned, false);
        assert_eq!(e.unwrap_err().code, ErrorCode::Unauthorized);
        assert_eq!(i.deliver_as(Inject), Inject);
        i.set("ci", off.clone(), Ownership::ModelOwned, true)
            .unwrap();
        assert_eq!(i.deliver_as(Inject), Keep);
        i.set("ci", Policy::default(), Ownership::UserOwned, false)
            .unwrap();
        assert_eq!(i.deliver_as(Surface), Surface);
    }
}
