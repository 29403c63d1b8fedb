//! `tap doctor [--json]`: runs a list of checks and reports what needs the user. Exit 0 when
//! all is well, 1 when something needs the user. Each check is a function in [`CHECKS`];
//! today there is one, `clients` (drifted or unreadable client configurations).

use super::status;
use crate::output::{fail, print_json};
use serde::Serialize;
use std::process::ExitCode;
use tap_connect::{Dirs, State};

/// Something a check found that the user should fix.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// What it is about (a client's word).
    pub subject: String,
    pub problem: String,
    /// The command that fixes it, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// One check's outcome.
#[derive(Debug, Serialize)]
pub struct CheckResult {
    pub check: &'static str,
    pub ok: bool,
    /// One line for the human when nothing was found.
    pub summary: String,
    pub findings: Vec<Finding>,
}

type Check = fn() -> Result<CheckResult, String>;

/// The checks, in the order they are run and shown.
const CHECKS: &[(&str, Check)] = &[("clients", clients)];

/// Clients whose `tap` entry drifted, or whose file cannot be read.
fn clients() -> Result<CheckResult, String> {
    let d = Dirs::from_env().ok_or("no home directory (set HOME)")?;
    let tap = super::tap_path()?;
    let reports = status::all(&d, &tap, &super::tap_home());
    let findings: Vec<Finding> = reports
        .iter()
        .filter(|r| r.state.needs_user())
        .map(|r| {
            let why = r.detail.clone().unwrap_or_default();
            match r.state {
                State::Drifted => Finding {
                    subject: r.client.into(),
                    problem: format!(
                        "{}'s tap entry in {} drifted: {why}",
                        r.name,
                        r.file.display()
                    ),
                    fix: Some(format!("tap connect {}", r.client)),
                },
                _ => Finding {
                    subject: r.client.into(),
                    problem: format!("{} cannot be read: {why}", r.file.display()),
                    fix: None,
                },
            }
        })
        .collect();
    let connected = reports
        .iter()
        .filter(|r| r.state == State::Connected)
        .count();
    Ok(CheckResult {
        check: "clients",
        ok: findings.is_empty(),
        summary: format!("{connected} connected, none drifted"),
        findings,
    })
}

pub fn run(json: bool) -> ExitCode {
    let mut results = Vec::new();
    for (name, check) in CHECKS {
        match check() {
            Ok(r) => results.push(r),
            Err(e) => return fail("INTERNAL", format!("the {name} check failed: {e}")),
        }
    }
    let ok = results.iter().all(|r| r.ok);
    if json {
        print_json(&serde_json::json!({ "ok": ok, "checks": results }));
    } else {
        for r in &results {
            if r.ok {
                println!("ok    {}: {}", r.check, r.summary);
                continue;
            }
            for f in &r.findings {
                match &f.fix {
                    Some(fix) => println!("FIX   {}: {} (`{fix}` repairs it)", r.check, f.problem),
                    None => println!("FIX   {}: {}", r.check, f.problem),
                }
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
