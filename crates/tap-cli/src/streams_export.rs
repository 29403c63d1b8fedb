//! `tap streams export`: every matching ledger event as one JSON object per line, oldest
//! first, written as it is read.
//!
//! `events.list` pages from the newest event back. To write oldest first without holding
//! the export in memory it walks twice: once back to the oldest event keeping only where
//! each page starts (one number per page), then forward through those pages, each read
//! again and written reversed. The first pass fixes the newest event, so events pushed
//! during the export are left for the next one; a page read again is cut at where the
//! next older page starts, so events trimmed by retention meanwhile cause no duplicates.

use crate::output::{connect_control, control_fail, note_ledger};
use crate::streams_cmd::require_session;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tap_client::ControlClient;
use tap_protocol::control::{ControlCall, Empty};
use tap_protocol::host::GatewayStatus;
use tap_protocol::ledger::{EventsListParams, EventsPage, LedgerSessions};

/// Events per `events.list` page (the control plane's maximum).
pub const PAGE: u32 = 1000;

/// Where the lines go.
pub enum Target {
    Stdout,
    /// `--out FILE`.
    File(PathBuf),
    /// `--into-workspace`: `<the session's cwd>/.tap/records/<session>.jsonl`.
    Workspace,
}

/// `tap streams export [--session ID] [--stream S] [--since DURATION] [--out FILE |
/// --into-workspace] [> file.jsonl]`.
pub async fn export(
    home: &Path,
    filter: EventsListParams,
    page_size: u32,
    target: Target,
) -> ExitCode {
    let client = match connect_control(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let file = match target {
        Target::Stdout => None,
        Target::File(f) => Some(f),
        Target::Workspace => {
            let id = filter.session_id.clone().unwrap_or_default();
            match workspace_file(&client, &id).await {
                Ok(f) => Some(f),
                Err(code) => return code,
            }
        }
    };
    let filter = EventsListParams {
        limit: Some(page_size),
        before: None,
        ..filter
    };
    let mut progress = Progress::new();

    // Pass 1: newest to oldest, keeping each page's `before` (the first: past the newest).
    let mut starts: Vec<i64> = Vec::new();
    let mut before = None;
    let mut total = 0usize;
    loop {
        let page = match fetch(&client, &filter, before).await {
            Ok(p) => p,
            Err(code) => return code,
        };
        if starts.is_empty() {
            note_ledger(&page.ledger);
        }
        let Some(newest) = page.events.first() else {
            break;
        };
        starts.push(before.unwrap_or(newest.id + 1));
        total += page.events.len();
        match page.next_before {
            Some(n) => {
                before = Some(n);
                progress.show(format_args!("tap: counting events… {total}"));
            }
            None => break,
        }
    }
    if total == 0 {
        if let Some(id) = &filter.session_id {
            let narrowed = filter.stream.is_some() || filter.since_us.is_some();
            if let Err(code) = require_session(&client, id, narrowed).await {
                return code;
            }
        }
    }

    // Pass 2: oldest page first, each oldest event first.
    let sink: Box<dyn Write> = match &file {
        None => Box::new(std::io::stdout().lock()),
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Box::new(f),
            Err(err) => {
                eprintln!("tap: cannot write {}: {err}", path.display());
                return ExitCode::FAILURE;
            }
        },
    };
    let mut out = std::io::BufWriter::new(sink);
    let mut written = 0usize;
    for i in (0..starts.len()).rev() {
        let page = match fetch(&client, &filter, Some(starts[i])).await {
            Ok(p) => p,
            Err(code) => return code,
        };
        let floor = starts.get(i + 1).copied();
        for e in page
            .events
            .iter()
            .rev()
            .filter(|e| floor.is_none_or(|f| e.id >= f))
        {
            let line = serde_json::to_string(e).expect("serializable");
            if let Err(err) = writeln!(out, "{line}") {
                return write_failed(err);
            }
            written += 1;
        }
        if let Err(err) = out.flush() {
            return write_failed(err);
        }
        if starts.len() > 1 {
            progress.show(format_args!("tap: exported {written} of {total} events"));
        }
    }
    progress.done();
    eprintln!(
        "tap: exported {written} {}{}",
        if written == 1 { "event" } else { "events" },
        file.map(|f| format!(" to {}", f.display()))
            .unwrap_or_default()
    );
    ExitCode::SUCCESS
}

/// `<cwd>/.tap/records/<session>.jsonl` of session `id` (live, or ended and in the
/// history), its directory made; an error for a session without a cwd.
async fn workspace_file(client: &ControlClient, id: &str) -> Result<PathBuf, ExitCode> {
    let cwd = async {
        let status: GatewayStatus = client.call(ControlCall::Status(Empty {})).await?;
        if let Some(s) = status.sessions.into_iter().find(|s| s.id == id) {
            return Ok(Some(s.cwd));
        }
        let ledger: LedgerSessions = client.call(ControlCall::LedgerSessions(Empty {})).await?;
        Ok::<_, tap_client::ControlClientError>(
            ledger
                .sessions
                .into_iter()
                .find(|s| s.id == id)
                .map(|s| s.cwd),
        )
    };
    let cwd = match cwd.await {
        Ok(Some(Some(cwd))) => PathBuf::from(cwd),
        Ok(Some(None)) => {
            eprintln!("tap: session '{id}' has no working directory: use --out FILE");
            return Err(ExitCode::FAILURE);
        }
        Ok(None) => {
            eprintln!(
                "tap: no session '{id}': it is not running and the history has nothing of it"
            );
            return Err(ExitCode::FAILURE);
        }
        Err(e) => return Err(control_fail(e)),
    };
    // The session id names the file: keep it one plain name inside the directory.
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let dir = cwd.join(".tap").join("records");
    if let Err(err) = std::fs::create_dir_all(&dir) {
        eprintln!("tap: cannot make {}: {err}", dir.display());
        return Err(ExitCode::FAILURE);
    }
    Ok(dir.join(format!("{}.jsonl", name.trim_start_matches('.'))))
}

async fn fetch(
    client: &ControlClient,
    filter: &EventsListParams,
    before: Option<i64>,
) -> Result<EventsPage, ExitCode> {
    let params = EventsListParams {
        before,
        ..filter.clone()
    };
    client
        .call(ControlCall::EventsList(params))
        .await
        .map_err(control_fail)
}

fn write_failed(err: std::io::Error) -> ExitCode {
    eprintln!("tap: cannot write the export: {err}");
    ExitCode::from(1)
}

/// Progress on stderr: one line rewritten in place on a terminal, else a line each time.
struct Progress {
    terminal: bool,
    shown: bool,
}

impl Progress {
    fn new() -> Self {
        Self {
            terminal: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    fn show(&mut self, text: std::fmt::Arguments<'_>) {
        if self.terminal {
            eprint!("\r{text}\x1b[K");
        } else {
            eprintln!("{text}");
        }
        self.shown = true;
    }

    fn done(&mut self) {
        if self.terminal && self.shown {
            eprintln!();
        }
    }
}
