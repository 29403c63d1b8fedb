//! The agent's reading tools (issue 40): `tap_query_records` over the real SQLite history
//! file — events of its session and of earlier sessions of its workspace (never another
//! workspace's, never a later session's), every filter, paging with cursors, the answer's
//! bounds against huge pages, bad cursors, FTS syntax and giant texts — and
//! `tap_get_session_state`, which shows what the host reported in `session.register` /
//! `session.state` over its real socket (mode, model, capabilities) and the session's
//! emitters and providers.

use serde_json::{json, Value};
use tap_client::HostClient;
use tap_protocol::host::BusyState;
use tap_protocol::host::{
    HostCapabilities, HostClient as HostClientInfo, SessionRegister, SessionStateReport,
    UiCapabilities,
};
use tap_protocol::provider::SessionInfo;
use tap_testkit::*;

/// The error code and message of a call that must fail.
async fn refused(host: &HostClient, session: &str, tool: &str, args: Value) -> (String, String) {
    let r = result_of(invoke(host, session, tool, args.clone())).await;
    assert!(r.error.is_some(), "{tool} {args} should fail: {r:?}");
    (code(&r).unwrap_or_default().to_string(), r.error.unwrap())
}

async fn open(host: &HostClient, label: &str, cwd: &std::path::Path) -> SessionInfo {
    host.register_session(SessionRegister {
        label: Some(label.into()),
        cwd: Some(cwd.display().to_string()),
        ..Default::default()
    })
    .await
    .unwrap()
}

async fn post(host: &HostClient, s: &str, stream: &str, message: &str) {
    call_ok(
        host,
        s,
        "tap_post",
        json!({"channel": stream, "message": message}),
    )
    .await;
}

