//! The in-process gateways S1-S4 and S7 run against, each with its sessions and
//! providers, and the ledger records a run on one of them caused.

use crate::scenarios;
use tap_gateway::History;

/// An in-process gateway the scenarios run against, with its two sessions: `main` (one
/// provider, tool `echo`) and `fan` (10 providers, one tool each).
pub struct Setup {
    pub history: History,
    pub rig: scenarios::Rig,
    pub main: String,
    pub fan: String,
}

impl Setup {
    /// Records the ledger has committed so far (after a flush: everything queued).
    pub fn written(&self) -> u64 {
        self.rig.gateway().diagnostics().ledger.written
    }
}

/// A run, with the ledger records it caused (committed; counted after a flush).
pub struct Counted<T> {
    pub run: T,
    pub records: u64,
}

/// An in-process gateway keeping history as `history` says, with a session for S1/S3/S4
/// (one provider, tool `echo`) and a session for S2 (10 providers, one tool each).
pub async fn setup_rig(history: History) -> Result<Setup, String> {
    fan_rig(scenarios::Rig::start(history).await?, history).await
}

/// [`setup_rig`] on a gateway started by the caller (S12's, with the rollup off or on).
pub async fn fan_rig(mut rig: scenarios::Rig, history: History) -> Result<Setup, String> {
    let main = rig.session("bench").await?;
    rig.provider("echo-provider", &main, &["echo".to_string()])
        .await?;
    let fan = rig.session("bench-fan").await?;
    for (i, tool) in scenarios::fan_tools().into_iter().enumerate() {
        rig.provider(&format!("fan-{i}"), &fan, &[tool]).await?;
    }
    Ok(Setup {
        history,
        rig,
        main,
        fan,
    })
}
