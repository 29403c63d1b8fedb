//! What the search surface costs, measured (`docs/clients.md`, "Search surface: what it
//! costs"): the same five tasks done both ways against a realistic catalog, every token
//! counted with `o200k_base` on what an MCP client really receives from the gateway.
//!
//! The catalog: three real MCP servers the tests already run (`server-everything` and
//! `server-filesystem` from npm, `mcp-server-time` from PyPI) and the reference fixture
//! (`good.py`), with the gateway's own `tap_*` tools. Two profiles see the same tools:
//! `full` lists them, `lean` has `"surface": "search"`. The two time tasks run again on a
//! catalog of the time server alone (`time-full`, `time-lean`): the other side of break-even. Every message below is real: the
//! `tools/list` answers, the `tap_find_tools` answers, every call's result, fetched over the
//! MCP endpoint (the stateless 2026-07-28 generation, raw JSON-RPC, so nothing is reparsed).
//!
//! The model of a task, stated so it can be argued with:
//! - a model request carries the whole tool list and the conversation so far; the user's
//!   prompt and the model's final answer are the same both ways and left out;
//! - with the full list, a task needing k calls takes k + 1 requests: one per call, then
//!   the answer; each call adds two messages (the call, its result);
//! - with search, each needed tool costs a `tap_find_tools` (query, answer) and then a
//!   `tap_call_tool` (the call wrapped, its result): 2k + 1 requests, one search per tool
//!   with a query a model could write, the tool taken from the first five matches;
//! - each message also costs [`PER_MESSAGE`] tokens of chat framing (the figure OpenAI
//!   documents for its chat format); the list's framing is left out both ways;
//! - no prompt caching: providers that cache a repeated prefix bill the repeated list for
//!   less, which favours the full list further.
//!
//! Printed with `--nocapture`; `TAP_SEARCH_COST_OUT=FILE` also writes the table as Markdown.
//! The test fails when a task's tool is not among the first five matches of its query, or
//! when the lists' figures disagree with what `profiles.list` says the clients receive.

use super::{everything, fixture, gateway_with, server_in};
use serde_json::{json, Value};
use std::fmt::Write as _;
use tap_testkit::mcp::{test_python, workspace_root};
use tap_testkit::{eventually, TestGateway};

/// Chat framing per message (role, separators), in tokens.
const PER_MESSAGE: u32 = 3;

fn tokens(text: &str) -> u32 {
    tiktoken_rs::o200k_base_singleton()
        .encode_with_special_tokens(text)
        .len() as u32
}

/// One JSON-RPC request on `/mcp/<session>` as a stateless (2026-07-28) client of
/// `profile`; its `result`.
async fn rpc(gw: &TestGateway, profile: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}});
    let mut req = reqwest::Client::new()
        .post(format!(
            "http://{}/mcp/cost-{profile}",
            gw.handle.gateway().address()
        ))
        .bearer_auth(gw.handle.gateway().host_token())
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("tap-profile", profile);
    if let Some(name) = params["name"].as_str() {
        req = req.header("mcp-name", name.to_string());
    }
    let body = req
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // A JSON body, or one SSE event carrying it.
    let text = body
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .map_or(body.as_str(), str::trim);
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {body}"));
    v.get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{method}: {v}"))
}

