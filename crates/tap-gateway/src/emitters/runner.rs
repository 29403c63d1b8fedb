//! An emitter's task: runs on its schedule until it is stopped, its session ends or it is
//! done (`maxRuns`, a one-time prompt). Each run is recorded (in memory, in the ledger) and
//! is a trace: `emitter.run` with `spawn`, `lines` (counts by outcome) or `prompt.dispatch`.
//! What it changes is noted for `emitters.changed` (coalesced: a line flood sends at most
//! four a second).

use super::route::{deliver, Router};
use crate::ledger::record::{EmitterRunRow, Record};
use crate::limits::{
    EMITTER_IDLE_AFTER_FAILURE, EMITTER_IDLE_AFTER_SUCCESS, EMITTER_RESTART_BACKOFF_MAX,
    EMITTER_RESTART_BACKOFF_START,
};
use crate::processes::command::{Batch, Lines};
use crate::state::emitters::emitter::Emitter;
use crate::state::Core;
use crate::trace::OpenSpan;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tap_protocol::emitters::{
    EmitterKind, EmitterRun, EmitterStatus, LineCounts, RunTrigger, Schedule,
};
use tap_protocol::provider::PushLevel;
use tokio::sync::Notify;

/// How one run ended.
struct Ended {
    ok: bool,
}

pub(crate) async fn run(core: Arc<Core>, em: Arc<Emitter>) {
    let mut trigger = RunTrigger::Start;
    let mut backoff = EMITTER_RESTART_BACKOFF_START;
    let mut due = SystemTime::now();
    loop {
        let ended = match em.spec.kind {
            EmitterKind::Command => run_command(&core, &em, trigger, due).await,
            EmitterKind::Prompt => run_prompt(&core, &em, trigger, due),
        };
        if em.cancel.is_cancelled() {
            em.set_status(EmitterStatus::Stopped);
            break;
        }
        let done = em
            .spec
            .max_runs
            .is_some_and(|max| em.live().run_count >= max);
        if done {
            em.set_status(EmitterStatus::Completed);
            break;
        }
        let wait = match em.spec.schedule {
            Schedule::Continuous if em.spec.restart_on_failure && !ended.ok => {
                let wait = backoff;
                backoff = (backoff * 2).min(EMITTER_RESTART_BACKOFF_MAX);
                trigger = RunTrigger::Restart;
                wait
            }
            Schedule::Continuous => {
                em.set_status(if ended.ok {
                    EmitterStatus::Exited
                } else {
                    EmitterStatus::Error
                });
                break;
            }
            Schedule::OneTime => {
                em.set_status(EmitterStatus::Completed);
                break;
            }
            Schedule::Timed => {
                trigger = RunTrigger::Schedule;
                em.spec.every.unwrap_or(Duration::from_secs(60))
            }
            Schedule::Idle => {
                trigger = RunTrigger::Idle;
                if ended.ok {
                    EMITTER_IDLE_AFTER_SUCCESS
                } else {
                    EMITTER_IDLE_AFTER_FAILURE
                }
            }
        };
        {
            let mut live = em.live();
            live.status = Some(EmitterStatus::Waiting);
            live.next_run_at = Some(SystemTime::now() + wait);
        }
        core.emitters.changed.changed();
        // Missed runs are not caught up: the next one is `every` after this one ended.
        tokio::select! {
            _ = em.cancel.cancelled() => {}
            _ = tokio::time::sleep(wait) => {}
        }
        if em.spec.schedule == Schedule::Idle {
            wait_for_idle(&core, &em).await;
        }
        if em.cancel.is_cancelled() {
            em.set_status(EmitterStatus::Stopped);
            break;
        }
        due = em.live().next_run_at.take().unwrap_or_else(SystemTime::now);
    }
    em.live().next_run_at = None;
    // Stopped, completed, exited or failed.
    core.emitters.changed.changed();
}

/// Returns once the session is idle (or the emitter stopped).
async fn wait_for_idle(core: &Core, em: &Emitter) {
    loop {
        let Some((idle, notify)) = session_idle(core, &em.session_id) else {
            return;
        };
        if idle {
            return;
        }
        tokio::select! {
            _ = em.cancel.cancelled() => return,
            _ = notify.notified() => {}
        }
    }
}

/// Whether the session is idle now, and what is notified when it goes idle.
fn session_idle(core: &Core, session_id: &str) -> Option<(bool, Arc<Notify>)> {
    let state = core.state();
    let s = state.sessions.get(session_id)?;
    Some((
        s.busy == tap_protocol::host::BusyState::Idle,
        s.idle.clone(),
    ))
}

