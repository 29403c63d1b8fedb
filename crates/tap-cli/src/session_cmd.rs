use crate::output::{client_fail, connect, fail};
use crate::signals::shutdown_token;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tap_client::{ClientError, HostClient};
use tap_protocol::host::{BusyState, HostEvent, SessionRegister};
use tap_protocol::provider::PushLevel;

/// `tap session open`: prints `{"sessionId": …}`, then one JSON line per event, until
/// interrupted (the session then ends) or the gateway goes away (exit 1). It reports the
/// session idle after each `inject` it prints (see [`answer_inject`]).
pub async fn open(
    home: &Path,
    label: Option<String>,
    cwd: Option<PathBuf>,
    id: Option<String>,
    foreground: bool,
    profile: Option<String>,
) -> ExitCode {
    let stop = shutdown_token();
    let mut client = match connect(home, "tap-cli").await {
        Ok(c) => c,
        Err(code) => return code,
    };
    // Absolute, so the gateway can find the project's tap.config.json from it.
    let cwd = cwd
        .or_else(|| std::env::current_dir().ok())
        .map(|p| std::path::absolute(&p).unwrap_or(p).display().to_string());
    let info = match client
        .register_session(SessionRegister {
            request_id: String::new(),
            session_id: id,
            label,
            cwd,
            foreground,
            profile,
            ..SessionRegister::default()
        })
        .await
    {
        Ok(info) => info,
        Err(e) => return client_fail(e),
    };
    println!("{}", serde_json::json!({ "sessionId": info.id }));
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            event = client.next_event() => match event {
                Some(e) => {
                    println!("{}", serde_json::to_string(&e).expect("serializable"));
                    if let Err(e) = answer_inject(&client, &e) {
                        return client_fail(e);
                    }
                }
                None => return fail("DISCONNECTED", "the gateway closed the connection"),
            }
        }
    }
    match client.end_session(&info.id).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => client_fail(e),
    }
}

/// This host starts no turns: an `inject` is answered by printing it, so the session is busy
/// for that moment and idle again at once. Saying so is what lets the gateway accept the
/// provider's next inject (the push budget waits for idle) and tells the provider
/// (`session.lifecycle idle`).
fn answer_inject(client: &HostClient, event: &HostEvent) -> Result<(), ClientError> {
    match event {
        HostEvent::Delivery(d) if d.level == PushLevel::Inject => {
            client.set_state(&d.session_id, BusyState::Busy)?;
            client.set_state(&d.session_id, BusyState::Idle)
        }
        _ => Ok(()),
    }
}
