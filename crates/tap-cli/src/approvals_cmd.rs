//! `tap approvals` and `tap policy`: tool calls waiting for the user's approval, the
//! remembered answers (grants), and the rules of `$TAP_HOME/policy.json`
//! (docs/approvals.md).

use crate::output::{connect_control as connect, control_fail, print_table};
use clap::Subcommand;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;
use tap_client::{ControlClient, Discovery};
use tap_protocol::approvals::{
    AnswerScope, ApprovalAnswered, ApprovalApprove, ApprovalDeny, ApprovalsList, ArgPattern, Grant,
    GrantRef, GrantsList, PolicyAction, PolicyList, PolicyRule, PolicyRuleRef, PolicySet,
    RuleMatch, WaitingCall,
};
use tap_protocol::control::{ControlCall, Empty};

#[derive(Subcommand)]
pub enum ApprovalsCommand {
    /// Tool calls waiting for your answer: id, tool, provider, session, client, arguments.
    List {
        /// Print JSON (with each call's arguments and the tool's annotations).
        #[arg(long)]
        json: bool,
    },
    /// Approve a waiting call.
    Approve {
        /// The call's approval id (`tap approvals list`, or its progress message).
        id: String,
        /// How long the approval holds: `call` (this call only), `session` (this tool in
        /// this session), a duration (`30m`, `2h`: this tool until then) or `always`.
        #[arg(long = "for", value_name = "SCOPE", default_value = "call")]
        scope: String,
        /// Only for arguments whose value at POINTER matches REGEX (`/path=^/tmp/`); repeat
        /// for several. Needs `--for` other than `call`.
        #[arg(long = "args", value_name = "POINTER=REGEX")]
        args: Vec<String>,
    },
    /// Deny a waiting call: it never reaches its provider.
    Deny {
        /// The call's approval id.
        id: String,
        /// Deny this tool from now on without asking (`tap approvals revoke` forgets it).
        #[arg(long)]
        remember: bool,
    },
    /// Remembered answers in force: id, allow/deny, tool, provider, scope, until when.
    Grants {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Forget a remembered answer: the tool's calls are decided by the rules again.
    Revoke {
        /// The grant's id (`tap approvals grants`).
        grant: String,
    },
}

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// The rules of policy.json in order (the first that applies decides).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add a rule at the end, or replace the rule of this id in place.
    Set {
        /// The rule's id.
        id: String,
        /// allow, ask or deny.
        #[arg(long)]
        action: String,
        /// A tool-name glob (`github__*`).
        #[arg(long)]
        tool: Option<String>,
        /// The provider or MCP server offering the tool.
        #[arg(long)]
        provider: Option<String>,
        /// A session id.
        #[arg(long)]
        session: Option<String>,
        /// The session's client (`claude-code`, a session host's name).
        #[arg(long)]
        client: Option<String>,
        /// The session's profile.
        #[arg(long)]
        profile: Option<String>,
        /// POINTER=REGEX: the argument at POINTER must match REGEX; repeat for several.
        #[arg(long = "args", value_name = "POINTER=REGEX")]
        args: Vec<String>,
        /// Said to the agent on a deny, to you on an ask.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Remove a rule.
    Remove {
        /// The rule's id.
        id: String,
    },
}

/// `--for`: `call`, `session`, `always`, or a duration in whole minutes.
fn scope_of(text: &str) -> Result<(AnswerScope, Option<u64>), String> {
    match text {
        "call" => Ok((AnswerScope::Call, None)),
        "session" => Ok((AnswerScope::Session, None)),
        "always" => Ok((AnswerScope::Always, None)),
        d => {
            let d: Duration = crate::durations::parse(d)
                .map_err(|e| format!("--for: {e}; or call, session, always"))?;
            let minutes = d.as_secs().div_ceil(60);
            if minutes == 0 {
                return Err("--for: a duration of at least a minute".into());
            }
            Ok((AnswerScope::Minutes, Some(minutes)))
        }
    }
}

fn arg_patterns(args: &[String]) -> Result<Vec<ArgPattern>, String> {
    args.iter()
        .map(|a| match a.split_once('=') {
            Some((pointer, regex)) => Ok(ArgPattern {
                pointer: pointer.to_string(),
                regex: regex.to_string(),
            }),
            None => Err(format!(
                "--args '{a}': expected POINTER=REGEX, e.g. /path=^/tmp/"
            )),
        })
        .collect()
}

fn usage(e: String) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

pub async fn run(home: &Path, command: ApprovalsCommand) -> ExitCode {
    let client = match connect(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    match command {
        ApprovalsCommand::List { json } => {
            match client
                .call::<ApprovalsList>(ControlCall::ApprovalsList(Empty {}))
                .await
            {
                Ok(list) if json => println!("{}", pretty(&list)),
                Ok(list) if list.waiting.is_empty() => println!("No call waits for approval."),
                Ok(list) => print_waiting(&list.waiting),
                Err(e) => return control_fail(e),
            }
        }
        ApprovalsCommand::Approve { id, scope, args } => {
            let (scope, minutes) = match scope_of(&scope) {
                Ok(s) => s,
                Err(e) => return usage(e),
            };
            let args_pattern = match arg_patterns(&args) {
                Ok(a) => a,
                Err(e) => return usage(e),
            };
            let call = ControlCall::ApprovalsApprove(ApprovalApprove {
                id: id.clone(),
                scope,
                minutes,
                args_pattern,
            });
            match client.call::<ApprovalAnswered>(call).await {
                Ok(a) => println!("Approved {id}{}.", remembered(&a)),
                Err(e) => return control_fail(e),
            }
        }
        ApprovalsCommand::Deny { id, remember } => {
            let call = ControlCall::ApprovalsDeny(ApprovalDeny {
                id: id.clone(),
                remember: remember.then_some(AnswerScope::Always),
                minutes: None,
            });
            match client.call::<ApprovalAnswered>(call).await {
                Ok(a) => println!("Denied {id}{}.", remembered(&a)),
                Err(e) => return control_fail(e),
            }
        }
        ApprovalsCommand::Grants { json } => {
            match client
                .call::<GrantsList>(ControlCall::ApprovalsGrants(Empty {}))
                .await
            {
                Ok(list) if json => println!("{}", pretty(&list)),
                Ok(list) if list.grants.is_empty() => println!("No remembered answers."),
                Ok(list) => print_grants(&list.grants),
                Err(e) => return control_fail(e),
            }
        }
        ApprovalsCommand::Revoke { grant } => {
            let call = ControlCall::ApprovalsRevoke(GrantRef {
                grant: grant.clone(),
            });
            match client.call::<GrantsList>(call).await {
                Ok(_) => println!("Revoked grant {grant}."),
                Err(e) => return control_fail(e),
            }
        }
    }
    ExitCode::SUCCESS
}

pub async fn run_policy(home: &Path, command: PolicyCommand) -> ExitCode {
    let client = match connect(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let call = match command {
        PolicyCommand::List { json } => {
            return match client
                .call::<PolicyList>(ControlCall::PolicyList(Empty {}))
                .await
            {
                Ok(list) if json => {
                    println!("{}", pretty(&list));
                    ExitCode::SUCCESS
                }
                Ok(list) => print_policy(&list),
                Err(e) => control_fail(e),
            };
        }
        PolicyCommand::Set {
            id,
            action,
            tool,
            provider,
            session,
            client: who,
            profile,
            args,
            reason,
        } => {
            let action = match action.as_str() {
                "allow" => PolicyAction::Allow,
                "ask" => PolicyAction::Ask,
                "deny" => PolicyAction::Deny,
                other => return usage(format!("--action '{other}': allow, ask or deny")),
            };
            let args = match arg_patterns(&args) {
                Ok(a) => a,
                Err(e) => return usage(e),
            };
            ControlCall::PolicySet(PolicySet {
                rule: PolicyRule {
                    id,
                    matcher: RuleMatch {
                        tool,
                        provider,
                        session,
                        client: who,
                        profile,
                        args,
                    },
                    action,
                    reason,
                },
            })
        }
        PolicyCommand::Remove { id } => ControlCall::PolicyRemove(PolicyRuleRef { id }),
    };
    match client.call::<PolicyList>(call).await {
        Ok(list) => print_policy(&list),
        Err(e) => control_fail(e),
    }
}

fn pretty(v: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn remembered(a: &ApprovalAnswered) -> String {
    match &a.grant {
        Some(g) => format!(" and remembered it as grant {} ({})", g.id, scope_text(g)),
        None => String::new(),
    }
}

fn scope_text(g: &Grant) -> String {
    match g.scope {
        AnswerScope::Session => format!("session {}", g.session.as_deref().unwrap_or("-")),
        AnswerScope::Minutes => format!("until {}", g.expires_at.as_deref().unwrap_or("-")),
        AnswerScope::Always => "always".into(),
        AnswerScope::Call => "call".into(),
    }
}

/// Arguments as compact JSON, cut to a line.
fn short_args(v: &serde_json::Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

fn print_waiting(calls: &[WaitingCall]) {
    let header = [
        "ID", "TOOL", "PROVIDER", "SESSION", "CLIENT", "ARGS", "UNTIL",
    ]
    .map(String::from);
    let rows: Vec<[String; 7]> = calls
        .iter()
        .map(|c| {
            [
                c.id.clone(),
                c.tool.clone(),
                c.provider.clone(),
                c.session_label
                    .clone()
                    .unwrap_or_else(|| c.session_id.clone()),
                c.client.clone().unwrap_or_else(|| "-".into()),
                short_args(&c.args),
                c.deadline.clone(),
            ]
        })
        .collect();
    print_table(&header, &rows);
    println!("\nAnswer with: tap approvals approve ID [--for call|session|1h|always], or tap approvals deny ID [--remember]");
}

fn print_grants(grants: &[Grant]) {
    let header = ["ID", "DECISION", "TOOL", "PROVIDER", "SCOPE", "ARGS"].map(String::from);
    let rows: Vec<[String; 6]> = grants
        .iter()
        .map(|g| {
            [
                g.id.clone(),
                format!("{:?}", g.decision).to_lowercase(),
                g.tool.clone(),
                g.provider.clone(),
                scope_text(g),
                if g.args.is_empty() {
                    "-".into()
                } else {
                    g.args
                        .iter()
                        .map(|a| format!("{}={}", a.pointer, a.regex))
                        .collect::<Vec<_>>()
                        .join(" ")
                },
            ]
        })
        .collect();
    print_table(&header, &rows);
}

fn print_policy(list: &PolicyList) -> ExitCode {
    println!(
        "{} (calls wait {} s for an answer)",
        list.path, list.approval_timeout_secs
    );
    if let Some(e) = &list.error {
        println!("PROBLEM: {e}\nUntil it is fixed, every call of a provider's tool is asked.");
    }
    if list.rules.is_empty() {
        println!("No rules: tools annotated destructiveHint are asked, every other allowed.");
        return ExitCode::SUCCESS;
    }
    let header = ["ID", "ACTION", "MATCH"].map(String::from);
    let rows: Vec<[String; 3]> = list
        .rules
        .iter()
        .map(|r| {
            let m = serde_json::to_string(&r.matcher).unwrap_or_default();
            [r.id.clone(), r.action.as_str().to_string(), m]
        })
        .collect();
    print_table(&header, &rows);
    ExitCode::SUCCESS
}

/// For `tap status`: the calls waiting for approval and how to answer them; `None` when
/// none waits or the gateway cannot be asked.
pub async fn waiting_lines(home: &Path) -> Option<String> {
    let client = status_client(home).await?;
    let list = client
        .call::<ApprovalsList>(ControlCall::ApprovalsList(Empty {}))
        .await
        .ok()?;
    if list.waiting.is_empty() {
        return None;
    }
    let mut out = format!("Waiting for your approval ({}):", list.waiting.len());
    for c in &list.waiting {
        out.push_str(&format!(
            "\n  {}  {} ({}) in {}  until {}",
            c.id,
            c.tool,
            c.provider,
            c.session_label.as_deref().unwrap_or(&c.session_id),
            c.deadline
        ));
    }
    out.push_str("\n  Answer: tap approvals approve ID [--for call|session|1h|always] | tap approvals deny ID");
    Some(out)
}

/// `tap status`'s line for a `policy.json` that cannot be used (every call of a provider's
/// tool is then asked), if it cannot; `None` also when the gateway cannot be asked.
pub async fn policy_problem_line(home: &Path) -> Option<String> {
    let client = status_client(home).await?;
    let list = client
        .call::<PolicyList>(ControlCall::PolicyList(Empty {}))
        .await
        .ok()?;
    let e = list.error?;
    Some(format!(
        "Policy: policy.json cannot be used, so every call of a provider's tool is asked until it is fixed: {e}"
    ))
}

/// A control connection for `tap status`'s extra lines, which are left out when it fails.
async fn status_client(home: &Path) -> Option<ControlClient> {
    let found = Discovery::from_home(home).ok()?;
    let token = found.control_token.as_deref()?;
    let (client, _) = ControlClient::connect(&found.control_url(), token)
        .await
        .ok()?;
    Some(client)
}