/// A new run: counted, recorded, and its root span opened.
fn begin(
    core: &Core,
    em: &Emitter,
    trigger: RunTrigger,
    due: SystemTime,
) -> (EmitterRun, OpenSpan) {
    let run_no = {
        let mut live = em.live();
        live.run_count += 1;
        live.status = Some(EmitterStatus::Running);
        live.next_run_at = None;
        live.run_count
    };
    let mut root = core.tracer.start("emitter.run", None);
    root.session(&em.session_id);
    root.provider(super::route::EMITTERS_PROVIDER);
    root.set("emitter", em.spec.name.as_str());
    root.set("run", i64::from(run_no));
    root.set("trigger", trigger_name(trigger));
    let started = SystemTime::now();
    let run = EmitterRun {
        run: run_no,
        trigger,
        status: EmitterStatus::Running,
        scheduled_at: crate::time::rfc3339(due.min(started)),
        started_at: crate::time::rfc3339(started),
        ended_at: None,
        duration_ms: None,
        exit_code: None,
        signal: None,
        lines: LineCounts::default(),
        error: None,
        trace_id: root.context().trace_hex(),
    };
    em.put_run(run.clone());
    core.emitters.changed.changed();
    (run, root)
}

/// The run's end: recorded in memory and in the ledger, its span finished.
fn finish(
    core: &Core,
    em: &Emitter,
    mut run: EmitterRun,
    root: OpenSpan,
    started: Instant,
    status: EmitterStatus,
) {
    run.status = status;
    run.ended_at = Some(crate::time::rfc3339(SystemTime::now()));
    run.duration_ms = Some(started.elapsed().as_millis() as u64);
    if let Some(e) = &run.error {
        em.live().last_error = Some(e.clone());
    }
    match &run.error {
        Some(e) => root.fail("EMITTER_RUN", e.clone()),
        None => root.ok(),
    }
    core.ledger
        .write_detached(Record::EmitterRun(Box::new(EmitterRunRow {
            session_id: em.session_id.clone(),
            emitter: em.spec.name.clone(),
            run: run.clone(),
        })));
    em.put_run(run);
    core.emitters.changed.changed();
}

async fn run_command(core: &Core, em: &Emitter, trigger: RunTrigger, due: SystemTime) -> Ended {
    let (mut run, root) = begin(core, em, trigger, due);
    let started = Instant::now();
    let mut spawn = root.child("spawn");
    spawn.session(&em.session_id);
    spawn.set("command", em.spec.text.as_str());
    spawn.set("cwd", em.spec.cwd.display().to_string());
    let secrets = [
        core.secrets.gateway_token.as_str(),
        core.secrets.host_token.as_str(),
        core.secrets.control_token.as_str(),
    ];
    let mut child = match crate::processes::command::spawn(
        &em.spec.text,
        &em.spec.cwd,
        &em.session_id,
        &em.spec.stream,
        &secrets,
        &core.config.emitter_env,
        &core.config.child_env_remove,
    ) {
        Ok(c) => {
            if let Some(pid) = c.id() {
                spawn.set("pid", i64::from(pid));
            }
            spawn.ok();
            c
        }
        Err(e) => {
            let message = format!("could not start `bash -lc`: {e}");
            spawn.fail("SPAWN", message.clone());
            run.error = Some(message);
            finish(core, em, run, root, started, EmitterStatus::Error);
            return Ended { ok: false };
        }
    };
    let pid = child.id();
    // Removed when this run ends; left behind only if the gateway dies first, for the
    // next one to clean up.
    let _record = crate::processes::orphans::record(&core.config.data_dir, pid);
    let mut lines_span = root.child("lines");
    lines_span.session(&em.session_id);
    let mut out = child.stdout.take().map(Lines::new);
    let mut err = child.stderr.take().map(Lines::new);
    let idle = session_idle(core, &em.session_id)
        .map(|(_, n)| n)
        .unwrap_or_default();
    let base = em.live().counts;
    let mut router = Router::new(core, em, run.run, run.trace_id.clone());
    let mut stopped = false;
    // A batch per pipe: both reads are pending in the `select!` at once.
    let (mut out_lines, mut err_lines) = (Batch::default(), Batch::default());
    while out.is_some() || err.is_some() {
        let source = tokio::select! {
            _ = em.cancel.cancelled() => {
                stopped = true;
                em.set_status(EmitterStatus::Stopping);
                core.emitters.changed.changed();
                crate::processes::group::stop_group(&mut child, pid).await;
                break;
            }
            more = next(&mut out, &mut out_lines) => {
                if !more {
                    out = None;
                }
                Some(("emitter:stdout", &mut out_lines))
            },
            more = next(&mut err, &mut err_lines) => {
                if !more {
                    err = None;
                }
                // Read either way, so a chatty stderr never blocks the child.
                if em.spec.include_stderr {
                    Some(("emitter:stderr", &mut err_lines))
                } else {
                    err_lines.clear();
                    None
                }
            },
            _ = idle.notified(), if router.waiting() => {
                router.flush_injects();
                None
            }
        };
        if let Some((source, lines)) = source {
            if !lines.is_empty() {
                router.lines(lines, source).await;
                em.live().counts = add(base, router.counts);
                core.emitters.changed.changed();
            }
        }
    }
    let status = if stopped {
        None
    } else {
        child.wait().await.ok()
    };
    // A background grandchild must not outlive its run.
    crate::processes::group::kill_group(pid);
    em.live().counts = add(base, router.counts);
    // Injects that wait for the session to go idle are the run's to hand over: it ends
    // once they are delivered (or it is stopped).
    while router.waiting() {
        let notified = idle.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if router.flush_injects() {
            break;
        }
        tokio::select! {
            _ = em.cancel.cancelled() => break,
            _ = &mut notified => {}
        }
    }
    let counts = router.counts;
    em.live().counts = add(base, counts);
    lines_span.set("lines", counts.lines as i64);
    lines_span.set("kept", counts.kept as i64);
    lines_span.set("dropped", counts.dropped as i64);
    lines_span.set("surfaced", counts.surfaced as i64);
    lines_span.set("injected", counts.injected as i64);
    lines_span.ok();
    run.lines = counts;
    let (status, ok) = match status {
        None => (EmitterStatus::Stopped, false),
        Some(s) => {
            run.exit_code = s.code();
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                run.signal = s.signal();
            }
            if !s.success() {
                run.error = Some(match (s.code(), run.signal) {
                    (Some(c), _) => format!("exited with code {c}"),
                    (None, Some(sig)) => format!("ended by signal {sig}"),
                    _ => "ended abnormally".into(),
                });
            }
            (EmitterStatus::Exited, s.success())
        }
    };
    finish(core, em, run, root, started, status);
    Ended { ok }
}

