//! Property: every accepted `tool.invoke` ends in exactly one terminal `tool.result`,
//! whatever the interleaving of provider results (also late and duplicate ones), host
//! cancels, timeouts, provider disconnects and rebinds, retries of the same `callId`, and
//! host drops with a resume that lists the calls still owed (`auth.pendingCalls`), where
//! the old socket lost what it had queued or written but the host had not read.
//!
//! Runs the real connection handlers of an in-process gateway (`tap_gateway::fuzzing`, the
//! same entry points the fuzz targets use) on a paused clock: each case is a random
//! sequence of steps, and time passes only when a step says so, so a case takes
//! microseconds and a timeout is exact.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;
use tap_gateway::fuzzing::{Peer, World, SETTLE};

/// `echo`'s timeout (ms): the steps' sleeps straddle it.
const TOOL_TIMEOUT_MS: u64 = 1000;

#[derive(Debug, Clone)]
enum Step {
    /// The host invokes `echo` as `c<k>`; a `k` still in flight is a retry.
    Invoke(u8),
    /// The host cancels `c<k>`.
    Cancel(u8),
    /// The provider answers the n-th `tool.call` it got (maybe again, or late).
    Answer(usize, bool),
    /// The provider reports progress on the n-th call.
    Progress(usize),
    /// Virtual time passes.
    Sleep(u64),
    /// The provider's connection drops; a new one binds again with the same tool.
    Reconnect,
    /// The host stops reading: what the gateway sends waits in its socket's queue.
    Deafen,
    /// The host's socket drops and it resumes on a new one, listing the calls it still
    /// waits on. With `true`, the frames the gateway had written (the test drains them)
    /// were lost unread; with `false` they were still queued, and go to the outbox.
    Resume(bool),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u8..4).prop_map(Step::Invoke),
        2 => (0u8..4).prop_map(Step::Cancel),
        4 => (0usize..6, any::<bool>()).prop_map(|(n, ok)| Step::Answer(n, ok)),
        1 => (0usize..6).prop_map(Step::Progress),
        2 => prop_oneof![Just(0u64), 1u64..300, Just(TOOL_TIMEOUT_MS), TOOL_TIMEOUT_MS + 1..3000]
            .prop_map(Step::Sleep),
        1 => Just(Step::Reconnect),
        1 => Just(Step::Deafen),
        1 => any::<bool>().prop_map(Step::Resume),
    ]
}

fn hello() -> Value {
    json!({"type": "hello", "name": "echoer", "protocolVersion": 2, "session": "s1",
           "tools": [{"name": "echo", "description": "echoes", "parameters": {},
                      "timeout": TOOL_TIMEOUT_MS}]})
}

async fn send(peer: &mut Peer, v: Value) {
    peer.feed(v.to_string().as_bytes()).await;
}

/// Lets the tasks the last frame started run (calls, timers due now).
async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

fn frames(peer: &mut Peer) -> Vec<Value> {
    peer.drain()
        .iter()
        .map(|f| serde_json::from_slice(f).expect("the gateway sends JSON"))
        .collect()
}

