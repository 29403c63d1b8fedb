//! Tool-call approvals (`docs/approvals.md`): whether a call of a provider's tool is
//! allowed, asked or denied, the user's remembered answers, and the calls waiting for one.
//!
//! - `policy.rs`: `$TAP_HOME/policy.json`, the user's rules, checked and indexed by tool;
//! - `policy_watch.rs`: follows the file, so a hand edit applies without a restart;
//! - `grants.rs`: `$TAP_HOME/grants.json`, remembered answers, indexed by tool;
//! - `arg_patterns.rs`: a rule's or grant's argument patterns (JSON pointer + bounded regex);
//! - `waiting.rs`: calls waiting for the user, each with exactly one outcome;
//! - `in_client.rs`: the form asked in the calling MCP client (`approvalsInClient`);
//!   The same is asked in the session host's own dialog (`approval.ask`,
//!   `state::approval_asks`); [`AskedInHost`] keeps which calls were.
//!
//! The decision order ([`Approvals::decide`]): a remembered deny, then a grant, then the
//! first rule in file order, then the defaults (a tool annotated `destructiveHint: true` is
//! asked, any other allowed). The call path (`tools::approval`) asks for the decision after
//! the arguments are checked and before dispatch, and waits for the user when asked.

pub(crate) mod arg_patterns;
pub(crate) mod grants;
pub(crate) mod in_client;
pub(crate) mod policy;
pub(crate) mod policy_watch;
pub(crate) mod waiting;

use crate::error::Error;
use crate::events::Events;
use arg_patterns::ArgMatch;
use grants::Grants;
use policy::Policy;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock, RwLockWriteGuard};
use std::time::{Duration, SystemTime};
use tap_protocol::approvals::{
    AnswerScope, ApprovalAnswered, ApprovalApprove, ApprovalDeny, Grant, GrantDecision,
    PolicyAction, PolicyList, PolicyRule,
};
use tap_protocol::{ErrorCode, Json};

pub(crate) use waiting::{Answer, Answered};

/// What is known about a call when it is decided.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallFacts<'a> {
    pub tool: &'a str,
    /// The provider (or MCP server) offering the tool.
    pub provider: &'a str,
    pub session: &'a str,
    /// The session's client (`match.client` of hook rules).
    pub client: Option<&'a str>,
    /// The session's profile.
    pub profile: Option<&'a str>,
    pub args: &'a Json,
    /// The tool is annotated `destructiveHint: true`.
    pub destructive: bool,
}

/// Who or what decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum By {
    /// A remembered answer: its id.
    Grant(String),
    /// A rule of `policy.json`: its id.
    Rule(String),
    /// The defaults (no rule applied).
    Default,
    /// `policy.json` cannot be used: every call is asked.
    BrokenPolicy,
}

impl By {
    /// The trace's `approval.by`.
    pub fn kind(&self) -> &'static str {
        match self {
            By::Grant(_) => "grant",
            By::Rule(_) => "rule",
            By::Default => "default",
            By::BrokenPolicy => "policy-error",
        }
    }
}

/// The decision before anyone is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub action: PolicyAction,
    pub by: By,
    /// The rule's `reason`, or why the policy is not used.
    pub reason: Option<String>,
}

/// The waiting calls asked in their session's host: only those take the host's answer (a
/// host that answers what it was not asked is what the per-profile opt-in guards against).
#[derive(Default)]
pub(crate) struct AskedInHost(Mutex<std::collections::HashSet<String>>);

impl AskedInHost {
    fn ids(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Call `id` was asked in its host.
    pub fn note(&self, id: &str) {
        self.ids().insert(id.to_string());
    }

    /// Its wait ended.
    pub fn forget(&self, id: &str) {
        self.ids().remove(id);
    }

    pub fn was_asked(&self, id: &str) -> bool {
        self.ids().contains(id)
    }
}

/// Approvals of one gateway: policy, grants and waiting calls, each under its own lock
/// (never held across an await).
pub(crate) struct Approvals {
    data_dir: PathBuf,
    policy: RwLock<Arc<Policy>>,
    /// The timeout `policy.json` sets, to write it back unchanged.
    timeout_set: Mutex<Option<u64>>,
    /// Read on every call, written on an answer or a revoke.
    grants: RwLock<Grants>,
    pub waiting: waiting::Waiting,
    /// Waiting calls asked in their session's host (`state::approval_asks`).
    pub in_host: AskedInHost,
    /// For `policy.changed` when the calling client's answer makes a grant.
    events: Events,
}

impl Approvals {
    /// Reads `policy.json` and `grants.json` in `data_dir`.
    pub fn load(data_dir: PathBuf, events: Events) -> Self {
        let (policy, set) = policy::read(&data_dir);
        if let Some(e) = &policy.error {
            tracing::warn!(error = %e, "policy.json cannot be used; every call of a provider's tool is asked until it is fixed");
        }
        Self {
            grants: RwLock::new(Grants::load(&data_dir)),
            data_dir,
            policy: RwLock::new(Arc::new(policy)),
            timeout_set: Mutex::new(set),
            waiting: waiting::Waiting::new(events.clone()),
            in_host: AskedInHost::default(),
            events,
        }
    }