fn texts(answer: &Value) -> Vec<String> {
    answer["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

async fn query(host: &HostClient, s: &str, args: Value) -> Value {
    call_ok(host, s, "tap_query_records", args).await
}

#[tokio::test]
async fn query_records_reads_its_workspace_only_with_every_filter_and_bounded_pages() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let work = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();

    // An earlier session of the workspace, one of another workspace, then the caller.
    let earlier = open(&host, "earlier", work.path()).await;
    post(&host, &earlier.id, "notes", "alpha build failed on linux").await;
    post(&host, &earlier.id, "review", "beta looks fine").await;
    host.end_session(&earlier.id).await.unwrap();
    let stranger = open(&host, "stranger", other.path()).await;
    post(
        &host,
        &stranger.id,
        "notes",
        "alpha secret of another workspace",
    )
    .await;
    let me = open(&host, "me", work.path()).await;
    post(&host, &me.id, "notes", "gamma written by me").await;
    // A session that starts later in the same workspace is not the caller's past.
    let later = open(&host, "later", work.path()).await;
    post(&host, &later.id, "notes", "delta from a later session").await;
    gw.handle.gateway().flush_history().await;

    let all = query(&host, &me.id, json!({})).await;
    assert_eq!(all["records"], "events");
    assert_eq!(all["sessionsSearched"], 2, "{all}");
    let mut seen = texts(&all);
    seen.sort();
    assert_eq!(
        seen,
        [
            "alpha build failed on linux",
            "beta looks fine",
            "gamma written by me"
        ]
    );
    assert!(all.get("nextCursor").is_none());
    // The earlier session reads itself only: the caller came after it.
    let past = query(&host, &later.id, json!({"session": "current"})).await;
    assert_eq!(texts(&past), ["delta from a later session"]);
    let theirs = query(&host, &stranger.id, json!({})).await;
    assert_eq!(texts(&theirs), ["alpha secret of another workspace"]);

    // Filters: session, stream, provider, kind, text, time.
    let mine = query(&host, &me.id, json!({"session": "current"})).await;
    assert_eq!(texts(&mine), ["gamma written by me"]);
    let one = query(&host, &me.id, json!({"session": earlier.id})).await;
    assert_eq!(texts(&one).len(), 2);
    let (c, m) = refused(
        &host,
        &me.id,
        "tap_query_records",
        json!({"session": stranger.id}),
    )
    .await;
    assert_eq!(c, "NOT_FOUND", "{m}");
    let notes = query(&host, &me.id, json!({"stream": "notes"})).await;
    assert_eq!(texts(&notes).len(), 2);
    let review = query(
        &host,
        &me.id,
        json!({"stream": "review@emitters", "provider": "emitters"}),
    )
    .await;
    assert_eq!(texts(&review), ["beta looks fine"]);
    let keep = query(&host, &me.id, json!({"kind": "keep"})).await;
    assert_eq!(texts(&keep).len(), 3, "tap_post keeps: {keep}");
    assert!(texts(&query(&host, &me.id, json!({"kind": "inject"})).await).is_empty());
    let alpha = query(&host, &me.id, json!({"text": "alpha"})).await;
    assert_eq!(
        texts(&alpha),
        ["alpha build failed on linux"],
        "never the other workspace's"
    );
    assert_eq!(
        texts(&query(&host, &me.id, json!({"text": "buil LINUX"})).await).len(),
        1
    );
    assert!(
        texts(&query(&host, &me.id, json!({"since": "2999-01-01T00:00:00Z"})).await).is_empty()
    );
    assert_eq!(
        texts(&query(&host, &me.id, json!({"since": "1h"})).await).len(),
        3
    );
    assert!(texts(&query(&host, &me.id, json!({"until": "1h"})).await).is_empty());
    let (c, _) = refused(
        &host,
        &me.id,
        "tap_query_records",
        json!({"since": "last tuesday"}),
    )
    .await;
    assert_eq!(c, "INVALID_JSON");
    let (c, m) = refused(
        &host,
        &me.id,
        "tap_query_records",
        json!({"records": "traces", "text": "x"}),
    )
    .await;
    assert_eq!(c, "INVALID_JSON", "{m}");
    assert!(m.contains("does not apply"), "{m}");

    // FTS syntax is searched as words: no error, and no way past the workspace fence.
    for hostile in [
        "alpha\" OR \"secret",
        "secret OR alpha",
        "NEAR(alpha secret)",
        "*",
        "-alpha",
        "alpha:",
        "\"",
        "') OR 1=1 --",
    ] {
        let a = query(&host, &me.id, json!({"text": hostile})).await;
        assert!(
            texts(&a).iter().all(|t| !t.contains("secret")),
            "{hostile}: {a}"
        );
    }
    // A giant search text and a huge page are refused by the schema.
    let (c, _) = refused(
        &host,
        &me.id,
        "tap_query_records",
        json!({"text": "a".repeat(501)}),
    )
    .await;
    assert_eq!(c, "INVALID_JSON");
    let (c, _) = refused(
        &host,
        &me.id,
        "tap_query_records",
        json!({"limit": 1_000_000}),
    )
    .await;
    assert_eq!(c, "INVALID_JSON");

    // Paging: one at a time, in order, nothing twice; bad cursors refused.
    let mut cursor = None;
    let mut paged = Vec::new();
    loop {
        let mut args = json!({"limit": 1});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = query(&host, &me.id, args).await;
        paged.extend(texts(&page));
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
        assert!(paged.len() <= 3, "paging does not end: {paged:?}");
    }
    assert_eq!(paged, texts(&all));
    for bad in ["garbage", "traces:5", "events:abc", "events:", "runs:1.x"] {
        let (c, m) = refused(&host, &me.id, "tap_query_records", json!({"cursor": bad})).await;
        assert_eq!(c, "INVALID_JSON", "{bad}: {m}");
    }
}

#[tokio::test]
async fn query_records_bounds_big_events_and_reads_traces_spans_and_runs() {
    let gw = TestGateway::for_emitters().await;
    let host = gw.host().await;
    let work = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let me = open(&host, "me", work.path()).await;
    let stranger = open(&host, "stranger", other.path()).await;
    post(&host, &stranger.id, "notes", "elsewhere").await;
    // 40 posts of 16 KiB: far more than one answer may hold.
    let big = "word ".repeat(16 * 1024 / 5);
    for i in 0..40 {
        post(&host, &me.id, "big", &format!("{i:02} {big}")).await;
    }
    gw.handle.gateway().flush_history().await;
    let first = query(&host, &me.id, json!({"stream": "big", "limit": 100})).await;
    let shown = first["count"].as_u64().unwrap();
    assert!(shown > 0 && shown < 40, "{shown} of 40 in one answer");
    assert!(
        first.to_string().len() < 80 * 1024,
        "{}",
        first.to_string().len()
    );
    let item = &first["items"][0];
    assert_eq!(item["truncated"], true);
    assert!(item["text"].as_str().unwrap().chars().count() <= 2001);
    assert!(first["note"].as_str().unwrap().contains("ended early"));
    // The cursor goes on where the answer ended: all 40, each once.
    let mut numbers: Vec<String> = texts(&first).iter().map(|t| t[..2].to_string()).collect();
    let mut cursor = first["nextCursor"].as_str().map(str::to_string);
    while let Some(c) = cursor {
        let page = query(
            &host,
            &me.id,
            json!({"stream": "big", "limit": 100, "cursor": c}),
        )
        .await;
        numbers.extend(texts(&page).iter().map(|t| t[..2].to_string()));
        cursor = page["nextCursor"].as_str().map(str::to_string);
    }
    let want: Vec<String> = (0..40).rev().map(|i| format!("{i:02}")).collect();
    assert_eq!(numbers, want);

    // Traces: the calls above are traced in this session; a trace's spans by its id.
    let traces = query(
        &host,
        &me.id,
        json!({"records": "traces", "kind": "tool.call", "tool": "tap_post", "status": "ok", "limit": 5}),
    )
    .await;
    assert_eq!(traces["count"], 5, "{traces}");
    assert!(traces["nextCursor"].is_string());
    let trace_id = traces["items"][0]["traceId"].as_str().unwrap().to_string();
    assert!(traces["items"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["sessionId"] == me.id.as_str()));
    assert!(texts(
        &query(
            &host,
            &me.id,
            json!({"records": "traces", "status": "error"})
        )
        .await
    )
    .is_empty());
    let spans = query(
        &host,
        &me.id,
        json!({"records": "spans", "traceId": trace_id}),
    )
    .await;
    assert!(spans["count"].as_u64().unwrap() >= 1, "{spans}");
    assert_eq!(spans["items"][0]["traceId"], trace_id.as_str());
    // Another workspace's trace is not found, from either side.
    let theirs = query(
        &host,
        &stranger.id,
        json!({"records": "traces", "tool": "tap_post"}),
    )
    .await;
    let their_trace = theirs["items"][0]["traceId"].as_str().unwrap();
    let (c, _) = refused(
        &host,
        &me.id,
        "tap_query_records",
        json!({"records": "spans", "traceId": their_trace}),
    )
    .await;
    assert_eq!(c, "NOT_FOUND");
    let (c, _) = refused(
        &host,
        &me.id,
        "tap_query_records",
        json!({"records": "spans"}),
    )
    .await;
    assert_eq!(c, "INVALID_JSON");

    // Emitter runs.
    call_ok(
        &host,
        &me.id,
        "tap_start_emitter",
        json!({"name": "once", "command": "echo ran once"}),
    )
    .await;
    let runs = eventually("the emitter's run in the history", || {
        let (host, me, gw) = (&host, &me, &gw);
        async move {
            gw.handle.gateway().flush_history().await;
            let r = query(host, &me.id, json!({"records": "runs", "stream": "once"})).await;
            (r["count"] == 1 && r["items"][0]["status"] != "running").then_some(r)
        }
    })
    .await;
    assert_eq!(runs["items"][0]["emitter"], "once");
    assert_eq!(runs["items"][0]["sessionId"], me.id.as_str());
    assert!(texts(&query(&host, &stranger.id, json!({"records": "runs"})).await).is_empty());
}

#[tokio::test]
async fn session_state_shows_what_the_host_reported_and_the_session_holds() {
    let gw = TestGateway::for_emitters().await;
    let host = gw.host().await;
    let work = tempfile::tempdir().unwrap();
    let s = host
        .register_session(SessionRegister {
            label: Some("copilot".into()),
            cwd: Some(work.path().display().to_string()),
            mode: Some("interactive".into()),
            model: Some("gpt-5".into()),
            capabilities: Some(HostCapabilities {
                ui: UiCapabilities {
                    confirm: true,
                    elicitation: false,
                },
                modes: vec!["interactive".into(), "plan".into(), "autopilot".into()],
                client: Some(HostClientInfo {
                    name: "copilot-cli".into(),
                    version: Some("1.0.102".into()),
                }),
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    let _p = gw.bound("greeter", &s.id, json!([tool("greet")])).await;
    call_ok(
        &host,
        &s.id,
        "tap_start_emitter",
        json!({"name": "watch", "command": "sleep 30", "every": "5m"}),
    )
    .await;
    let state = call_ok(&host, &s.id, "tap_get_session_state", json!({})).await;
    assert_eq!(state["sessionId"], s.id.as_str());
    assert_eq!(state["label"], "copilot");
    assert_eq!(state["cwd"], work.path().display().to_string());
    assert_eq!(state["state"], "idle");
    assert_eq!(state["mode"], "interactive");
    assert_eq!(state["model"], "gpt-5");
    assert_eq!(state["host"]["kind"], "sessionHost");
    assert_eq!(
        state["host"]["capabilities"]["ui"],
        json!({"confirm": true, "elicitation": false})
    );
    assert_eq!(
        state["host"]["capabilities"]["client"]["name"],
        "copilot-cli"
    );
    assert_eq!(state["host"]["canChangeMode"], true);
    let providers = state["providers"].as_array().unwrap();
    assert_eq!(providers.len(), 1, "{state}");
    assert_eq!(providers[0]["name"], "greeter");
    assert_eq!(providers[0]["tools"], 1);
    let emitters = state["emitters"].as_array().unwrap();
    assert_eq!(emitters[0]["name"], "watch");
    assert_eq!(emitters[0]["every"], "5m");
    assert_eq!(state["approvalsWaiting"]["count"], 0);
    assert_eq!(state["pairingsPending"]["count"], 0);

    // `session.state` changes what it names and keeps the rest.
    host.report_state(SessionStateReport {
        session_id: s.id.clone(),
        state: BusyState::Busy,
        mode: Some("plan".into()),
        model: None,
        capabilities: None,
    })
    .unwrap();
    let state = eventually("the new mode", || {
        let host = &host;
        let s = &s;
        async move {
            let st = call_ok(host, &s.id, "tap_get_session_state", json!({})).await;
            (st["mode"] == "plan").then_some(st)
        }
    })
    .await;
    assert_eq!(state["state"], "busy");
    assert_eq!(state["model"], "gpt-5");
    assert_eq!(state["host"]["capabilities"]["ui"]["confirm"], true);

    // A hostile report is refused whole: neither its busy state nor its model applies.
    let mut raw = raw_host(&gw).await;
    raw.send(json!({"type": "session.register", "requestId": "r", "model": "m".repeat(129)}))
        .await;
    let e = raw.expect("error").await;
    assert_eq!(e["code"], "PAYLOAD_TOO_LARGE", "{e}");
    raw.send(
        json!({"type": "session.register", "requestId": "r2", "sessionId": "raw-1",
                     "capabilities": {"modes": vec!["m"; 17]}}),
    )
    .await;
    let e = raw.expect("error").await;
    assert_eq!(e["code"], "PAYLOAD_TOO_LARGE", "{e}");
    raw.send(json!({"type": "session.register", "requestId": "r3", "sessionId": "raw-1"}))
        .await;
    raw.expect("session.registered").await;
    raw.send(
        json!({"type": "session.state", "sessionId": "raw-1", "state": "busy",
                     "mode": "x".repeat(1000)}),
    )
    .await;
    let e = expect_skipping(&mut raw, "error", &["session.tools"]).await;
    assert_eq!(e["code"], "PAYLOAD_TOO_LARGE", "{e}");
    let st = call_ok(&host, "raw-1", "tap_get_session_state", json!({})).await;
    assert_eq!(st["state"], "idle");
    assert_eq!(st["mode"], Value::Null);
    assert_eq!(
        st["host"]["capabilities"]["ui"],
        json!({"confirm": false, "elicitation": false})
    );
    assert_eq!(st["host"]["canChangeMode"], false);
}
