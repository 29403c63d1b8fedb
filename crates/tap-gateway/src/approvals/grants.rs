//! `$TAP_HOME/grants.json`: the user's remembered answers (allow or deny one tool for a
//! session, for some minutes, or always; optionally only for arguments that match), kept
//! across restarts (0600, written whole and renamed into place). Indexed by tool name, so a
//! call pays only for the grants of its own tool. A `minutes` grant ends on tokio's clock
//! (its deadline is an `Instant`; the file keeps the wall-clock end for the next start).

use super::arg_patterns::ArgMatch;
use super::CallFacts;
use crate::error::Error;
use crate::limits::MAX_GRANTS;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use tap_protocol::approvals::{Grant, GrantDecision, GrantsFile};
use tap_protocol::ErrorCode;
use tokio::time::Instant;

/// The file's name in `$TAP_HOME`.
pub const FILE_NAME: &str = "grants.json";

#[derive(Debug)]
struct Live {
    grant: Grant,
    args: ArgMatch,
    /// A `minutes` grant's end.
    deadline: Option<Instant>,
    /// Creation order, for listing.
    seq: u64,
}

impl Live {
    fn covers(&self, c: &CallFacts<'_>, now: Instant) -> bool {
        self.deadline.is_none_or(|d| now < d)
            && self.grant.provider == c.provider
            && self.grant.session.as_deref().is_none_or(|s| s == c.session)
            && (self.args.is_empty() || self.args.matches(c.args))
    }
}

/// The grants in force.
#[derive(Debug)]
pub(crate) struct Grants {
    path: PathBuf,
    by_tool: HashMap<String, Vec<Live>>,
    count: usize,
    seq: u64,
}

impl Grants {
    /// Reads the file in `data_dir`. Expired grants are dropped; a file that cannot be read
    /// is set aside (`grants.json.unreadable`) and the gateway starts with no grants, so
    /// calls are asked again rather than allowed by an answer nobody can see.
    pub fn load(data_dir: &Path) -> Self {
        let path = data_dir.join(FILE_NAME);
        let mut grants = Self {
            path: path.clone(),
            by_tool: HashMap::new(),
            count: 0,
            seq: 0,
        };
        let file: GrantsFile = match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return grants,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "grants file unreadable; starting with no grants");
                return grants;
            }
            Ok(text) => match serde_json::from_str(&text) {
                Ok(f) => f,
                Err(e) => {
                    let aside = path.with_extension("json.unreadable");
                    tracing::warn!(path = %path.display(), error = %e, aside = %aside.display(), "grants file is not valid; set aside, starting with no grants");
                    let _ = std::fs::rename(&path, &aside);
                    return grants;
                }
            },
        };
        let (now, wall) = (Instant::now(), SystemTime::now());
        for g in file.grants.into_iter().take(MAX_GRANTS) {
            let deadline = match g.expires_at.as_deref().map(humantime::parse_rfc3339_weak) {
                None => None,
                Some(Ok(end)) => match end.duration_since(wall) {
                    Ok(left) if !left.is_zero() => Some(now + left),
                    _ => continue,
                },
                Some(Err(_)) => continue,
            };
            let Ok(args) = ArgMatch::compile(&format!("grant '{}'", g.id), &g.args) else {
                continue;
            };
            grants.insert(g, args, deadline);
        }
        grants
    }

    fn insert(&mut self, grant: Grant, args: ArgMatch, deadline: Option<Instant>) {
        self.seq += 1;
        self.count += 1;
        let seq = self.seq;
        self.by_tool
            .entry(grant.tool.clone())
            .or_default()
            .push(Live {
                grant,
                args,
                deadline,
                seq,
            });
    }

    /// The grant that decides the call: a remembered deny before any allow.
    pub fn find(&self, c: &CallFacts<'_>) -> Option<&Grant> {
        let list = self.by_tool.get(c.tool)?;
        let now = Instant::now();
        let mut allow = None;
        for live in list.iter().filter(|l| l.covers(c, now)) {
            if live.grant.decision == GrantDecision::Deny {
                return Some(&live.grant);
            }
            allow.get_or_insert(&live.grant);
        }
        allow
    }

    /// Adds a grant (`args` compiled from its `args`) and writes the file. A `minutes`
    /// grant ends `lasts` from now.
    pub fn add(
        &mut self,
        mut grant: Grant,
        args: ArgMatch,
        lasts: Option<Duration>,
    ) -> Result<Grant, Error> {
        self.drop_expired();
        if self.count >= MAX_GRANTS {
            return Err(Error::new(
                ErrorCode::PayloadTooLarge,
                format!("{MAX_GRANTS} grants are kept at most; revoke some first (tap approvals grants, tap approvals revoke GRANT)"),
            ));
        }
        let deadline = lasts.map(|d| Instant::now() + d);
        grant.expires_at = lasts.map(|d| crate::time::rfc3339(SystemTime::now() + d));
        self.insert(grant.clone(), args, deadline);
        self.save()?;
        Ok(grant)
    }

    /// Removes grant `id` and writes the file.
    pub fn revoke(&mut self, id: &str) -> Result<Grant, Error> {
        let mut found = None;
        for list in self.by_tool.values_mut() {
            if let Some(i) = list.iter().position(|l| l.grant.id == id) {
                found = Some(list.remove(i).grant);
                break;
            }
        }
        let Some(grant) = found else {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!("No grant '{id}' (see tap approvals grants)"),
            ));
        };
        self.count -= 1;
        self.by_tool.retain(|_, l| !l.is_empty());
        self.save()?;
        Ok(grant)
    }

    /// Every grant in force, oldest first.
    pub fn list(&mut self) -> Vec<Grant> {
        self.drop_expired();
        let mut all: Vec<&Live> = self.by_tool.values().flatten().collect();
        all.sort_by_key(|l| l.seq);
        all.into_iter().map(|l| l.grant.clone()).collect()
    }

    fn drop_expired(&mut self) {
        let now = Instant::now();
        let before = self.count;
        for list in self.by_tool.values_mut() {
            list.retain(|l| l.deadline.is_none_or(|d| now < d));
        }
        self.by_tool.retain(|_, l| !l.is_empty());
        self.count = self.by_tool.values().map(Vec::len).sum();
        if self.count != before {
            if let Err(e) = self.save() {
                tracing::warn!(error = %e, "could not write the grants file");
            }
        }
    }

    fn save(&self) -> Result<(), Error> {
        let mut all: Vec<&Live> = self.by_tool.values().flatten().collect();
        all.sort_by_key(|l| l.seq);
        let file = GrantsFile {
            grants: all.into_iter().map(|l| l.grant.clone()).collect(),
        };
        let text = serde_json::to_string_pretty(&file).expect("grants serialize");
        crate::auth::files::write_private(&self.path, &text)
            .map_err(|e| Error::internal(format!("could not write the grants file: {e}")))
    }
}