    fn grants(&self) -> RwLockWriteGuard<'_, Grants> {
        self.grants.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a rule looks at the session's client or profile: when none does, the call
    /// path need not look them up (the state lock) to decide.
    pub fn needs_who(&self) -> bool {
        let p = self.policy.read().unwrap_or_else(|e| e.into_inner());
        p.uses_who
    }

    /// The policy in force.
    pub fn policy(&self) -> Arc<Policy> {
        self.policy
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The decision for a call, in this order: a remembered deny, a grant, the first rule
    /// that applies, the defaults.
    pub fn decide(&self, c: &CallFacts<'_>) -> Verdict {
        let grants = self.grants.read().unwrap_or_else(|e| e.into_inner());
        if let Some(g) = grants.find(c) {
            let action = match g.decision {
                GrantDecision::Allow => PolicyAction::Allow,
                GrantDecision::Deny => PolicyAction::Deny,
            };
            return Verdict {
                action,
                by: By::Grant(g.id.clone()),
                reason: None,
            };
        }
        drop(grants);
        let policy = self.policy.read().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = &policy.error {
            return Verdict {
                action: PolicyAction::Ask,
                by: By::BrokenPolicy,
                reason: Some(format!(
                    "policy.json cannot be used, so every call is asked: {e}"
                )),
            };
        }
        if let Some(r) = policy.first(c) {
            return Verdict {
                action: r.rule.action,
                by: By::Rule(r.rule.id.clone()),
                reason: r.rule.reason.clone(),
            };
        }
        Verdict {
            action: if c.destructive {
                PolicyAction::Ask
            } else {
                PolicyAction::Allow
            },
            by: By::Default,
            reason: None,
        }
    }

    /// `approvals.approve`: answers waiting call `id`, remembering the answer for the
    /// scope asked.
    pub fn approve(&self, p: &ApprovalApprove) -> Result<ApprovalAnswered, Error> {
        let grant = self.answer(
            &p.id,
            GrantDecision::Allow,
            p.scope,
            p.minutes,
            &p.args_pattern,
            "user",
        )?;
        Ok(ApprovalAnswered { grant })
    }

    /// `approvals.deny`: denies waiting call `id`, remembering it if asked.
    pub fn deny(&self, p: &ApprovalDeny) -> Result<ApprovalAnswered, Error> {
        let scope = p.remember.unwrap_or(AnswerScope::Call);
        let grant = self.answer(&p.id, GrantDecision::Deny, scope, p.minutes, &[], "user")?;
        Ok(ApprovalAnswered { grant })
    }

    /// The calling client's (`by` = `client`, `in_client.rs`) or the session host's
    /// (`host`, `in_host.rs`) answer to waiting call `id`, given exactly as the panel gives
    /// one. `true` when it decided the call; `false` when it was no answer, or another
    /// answer came first or the wait ended (that outcome stands).
    pub fn client_answered(
        &self,
        id: &str,
        answer: &in_client::ClientAnswer,
        by: &'static str,
    ) -> bool {
        use in_client::ClientAnswer;
        let answered = match answer {
            ClientAnswer::Approve(scope, minutes) => {
                self.answer(id, GrantDecision::Allow, *scope, *minutes, &[], by)
            }
            ClientAnswer::Deny => {
                self.answer(id, GrantDecision::Deny, AnswerScope::Call, None, &[], by)
            }
            ClientAnswer::Left(_) => return false,
        };
        match answered {
            Ok(grant) => {
                if grant.is_some() {
                    // As the control plane's answer does: the panel shows the new grant.
                    self.events.emit(crate::events::GatewayEvent::PolicyChanged);
                }
                true
            }
            Err(_) => false,
        }
    }

    fn answer(
        &self,
        id: &str,
        decision: GrantDecision,
        scope: AnswerScope,
        minutes: Option<u64>,
        args: &[tap_protocol::approvals::ArgPattern],
        by: &'static str,
    ) -> Result<Option<Grant>, Error> {
        let bad = |m: String| Error::new(ErrorCode::InvalidJson, m);
        let lasts = match (scope, minutes) {
            (AnswerScope::Minutes, Some(m))
                if (1..=crate::limits::MAX_GRANT_MINUTES).contains(&m) =>
            {
                Some(Duration::from_secs(m * 60))
            }
            (AnswerScope::Minutes, _) => {
                return Err(bad(format!(
                    "'for: minutes' needs 'minutes', 1 to {}",
                    crate::limits::MAX_GRANT_MINUTES
                )))
            }
            (_, Some(_)) => return Err(bad("'minutes' goes with 'for: minutes' only".into())),
            _ => None,
        };
        if scope == AnswerScope::Call && !args.is_empty() {
            return Err(bad(
                "'argsPattern' makes a grant: it needs 'for' other than 'call'".into(),
            ));
        }
        let args_match = ArgMatch::compile("argsPattern", args)?;
        // Taking the waiting call decides who answers it: a second answer, or one after it
        // timed out or its caller left, finds nothing.
        let taken = self.waiting.take(id)?;
        let grant = if scope == AnswerScope::Call || taken.once {
            None
        } else {
            let grant = Grant {
                id: crate::ids::short("g"),
                decision,
                scope,
                tool: taken.call.tool.clone(),
                provider: taken.call.provider.clone(),
                session: (scope == AnswerScope::Session).then(|| taken.call.session_id.clone()),
                args: args.to_vec(),
                created_at: crate::time::rfc3339(SystemTime::now()),
                expires_at: None,
            };
            match self.grants().add(grant, args_match, lasts) {
                Ok(g) => Some(g),
                Err(e) => {
                    // The call still gets its answer; the grant could not be kept.
                    tracing::warn!(error = %e, "grant not kept");
                    None
                }
            }
        };
        let answer = match decision {
            GrantDecision::Allow => Answer::Approved(grant.as_ref().map(|g| g.id.clone())),
            GrantDecision::Deny => Answer::Denied(grant.as_ref().map(|g| g.id.clone())),
        };
        self.waiting.settle(taken, answer, by);
        Ok(grant)
    }

    /// `approvals.grants`.
    pub fn grant_list(&self) -> Vec<Grant> {
        self.grants().list()
    }

    /// `approvals.revoke`.
    pub fn revoke(&self, id: &str) -> Result<Grant, Error> {
        self.grants().revoke(id)
    }

    /// `policy.list`: reads the file again first, so a hand edit takes effect.
    pub fn policy_list(&self) -> PolicyList {
        self.reload();
        self.listed()
    }

    fn listed(&self) -> PolicyList {
        let p = self.policy();
        PolicyList {
            path: self.data_dir.join(policy::FILE_NAME).display().to_string(),
            rules: p.rules.iter().map(|r| r.rule.clone()).collect(),
            approval_timeout_secs: p.timeout.as_secs(),
            error: p.error.clone(),
        }
    }

    /// Reads `policy.json` again.
    pub fn reload(&self) {
        let (policy, set) = policy::read(&self.data_dir);
        *self.timeout_set.lock().unwrap_or_else(|e| e.into_inner()) = set;
        *self.policy.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(policy);
    }

    /// `policy.set`: replaces the rule of that id in place, or adds it at the end.
    pub fn policy_set(&self, rule: PolicyRule) -> Result<PolicyList, Error> {
        self.change_policy(|rules| {
            match rules.iter_mut().find(|r| r.id == rule.id) {
                Some(r) => *r = rule,
                None => rules.push(rule),
            }
            Ok(())
        })
    }

    /// `policy.remove`.
    pub fn policy_remove(&self, id: &str) -> Result<PolicyList, Error> {
        self.change_policy(|rules| {
            let before = rules.len();
            rules.retain(|r| r.id != id);
            if rules.len() == before {
                return Err(Error::new(
                    ErrorCode::NotFound,
                    format!("No rule '{id}' in policy.json (see tap policy list)"),
                ));
            }
            Ok(())
        })
    }

    fn change_policy(
        &self,
        change: impl FnOnce(&mut Vec<PolicyRule>) -> Result<(), Error>,
    ) -> Result<PolicyList, Error> {
        self.reload();
        let current = self.policy();
        if let Some(e) = &current.error {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                format!("policy.json must be fixed by hand first: {e}"),
            ));
        }
        let set = *self.timeout_set.lock().unwrap_or_else(|e| e.into_inner());
        let mut file = current.file(set);
        change(&mut file.rules)?;
        let compiled = Policy::compile(file.clone())?;
        let text = serde_json::to_string_pretty(&file).expect("policy serializes");
        crate::auth::files::write_private(&self.data_dir.join(policy::FILE_NAME), &text)
            .map_err(|e| Error::internal(format!("could not write policy.json: {e}")))?;
        *self.policy.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(compiled);
        Ok(self.listed())
    }
}