/// Records the `tool.call` ids the provider was sent, in order, and how many calls each
/// host `callId` became (the invoke's `args.k`).
fn observe_calls(provider: &mut Peer, calls: &mut Vec<String>, ran: &mut BTreeMap<String, u32>) {
    for f in frames(provider) {
        if f["type"] == "tool.call" {
            calls.push(f["id"].as_str().unwrap().to_string());
            *ran.entry(f["args"]["k"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
}

/// What a run saw: per `callId`, (accepted invokes, terminal results); results that came
/// before their invoke was accepted; and `callId`s answered "it never ran" more often
/// than they were invoked without reaching the provider.
struct Seen {
    counts: BTreeMap<String, (u32, u32)>,
    early: Vec<String>,
    wrongly_never_ran: Vec<String>,
}

/// Runs `steps`; returns, per `callId`, (accepted invokes, terminal results), and any
/// result that came before its invoke was accepted.
async fn run(steps: &[Step]) -> Seen {
    let world = World::new();
    let mut host = world.host();
    send(
        &mut host,
        json!({"type": "auth", "token": tap_gateway::fuzzing::HOST_TOKEN, "protocolVersion": 1}),
    )
    .await;
    send(
        &mut host,
        json!({"type": "session.register", "requestId": "r", "sessionId": "s1"}),
    )
    .await;
    let mut provider = world.local_provider();
    send(&mut provider, hello()).await;
    settle().await;
    let resume_token = frames(&mut host)
        .into_iter()
        .find(|f| f["type"] == "auth.ok")
        .expect("auth.ok")["resumeToken"]
        .clone();
    let mut deaf = false;
    // Every tool.call id the provider was sent, in order.
    let mut calls: Vec<String> = Vec::new();
    // Invokes sent and not yet known to be accepted or refused, per callId.
    let mut sent: BTreeMap<String, u32> = BTreeMap::new();
    let mut counts: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    let mut early = Vec::new();
    // Per callId: invokes sent, calls the provider got, answers saying it never ran.
    let mut invoked: BTreeMap<String, u32> = BTreeMap::new();
    let mut ran: BTreeMap<String, u32> = BTreeMap::new();
    let mut never_ran: BTreeMap<String, u32> = BTreeMap::new();
    let mut observe_host = |host: &mut Peer, sent: &mut BTreeMap<String, u32>| {
        for f in frames(host) {
            let id = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            match f["type"].as_str() {
                Some("error") if f["replyTo"] == "tool.invoke" => {
                    *sent
                        .get_mut(&id("requestId"))
                        .expect("refused an invoke never sent") -= 1;
                }
                Some("tool.result") => {
                    let c = id("callId");
                    if f["errorCode"] == "DISCONNECTED"
                        && f["error"]
                            .as_str()
                            .is_some_and(|e| e.contains("it never ran"))
                    {
                        *never_ran.entry(c.clone()).or_default() += 1;
                    }
                    let entry = counts.entry(c.clone()).or_default();
                    // Its invoke was accepted (a refusal comes at once, before any result).
                    if let Some(n) = sent.get_mut(&c).filter(|n| **n > 0) {
                        *n -= 1;
                        entry.0 += 1;
                    } else {
                        early.push(c);
                    }
                    entry.1 += 1;
                }
                _ => {}
            }
        }
    };
    for s in steps {
        match s {
            Step::Invoke(k) => {
                let id = format!("c{k}");
                *sent.entry(id.clone()).or_default() += 1;
                *invoked.entry(id.clone()).or_default() += 1;
                send(&mut host, json!({"type": "tool.invoke", "callId": id, "sessionId": "s1", "tool": "echo", "args": {"k": id}})).await;
            }
            Step::Cancel(k) => {
                send(
                    &mut host,
                    json!({"type": "tool.cancel", "callId": format!("c{k}")}),
                )
                .await
            }
            Step::Answer(n, ok) => {
                if let Some(id) = calls.get(*n) {
                    let result = if *ok {
                        json!({"type": "tool.result", "id": id, "data": {"n": n}})
                    } else {
                        json!({"type": "tool.result", "id": id, "error": "no", "errorCode": "NOT_FOUND"})
                    };
                    send(&mut provider, result).await;
                }
            }
            Step::Progress(n) => {
                if let Some(id) = calls.get(*n) {
                    send(
                        &mut provider,
                        json!({"type": "tool.progress", "id": id, "message": "…"}),
                    )
                    .await;
                }
            }
            Step::Sleep(ms) => tokio::time::sleep(Duration::from_millis(*ms)).await,
            Step::Deafen => deaf = true,
            Step::Resume(lost) => {
                if *lost {
                    host.drain();
                }
                host.close();
                settle().await;
                // The host lists each call it has not heard back on. When it lost what
                // it had not read, it waits on one answer per `callId` (the refusal of a
                // retry is lost with the rest); otherwise everything still comes.
                let pending: Vec<String> = sent
                    .iter_mut()
                    .filter(|(_, n)| **n > 0)
                    .map(|(id, n)| {
                        if *lost {
                            *n = 1;
                        }
                        id.clone()
                    })
                    .collect();
                host = world.host();
                send(
                    &mut host,
                    json!({"type": "auth", "token": tap_gateway::fuzzing::HOST_TOKEN,
                           "protocolVersion": 1, "resumeToken": resume_token,
                           "pendingCalls": pending}),
                )
                .await;
                deaf = false;
            }
            Step::Reconnect => {
                provider.close();
                settle().await;
                provider = world.local_provider();
                send(&mut provider, hello()).await;
            }
        }
        settle().await;
        observe_calls(&mut provider, &mut calls, &mut ran);
        if !deaf {
            observe_host(&mut host, &mut sent);
        }
    }
    // Long enough for every call still open to time out.
    tokio::time::sleep(SETTLE).await;
    settle().await;
    observe_calls(&mut provider, &mut calls, &mut ran);
    observe_host(&mut host, &mut sent);
    // Invokes neither refused nor answered: accepted, and still owed a result.
    for (id, n) in sent {
        counts.entry(id).or_default().0 += n;
    }
    let wrongly_never_ran = never_ran
        .into_iter()
        .filter(|(c, n)| {
            let invoked = invoked.get(c).copied().unwrap_or(0);
            n + ran.get(c).copied().unwrap_or(0) > invoked
        })
        .map(|(c, _)| c)
        .collect();
    Seen {
        counts,
        early,
        wrongly_never_ran,
    }
}

#[test]
fn every_invoke_ends_in_exactly_one_result() {
    let mut runner = TestRunner::new(Config {
        cases: 128,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&prop::collection::vec(step(), 1..24), |steps| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .start_paused(true)
                .build()
                .unwrap();
            let Seen {
                counts,
                early,
                wrongly_never_ran,
            } = rt.block_on(run(&steps));
            prop_assert!(
                early.is_empty(),
                "results without an accepted invoke: {early:?}"
            );
            // A resume must not say a call never ran when it did (its answer was kept).
            prop_assert!(
                wrongly_never_ran.is_empty(),
                "answered 'it never ran' although they ran: {wrongly_never_ran:?}"
            );
            for (id, (accepted, results)) in counts {
                prop_assert_eq!(
                    accepted,
                    results,
                    "{}: accepted invokes vs tool.results",
                    id
                );
            }
            Ok(())
        })
        .unwrap();
}
