use crate::output::{client_fail, connect, fail};
use crate::signals::shutdown_token;
use std::path::Path;
use std::process::ExitCode;
use tap_protocol::host::{HostEvent, PrecheckDecision};

/// `tap call`: the result's `data` as JSON and exit 0, or `{"errorCode","error"}` and exit 1.
/// Ctrl-C cancels the call (the provider gets `tool.cancel`) and prints the `CANCELLED` result.
///
/// Like any session host, it first asks for the pre-tool-use decision (`tool.precheck`):
/// a deny prints `{"errorCode":"DENIED","error":REASON}` and exits 1 without invoking;
/// added context goes to stderr, then the tool is invoked.
pub async fn run(home: &Path, session: &str, tool: &str, args: Option<&str>) -> ExitCode {
    let args = match args.map(serde_json::from_str::<serde_json::Value>) {
        None => serde_json::json!({}),
        Some(Ok(v)) if v.is_object() => v,
        Some(Ok(_)) => return fail("INVALID_JSON", "ARGS_JSON must be a JSON object"),
        Some(Err(e)) => return fail("INVALID_JSON", format!("ARGS_JSON is not valid JSON: {e}")),
    };
    let stop = shutdown_token();
    let client = match connect(home, "tap-call").await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let decision = tokio::select! {
        d = client.precheck(session, tool, args.clone()) => d,
        _ = stop.cancelled() => return fail("CANCELLED", "Interrupted before the tool was invoked"),
    };
    match decision {
        Ok(d) => match d.decision {
            PrecheckDecision::Deny => return fail("DENIED", d.reason.unwrap_or_default()),
            PrecheckDecision::Context => {
                if let Some(context) = d.context {
                    eprintln!("{context}");
                }
            }
            PrecheckDecision::Allow => {}
        },
        Err(e) => return client_fail(e),
    }
    let (call_id, mut rx) = match client.start_invoke(session, tool, args) {
        Ok(x) => x,
        Err(e) => return client_fail(e),
    };
    let answer = tokio::select! {
        a = &mut rx => a,
        _ = stop.cancelled() => {
            let _ = client.cancel(&call_id);
            rx.await
        }
    };
    match answer {
        Ok(HostEvent::ToolResult(r)) => match (r.data, r.error_code) {
            (_, Some(code)) => fail(code.as_str(), r.error.unwrap_or_default()),
            (data, None) => {
                println!(
                    "{}",
                    serde_json::to_string(&data.unwrap_or_default()).expect("json")
                );
                ExitCode::SUCCESS
            }
        },
        Ok(HostEvent::Error(e)) => fail(e.code.as_str(), e.message),
        Ok(other) => fail("INTERNAL", format!("unexpected answer: {other:?}")),
        Err(_) => client_fail(tap_client::ClientError::Closed),
    }
}
