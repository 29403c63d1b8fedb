use crate::output::{client_fail, connect, fail, print_json};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// `tap prompt --session ID [--section NAME=TEXT]… TEXT`: applies the session's
/// transforms and contexts as a session host does on prompt submission, and prints
/// `{"prompt", "sections", "context"}` as JSON. A later `--section` with the same name
/// replaces an earlier one.
pub async fn run(home: &Path, session: &str, sections: &[String], text: &str) -> ExitCode {
    let mut map = BTreeMap::new();
    for s in sections {
        match s.split_once('=') {
            Some((name, value)) if !name.is_empty() => {
                map.insert(name.to_string(), value.to_string());
            }
            _ => {
                return fail(
                    "INVALID_JSON",
                    format!("--section takes NAME=TEXT with a non-empty NAME; got '{s}'"),
                )
            }
        }
    }
    let client = match connect(home, "tap-prompt").await {
        Ok(c) => c,
        Err(code) => return code,
    };
    match client.apply_prompt(session, text, map).await {
        Ok(a) => {
            print_json(&serde_json::json!({
                "prompt": a.prompt,
                "sections": a.sections,
                "context": a.context,
            }));
            ExitCode::SUCCESS
        }
        Err(e) => client_fail(e),
    }
}
