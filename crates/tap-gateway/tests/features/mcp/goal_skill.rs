//! The agent skills (`skills/` at the repository's root) as MCP prompts, listed and fetched
//! by the PyPI `mcp` client in both generations (the text is the files' own), and the goal
//! skill's evidence tools called by that client.

use super::{client, text_of, MODES};
use serde_json::json;
use tap_testkit::{workspace_root, TestGateway};

/// A skill file's body: the text after its front matter.
fn body(name: &str) -> String {
    let file = workspace_root().join("skills").join(name).join("SKILL.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let rest = text.strip_prefix("---\n").unwrap();
    let end = rest.find("\n---\n").unwrap();
    rest[end + 5..].trim_start().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_four_skills_are_prompts_with_the_skill_files_text() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        let mut c = client(&gw, "work", mode).await;
        c.send(json!({"op": "prompts"})).await;
        let listed = c.expect("prompts").await;
        assert_eq!(
            listed["names"],
            json!([
                "tap_context",
                "tap-goal",
                "tap-loop",
                "tap-monitor",
                "tap-orchestrate"
            ]),
            "{mode}"
        );
        let goal = &listed["prompts"][1];
        assert!(
            goal["description"]
                .as_str()
                .unwrap()
                .contains("tap_verify_goal_output"),
            "{goal}"
        );
        assert_eq!(
            goal["arguments"],
            json!([{"name": "goal", "description": "The goal, and what will show it is met", "required": false}])
        );
        for (i, arg) in [(2, "task"), (3, "watch"), (4, "workflow")] {
            assert_eq!(
                listed["prompts"][i]["arguments"][0]["name"], arg,
                "{listed}"
            );
        }

        // Fetched with the user's request after the skill.
        c.send(json!({"op": "prompt", "name": "tap-goal",
                      "args": {"goal": "The parser handles CRLF; its tests pass."}}))
            .await;
        let got = c.expect("prompt").await;
        assert_eq!(got["messages"], 1);
        let text = got["text"].as_str().unwrap();
        assert_eq!(
            text,
            format!(
                "{}\n\n## The request\n\nThe parser handles CRLF; its tests pass.\n",
                body("tap-goal").trim_end()
            ),
            "{mode}"
        );
        // Without one, the skill alone.
        for name in ["tap-loop", "tap-monitor", "tap-orchestrate"] {
            c.send(json!({"op": "prompt", "name": name, "args": {}}))
                .await;
            let got = c.expect("prompt").await;
            assert_eq!(got["text"].as_str().unwrap(), body(name), "{name}");
        }
        let monitor = body("tap-monitor");
        assert!(
            monitor.contains("REVIEW RECORD\nstream:"),
            "the record's form"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_verifies_a_goal_and_its_session_without_a_cwd_checks_no_file() {
    let gw = TestGateway::start().await;
    let mut c = client(&gw, "work", "legacy").await;
    let names = c.tool_names().await;
    for tool in ["tap_verify_goal_output", "tap_audit_claims"] {
        assert!(names.iter().any(|n| n == tool), "{tool} in {names:?}");
    }
    let call = |id: &str, tool: &str, args: serde_json::Value| json!({"op": "call", "id": id, "tool": tool, "args": args});
    c.send(call(
        "p",
        "tap_post",
        json!({"channel": "ci", "message": "deploy 12 ok"}),
    ))
    .await;
    assert_eq!(c.expect("result").await["isError"], false);
    c.send(call(
        "v",
        "tap_verify_goal_output",
        json!({"goal": "deploy", "expectations": [
            {"kind": "stream", "stream": "ci", "pattern": "deploy \\d+ ok"},
            {"kind": "command", "command": "make check", "output": "all 4 checks passed", "pattern": "all \\d+ checks passed"},
            {"kind": "file", "path": "deploy.log"}
        ]}),
    ))
    .await;
    let r = c.expect("result").await;
    assert_eq!(r["isError"], false, "{r}");
    let answer: serde_json::Value = match &r["structured"] {
        serde_json::Value::Null => serde_json::from_str(&text_of(&r)).unwrap(),
        s => s.clone(),
    };
    let statuses: Vec<&str> = answer["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["verified", "verified", "failed"], "{answer}");
    assert!(answer["expectations"][2]["reason"]
        .as_str()
        .unwrap()
        .starts_with("Refused: this session has no working directory"));
    assert_eq!(answer["recorded"], "goals@emitters");
}