/// What the model reads of a call's result: its text blocks (other blocks as JSON).
fn result_text(result: &Value) -> String {
    assert_ne!(result["isError"], true, "{result}");
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| match b["text"].as_str() {
            Some(t) => t.to_string(),
            None => b.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A task: the tools it needs, each with its arguments and the query a model would search
/// it with.
struct Task {
    what: &'static str,
    steps: Vec<(&'static str, Value, &'static str)>,
}

fn tasks(dir: &str) -> Vec<Task> {
    vec![
        Task {
            what: "What time is it in Tokyo?",
            steps: vec![(
                "time__get_current_time",
                json!({"timezone": "Asia/Tokyo"}),
                "current time in a timezone",
            )],
        },
        Task {
            what: "09:30 in New York, in London time",
            steps: vec![(
                "time__convert_time",
                json!({"source_timezone": "America/New_York", "time": "09:30",
                       "target_timezone": "Europe/London"}),
                "convert time between timezones",
            )],
        },
        Task {
            what: "Read notes.txt",
            steps: vec![(
                "fs__read_text_file",
                json!({"path": format!("{dir}/notes.txt")}),
                "read a text file",
            )],
        },
        Task {
            what: "The biggest file, its first lines",
            steps: vec![
                (
                    "fs__list_directory_with_sizes",
                    json!({"path": dir, "sortBy": "size"}),
                    "list directory with file sizes",
                ),
                (
                    "fs__read_text_file",
                    json!({"path": format!("{dir}/big.md"), "head": 5}),
                    "read a text file",
                ),
            ],
        },
        Task {
            what: "Add 17 and 25",
            steps: vec![(
                "everything__get-sum",
                json!({"a": 17, "b": 25}),
                "sum of two numbers",
            )],
        },
    ]
}

/// One way of doing a task: its requests' input tokens, summed, and the last one's.
#[derive(Default)]
struct Way {
    requests: u32,
    total: u32,
    last: u32,
    /// The conversation's tokens over the requests (the list's excluded).
    history_total: u32,
}

impl Way {
    /// A request with the list (`list` tokens) and the conversation so far (`history`).
    fn request(&mut self, list: u32, history: u32) {
        self.requests += 1;
        self.total += list + history;
        self.history_total += history;
        self.last = list + history;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_surface_cost() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().canonicalize().unwrap().display().to_string();
    std::fs::write(
        work.path().join("notes.txt"),
        "Standup at 10:00.\nShip the search surface measurement.\nReview issue 38.\n",
    )
    .unwrap();
    let big: String = (1..=200)
        .map(|i| format!("Line {i} of the design notes: what each part does and why.\n"))
        .collect();
    std::fs::write(work.path().join("big.md"), big).unwrap();
    let filesystem = workspace_root()
        .join("tests/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let servers = json!({
        "everything": everything(),
        "fs": {"command": "node", "args": [filesystem.display().to_string(), dir]},
        "time": {"command": test_python(), "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
        "good": fixture("good.py", &[]),
    });
    let gw = gateway_with(servers, |_| {}).await;
    for s in ["everything", "fs", "time", "good"] {
        server_in(&gw, s, "ready").await;
    }
    std::fs::write(
        gw.dir.path().join("home/profiles.json"),
        r#"{"profiles": {"full": {}, "lean": {"surface": "search"},
             "time-full": {"servers": ["time"]},
             "time-lean": {"servers": ["time"], "surface": "search"}}}"#,
    )
    .unwrap();

    let mut table = String::new();
    let all = tasks(&dir);
    measure(&gw, ("full", "lean"), "4 MCP servers", &all, &mut table).await;
    // The same time tasks on a catalog of one small server: the other side of break-even.
    let time: Vec<Task> = all.into_iter().take(2).collect();
    measure(
        &gw,
        ("time-full", "time-lean"),
        "the time server alone",
        &time,
        &mut table,
    )
    .await;
    println!("{table}");
    if let Ok(out) = std::env::var("TAP_SEARCH_COST_OUT") {
        std::fs::write(out, &table).unwrap();
    }
}

/// Runs `tasks` as clients of `full_profile` (listed) and `lean_profile` (search, the same
/// tools) and writes the catalog's line and the table to `table`.
async fn measure(
    gw: &TestGateway,
    (full_profile, lean_profile): (&str, &str),
    what: &str,
    tasks: &[Task],
    table: &mut String,
) {
    // Each session has every server's tools before anything is measured (servers bind to
    // a new session as they come).
    let needed: Vec<&str> = tasks
        .iter()
        .flat_map(|t| t.steps.iter().map(|s| s.0))
        .collect();
    eventually("every server's tools in the full session", || async {
        let list = rpc(gw, full_profile, "tools/list", json!({})).await;
        let names: Vec<&str> = list["tools"]
            .as_array()?
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        needed.iter().all(|n| names.contains(n)).then_some(())
    })
    .await;
    eventually("every server's tools in the search session", || async {
        for n in &needed {
            let a = rpc(
                gw,
                lean_profile,
                "tools/call",
                json!({"name": "tap_find_tools", "arguments": {"query": n, "limit": 1}}),
            )
            .await;
            if !result_text(&a).contains(&format!("\"name\":\"{n}\"")) {
                return None;
            }
        }
        Some(())
    })
    .await;
    // The lists as the clients receive them, as a model gets each entry: its name,
    // description and input schema, compact JSON (clients turn MCP tools into the model's
    // function definitions with these three; annotations and output schemas stay behind).
    let mut lists = Vec::new();
    for profile in [full_profile, lean_profile] {
        let list = rpc(gw, profile, "tools/list", json!({})).await;
        let entries: Vec<Value> = list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| json!({"name": e["name"], "description": e["description"], "inputSchema": e["inputSchema"]}))
            .collect();
        let n: u32 = entries.iter().map(|e| tokens(&e.to_string())).sum();
        lists.push((entries, n));
    }
    let (full_entries, full_list) = (&lists[0].0, lists[0].1);
    let (lean_entries, lean_list) = (&lists[1].0, lists[1].1);
    let builtin = lean_entries.len() - 2;
    let catalog = full_entries.len() - builtin;
    let catalog_tokens: u32 = full_entries
        .iter()
        .filter(|e| !e["name"].as_str().unwrap().starts_with("tap_"))
        .map(|e| tokens(&e.to_string()))
        .sum();
    let builtin_tokens = lean_list
        - lean_entries
            .iter()
            .filter(|e| matches!(e["name"].as_str(), Some("tap_find_tools" | "tap_call_tool")))
            .map(|e| tokens(&e.to_string()))
            .sum::<u32>();
    // The lean client lists what profiles.list says it does: the gateway's own tools and
    // the two search tools; the full one every tool.
    let profiles = gw.handle.gateway().profiles_list();
    let info = |n: &str| {
        profiles
            .profiles
            .iter()
            .find(|p| p.name == n)
            .unwrap()
            .clone()
    };
    let listed = |entries: &[Value]| -> Vec<String> {
        let mut names: Vec<String> = entries
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    let mut want: Vec<String> = info(lean_profile)
        .visible
        .into_iter()
        .filter(|n| n.starts_with("tap_"))
        .chain(profiles.search_tools.iter().map(|t| t.name.clone()))
        .collect();
    want.sort();
    assert_eq!(listed(lean_entries), want);
    assert_eq!(listed(full_entries), info(full_profile).visible);
    assert_eq!(
        info(lean_profile).full_tokens,
        Some(info(full_profile).tokens)
    );
    let (lean_fig, full_fig) = (info(lean_profile).tokens, info(full_profile).tokens);

    writeln!(table, "Catalog: {catalog} tools of {what} ({catalog_tokens} tokens listed) + {builtin} of the gateway's own ({builtin_tokens} tokens). tools/list as the model gets it: full {full_list} tokens, search {lean_list} tokens (o200k_base; profiles.list, which also counts annotations: {full_fig} and {lean_fig}).\n").unwrap();
    writeln!(table, "| task | calls | full: requests | full: input tokens | search: requests | search: input tokens | search − full | search's find answers | last request, full / search | break-even catalog |").unwrap();
    writeln!(table, "|---|---|---|---|---|---|---|---|---|---|").unwrap();
    let per_tool = catalog_tokens as f64 / catalog as f64;
    let (mut sum_full, mut sum_search) = (0u32, 0u32);
    for (i, task) in tasks.iter().enumerate() {
        let (mut full, mut search) = (Way::default(), Way::default());
        let (mut h_full, mut h_search, mut found_tokens) = (0u32, 0u32, 0u32);
        for (step, (tool, args, query)) in task.steps.iter().enumerate() {
            // Full list: the call, then its result.
            full.request(full_list, h_full);
            let call = json!({"name": tool, "arguments": args});
            let result = rpc(gw, full_profile, "tools/call", call.clone()).await;
            h_full += tokens(&call.to_string()) + tokens(&result_text(&result)) + 2 * PER_MESSAGE;

            // Search: find, then call through tap_call_tool.
            search.request(lean_list, h_search);
            let find = json!({"name": "tap_find_tools", "arguments": {"query": query}});
            let answer = rpc(gw, lean_profile, "tools/call", find.clone()).await;
            let answer_text = result_text(&answer);
            let found: Value = serde_json::from_str(&answer_text).unwrap();
            let names: Vec<&str> = found["tools"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|t| t["name"].as_str())
                .collect();
            assert!(
                names.contains(tool),
                "task {i} step {step}: '{query}' found {names:?}, not {tool}"
            );
            found_tokens += tokens(&answer_text);
            h_search += tokens(&find.to_string()) + tokens(&answer_text) + 2 * PER_MESSAGE;
            search.request(lean_list, h_search);
            let call =
                json!({"name": "tap_call_tool", "arguments": {"name": tool, "arguments": args}});
            let result = rpc(gw, lean_profile, "tools/call", call.clone()).await;
            h_search += tokens(&call.to_string()) + tokens(&result_text(&result)) + 2 * PER_MESSAGE;
        }
        // The answer.
        full.request(full_list, h_full);
        search.request(lean_list, h_search);
        sum_full += full.total;
        sum_search += search.total;
        // The catalog size (tools of this catalog's mean entry) at which the full list
        // costs what search does on this task.
        let even = ((search.total as f64 - full.history_total as f64) / full.requests as f64
            - builtin_tokens as f64)
            / per_tool;
        writeln!(
            table,
            "| {} | {} | {} | {} | {} | {} | {:+} | {} | {} / {} | {:.0} tools ({:.0} tokens) |",
            task.what,
            task.steps.len(),
            full.requests,
            full.total,
            search.requests,
            search.total,
            search.total as i64 - full.total as i64,
            found_tokens,
            full.last,
            search.last,
            even.max(0.0),
            even.max(0.0) * per_tool
        )
        .unwrap();
    }
    writeln!(
        table,
        "| all {} | | | {sum_full} | | {sum_search} | {:+} | | | |\n",
        tasks.len(),
        sum_search as i64 - sum_full as i64
    )
    .unwrap();
}
