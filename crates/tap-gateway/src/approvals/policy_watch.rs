//! `policy.json` edited by hand applies without a restart. The file is followed as a
//! session's `tap.config.json` is (`emitters/config.rs`): its [`crate::time::FileStamp`]
//! (modification time and size) is looked at every [`POLICY_FILE_POLL_INTERVAL`], and a
//! change reads the file again. A file that cannot be used then asks every call of a
//! provider's tool, exactly as at start, and the log and `policy.list` say why; fixed, its
//! rules apply at the next look. Polling rather than a file-system watch: one `stat` every
//! two seconds costs nothing, and it sees an editor's rename-over-the-file, a file made
//! where there was none and one removed alike.

use super::Approvals;
use crate::limits::POLICY_FILE_POLL_INTERVAL;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Follows `policy.json` until `stopping`; `changed` runs after a read that changed the
/// policy in force (a rule, the timeout, or whether the file can be used). A read that
/// changed nothing (the gateway's own `policy.set`, a `touch`) is silent.
pub(crate) async fn follow(
    approvals: &Approvals,
    stopping: &CancellationToken,
    changed: impl Fn(),
) {
    let path = approvals.data_dir.join(super::policy::FILE_NAME);
    // Unknown until the first look, which reads the file again: an edit made between the
    // gateway's first read and this task's start is not missed.
    let mut seen = None;
    loop {
        let at = path.clone();
        let now = tokio::task::spawn_blocking(move || crate::time::file_stamp(&at)).await;
        if let Ok(now) = now {
            if seen != Some(now) {
                seen = Some(now);
                let before = approvals.policy();
                approvals.reload();
                let after = approvals.policy();
                if !same(&before, &after) {
                    match &after.error {
                        Some(e) => {
                            tracing::warn!(error = %e, "policy.json changed and cannot be used; every call of a provider's tool is asked until it is fixed")
                        }
                        None => tracing::info!(
                            rules = after.rules.len(),
                            "policy.json changed; its rules apply now"
                        ),
                    }
                    changed();
                }
            }
        }
        tokio::select! {
            _ = stopping.cancelled() => return,
            _ = tokio::time::sleep(POLICY_FILE_POLL_INTERVAL) => {}
        }
    }
}

/// Whether two readings of the file decide every call alike.
fn same(a: &Arc<super::policy::Policy>, b: &Arc<super::policy::Policy>) -> bool {
    a.timeout == b.timeout
        && a.error == b.error
        && a.rules.len() == b.rules.len()
        && a.rules.iter().zip(&b.rules).all(|(x, y)| x.rule == y.rule)
}