async fn next<R: tokio::io::AsyncRead + Unpin>(
    lines: &mut Option<Lines<R>>,
    batch: &mut Batch,
) -> bool {
    match lines {
        Some(l) => l.next_batch(batch).await,
        None => std::future::pending().await,
    }
}

fn add(a: LineCounts, b: LineCounts) -> LineCounts {
    LineCounts {
        lines: a.lines + b.lines,
        kept: a.kept + b.kept,
        dropped: a.dropped + b.dropped,
        surfaced: a.surfaced + b.surfaced,
        injected: a.injected + b.injected,
    }
}

/// A prompt run: the prompt goes to the session as an `inject` delivery with `prompt` set,
/// so the host starts a turn; it is kept in the stream too.
fn run_prompt(core: &Core, em: &Emitter, trigger: RunTrigger, due: SystemTime) -> Ended {
    let (mut run, root) = begin(core, em, trigger, due);
    let started = Instant::now();
    let mut dispatch = root.child("prompt.dispatch");
    dispatch.session(&em.session_id);
    let at = SystemTime::now();
    let text = &em.spec.text;
    let delivered = deliver(
        core,
        &em.session_id,
        &em.spec.stream,
        PushLevel::Inject,
        text,
        Some(text.clone()),
        at,
    );
    let mut router = Router::new(core, em, run.run, run.trace_id.clone());
    let _ = router.keep_prompt(text.clone());
    let mut counts = em.live().counts;
    counts.lines += 1;
    if delivered {
        counts.injected += 1;
        dispatch.ok();
    } else {
        dispatch.fail(
            "NO_HOST",
            "the session has no host connected to take the prompt",
        );
        run.error = Some("the session has no host connected".into());
    }
    em.live().counts = counts;
    run.lines = LineCounts {
        lines: 1,
        injected: u64::from(delivered),
        ..LineCounts::default()
    };
    let status = if delivered {
        EmitterStatus::Completed
    } else {
        EmitterStatus::Error
    };
    finish(core, em, run, root, started, status);
    Ended { ok: delivered }
}

fn trigger_name(t: RunTrigger) -> &'static str {
    match t {
        RunTrigger::Start => "start",
        RunTrigger::Schedule => "schedule",
        RunTrigger::Idle => "idle",
        RunTrigger::Restart => "restart",
    }
}
