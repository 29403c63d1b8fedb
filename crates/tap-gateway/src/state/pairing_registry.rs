//! Pending pairing requests and paired providers. Kept in the gateway's `State`, so every
//! method here runs under the state lock; none of them blocks or does IO.

use super::pairing_store::{Remembered, TokenHash};
use crate::error::Error;
use crate::state::link::ProviderLink;
use rand::Rng;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, SystemTime};
use subtle::ConstantTimeEq;
use tap_protocol::limits::{
    MAX_PAIRING_ATTEMPTS_PER_MINUTE, MAX_PENDING_PAIRINGS, PAIRING_ATTEMPT_WINDOW,
};
use tap_protocol::pairing::{PairingEntry, PairingState};
use tap_protocol::ErrorCode;
use tap_protocol::JsonObject;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::pairing::registry";
// Tokio's clock, so the attempt window follows a paused test clock.
use tokio::time::Instant;

/// SHA-256 of an issued token: all the gateway keeps of it.
pub(crate) fn hash_token(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

#[derive(Default)]
pub(crate) struct Registry {
    entries: HashMap<String, Pairing>,
    /// Creation order, for listing newest first.
    seq: u64,
    /// When recent `auth.confirm`s were evaluated, across every connection.
    attempts: VecDeque<Instant>,
    /// The remembered set changed since it was last written to the store.
    pub dirty: bool,
}

pub(crate) struct Pairing {
    pub id: String,
    seq: u64,
    pub stage: Stage,
    pub origin: Option<String>,
    pub remote: String,
    pub name: Option<String>,
    pub metadata: Option<JsonObject>,
    pub created_at: SystemTime,
    /// The session the provider may bind to (see `allowed_session`).
    pub session: Option<String>,
    pub remember: bool,
    /// Open connections authenticated with this pairing's token.
    pub connections: usize,
}

pub(crate) enum Stage {
    /// Waiting for `auth.confirm` on the connection that asked.
    Pending {
        code: String,
        expires_at: SystemTime,
        /// The asking connection, so deny can answer and close it.
        link: ProviderLink,
    },
    /// Confirmed; the provider holds a token with this hash.
    Paired { token_hash: TokenHash },
}

/// What a connection asking to pair brings.
pub(crate) struct Request {
    pub origin: Option<String>,
    pub remote: String,
    pub name: Option<String>,
    pub metadata: Option<JsonObject>,
    pub link: ProviderLink,
}

impl Pairing {
    pub fn is_pending(&self) -> bool {
        matches!(self.stage, Stage::Pending { .. })
    }

    /// The wire view (control plane, `tap pairing list --json`).
    pub fn entry(&self) -> PairingEntry {
        let (state, code, expires_at) = match &self.stage {
            Stage::Pending {
                code, expires_at, ..
            } => (
                PairingState::Pending,
                Some(code.clone()),
                Some(crate::time::rfc3339(*expires_at)),
            ),
            Stage::Paired { .. } => (PairingState::Paired, None, None),
        };
        PairingEntry {
            id: self.id.clone(),
            state,
            code,
            origin: self.origin.clone(),
            remote: self.remote.clone(),
            name: self.name.clone(),
            metadata: self.metadata.clone(),
            created_at: crate::time::rfc3339(self.created_at),
            expires_at,
            session: self.session.clone(),
            remember: self.remember,
            connected: self.connections > 0,
        }
    }

    /// Whether `code` is this pending request's code, compared in constant time.
    /// Whitespace is ignored, so "847 293" counts as "847293".
    pub fn code_matches(&self, code: &str) -> bool {
        let Stage::Pending { code: expected, .. } = &self.stage else {
            return false;
        };
        let presented: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        presented.as_bytes().ct_eq(expected.as_bytes()).into()
    }
}

impl Registry {
    /// A registry holding the remembered pairings of a previous run.
    pub fn with_remembered(records: Vec<Remembered>) -> Self {
        let mut registry = Self::default();
        for r in records {
            let Some(token_hash) = r.token_hash() else {
                tracing::warn!(target: LOG_TARGET, pairing = %r.id, "remembered pairing has a malformed token hash; skipped");
                continue;
            };
            if registry.entries.contains_key(&r.id) {
                continue;
            }
            let created_at = humantime::parse_rfc3339(&r.created_at).unwrap_or(SystemTime::now());
            registry.insert(Pairing {
                id: r.id,
                seq: 0,
                stage: Stage::Paired { token_hash },
                origin: r.origin,
                remote: r.remote.unwrap_or_default(),
                name: r.name,
                metadata: r.metadata,
                created_at,
                session: r.session,
                remember: true,
                connections: 0,
            });
        }
        registry
    }

    fn insert(&mut self, mut p: Pairing) {
        self.seq += 1;
        p.seq = self.seq;
        self.entries.insert(p.id.clone(), p);
    }

    pub fn get(&self, id: &str) -> Option<&Pairing> {
        self.entries.get(id)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Pairing> {
        self.entries.get_mut(id)
    }

    fn pending_count(&self) -> usize {
        self.entries.values().filter(|p| p.is_pending()).count()
    }

    /// Ids of the pending requests.
    pub fn pending_ids(&self) -> Vec<String> {
        let mut ids: Vec<&Pairing> = self.entries.values().filter(|p| p.is_pending()).collect();
        ids.sort_by_key(|p| p.seq);
        ids.into_iter().map(|p| p.id.clone()).collect()
    }

    /// Records a new pending request with a fresh code, or refuses when
    /// [`MAX_PENDING_PAIRINGS`] are already waiting.
    pub fn request(&mut self, req: Request, ttl: Duration) -> Result<PairingEntry, Error> {
        if self.pending_count() >= MAX_PENDING_PAIRINGS {
            return Err(Error::new(ErrorCode::RateLimited, format!(
                "{MAX_PENDING_PAIRINGS} pairing requests are already waiting for the user; retry later"
            )));
        }
        let id = loop {
            let id = crate::ids::short("pr");
            if !self.entries.contains_key(&id) {
                break id;
            }
        };
        let now = SystemTime::now();
        // ThreadRng is a CSPRNG (ChaCha, seeded from the OS).
        let code = format!("{:06}", rand::rng().random_range(0..1_000_000u32));
        self.insert(Pairing {
            id: id.clone(),
            seq: 0,
            stage: Stage::Pending {
                code,
                expires_at: now + ttl,
                link: req.link,
            },
            origin: req.origin,
            remote: req.remote,
            name: req.name,
            metadata: req.metadata,
            created_at: now,
            session: None,
            remember: false,
            connections: 0,
        });
        Ok(self.entries[&id].entry())
    }

    /// Counts a code attempt against the global limit. `Err` carries how long until the
    /// next attempt is allowed; a refused attempt does not count.
    pub fn attempt(&mut self, now: Instant) -> Result<(), Duration> {
        while self
            .attempts
            .front()
            .is_some_and(|t| now.duration_since(*t) >= PAIRING_ATTEMPT_WINDOW)
        {
            self.attempts.pop_front();
        }
        if self.attempts.len() >= MAX_PAIRING_ATTEMPTS_PER_MINUTE as usize {
            let oldest = self.attempts[0];
            return Err(PAIRING_ATTEMPT_WINDOW.saturating_sub(now.duration_since(oldest)));
        }
        self.attempts.push_back(now);
        Ok(())
    }

    /// Turns a pending request into a pairing with a token of hash `token_hash`, held by
    /// one connection.
    pub fn pair(&mut self, id: &str, token_hash: TokenHash) -> Option<PairingEntry> {
        let p = self.entries.get_mut(id).filter(|p| p.is_pending())?;
        p.stage = Stage::Paired { token_hash };
        p.connections = 1;
        if p.remember {
            self.dirty = true;
        }
        Some(p.entry())
    }

    /// The paired entry whose token is `token`, counted as one more connection. Every
    /// entry's hash is compared, in constant time.
    pub fn authenticate(&mut self, token: &str) -> Option<PairingEntry> {
        let presented = hash_token(token);
        let mut found: Option<&mut Pairing> = None;
        for p in self.entries.values_mut() {
            if let Stage::Paired { token_hash } = &p.stage {
                if bool::from(token_hash.ct_eq(&presented)) {
                    found = Some(p);
                }
            }
        }
        let p = found?;
        p.connections += 1;
        Some(p.entry())
    }

    /// A connection holding this pairing's token closed.
    pub fn disconnected(&mut self, id: &str) -> Option<PairingEntry> {
        let p = self.entries.get_mut(id)?;
        p.connections = p.connections.saturating_sub(1);
        Some(p.entry())
    }

    /// Removes a pairing, pending or paired.
    pub fn remove(&mut self, id: &str) -> Option<Pairing> {
        let p = self.entries.remove(id)?;
        if p.remember && !p.is_pending() {
            self.dirty = true;
        }
        Some(p)
    }

    /// Removes `id` if it is still pending; whether it was.
    pub fn remove_pending(&mut self, id: &str) -> bool {
        if self.entries.get(id).is_some_and(Pairing::is_pending) {
            self.entries.remove(id);
            true
        } else {
            false
        }
    }

    /// Marks the store stale if `id` is a remembered (or just forgotten) pairing.
    pub fn touched(&mut self, id: &str, was_remembered: bool) {
        if let Some(p) = self.entries.get(id) {
            if !p.is_pending() && (p.remember || was_remembered) {
                self.dirty = true;
            }
        }
    }

    /// Pending first, then paired; newest first within each.
    pub fn list(&self) -> Vec<PairingEntry> {
        let mut all: Vec<&Pairing> = self.entries.values().collect();
        all.sort_by(|a, b| b.is_pending().cmp(&a.is_pending()).then(b.seq.cmp(&a.seq)));
        all.into_iter().map(Pairing::entry).collect()
    }

    /// What the store keeps: every remembered, paired entry.
    pub fn remembered(&self) -> Vec<Remembered> {
        let mut all: Vec<&Pairing> = self.entries.values().filter(|p| p.remember).collect();
        all.sort_by_key(|p| p.seq);
        all.into_iter()
            .filter_map(|p| match &p.stage {
                Stage::Paired { token_hash } => Some(record_of(p, token_hash)),
                Stage::Pending { .. } => None,
            })
            .collect()
    }
}

/// The record kept of a paired provider the user chose to remember.
fn record_of(p: &Pairing, token_hash: &TokenHash) -> Remembered {
    Remembered {
        id: p.id.clone(),
        token_sha256: token_hash.iter().map(|b| format!("{b:02x}")).collect(),
        name: p.name.clone(),
        origin: p.origin.clone(),
        remote: Some(p.remote.clone()),
        metadata: p.metadata.clone(),
        session: p.session.clone(),
        created_at: crate::time::rfc3339(p.created_at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::call_table::CallTable;
    use std::sync::Arc;
    use tokio_util::sync::CancellationToken;

    fn link() -> ProviderLink {
        let (out, _) = crate::socket::outbound::channel(
            Default::default(),
            CancellationToken::new(),
            Arc::default(),
        );
        ProviderLink {
            out,
            calls: Arc::new(CallTable::default()),
            gates: Arc::default(),
            kill: CancellationToken::new(),
            activity: Arc::default(),
        }
    }

    fn request(r: &mut Registry) -> Result<PairingEntry, Error> {
        r.request(
            Request {
                origin: None,
                remote: "127.0.0.1:1".into(),
                name: None,
                metadata: None,
                link: link(),
            },
            Duration::from_secs(300),
        )
    }

    #[test]
    fn codes_are_six_digits_and_the_pending_limit_holds() {
        let mut r = Registry::default();
        for _ in 0..MAX_PENDING_PAIRINGS {
            let e = request(&mut r).unwrap();
            let code = e.code.unwrap();
            assert_eq!(code.len(), 6);
            assert!(code.bytes().all(|b| b.is_ascii_digit()), "{code}");
            assert!(e.id.starts_with("pr-"));
        }
        assert!(request(&mut r).is_err());
    }

    #[test]
    fn code_comparison_ignores_whitespace_only() {
        let mut r = Registry::default();
        let e = request(&mut r).unwrap();
        let code = e.code.unwrap();
        let p = r.get(&e.id).unwrap();
        assert!(p.code_matches(&code));
        assert!(p.code_matches(&format!(" {} {} ", &code[..3], &code[3..])));
        assert!(!p.code_matches(&code[..5]));
        assert!(!p.code_matches(&format!("{code}0")));
        assert!(!p.code_matches(""));
    }

    #[test]
    fn attempts_are_limited_per_sliding_minute() {
        let mut r = Registry::default();
        let t0 = Instant::now();
        for i in 0..MAX_PAIRING_ATTEMPTS_PER_MINUTE {
            assert!(r.attempt(t0 + Duration::from_secs(u64::from(i))).is_ok());
        }
        let wait = r.attempt(t0 + Duration::from_secs(30)).unwrap_err();
        assert_eq!(wait, Duration::from_secs(30));
        // The first attempt leaves the window at t0 + 60 s; one more is allowed then.
        assert!(r.attempt(t0 + Duration::from_secs(60)).is_ok());
        assert!(r.attempt(t0 + Duration::from_secs(60)).is_err());
    }

    #[test]
    fn tokens_authenticate_by_hash() {
        let mut r = Registry::default();
        let e = request(&mut r).unwrap();
        let token = crate::auth::tokens::generate("ext-");
        r.pair(&e.id, hash_token(&token)).unwrap();
        assert!(r.authenticate("ext-wrong").is_none());
        let again = r.authenticate(&token).unwrap();
        assert_eq!(again.id, e.id);
        assert!(again.connected);
        assert_eq!(r.get(&e.id).unwrap().connections, 2);
    }
}
