//! `tap`: the headless Tap gateway and the commands that talk to it.
//!
//! The command names, flags, output shapes and exit codes are a contract (scripts and
//! tests rely on them): see `docs/cli.md`.
#![forbid(unsafe_code)]

mod approvals_cmd;
mod call_cmd;
mod closed_stdout;
mod connect;
mod copilot;
mod durations;
mod emitters_args;
mod emitters_cmd;
mod emitters_table;
mod env_cmd;
mod gateway_cmd;
mod idle_exit;
mod mcp_cmd;
mod mcp_servers_args;
mod mcp_servers_cmd;
mod mcp_servers_file;
mod mcp_servers_import;
mod mcp_servers_import_clients;
mod mcp_servers_logs;
mod mcp_servers_secrets;
mod mcp_servers_show;
mod mcp_servers_sign_in;
mod output;
mod pairing_cmd;
mod pins_cmd;
mod profiles_cmd;
mod prompt_cmd;
mod session_cmd;
mod signals;
mod status_cmd;
mod streams_cmd;
mod streams_export;
mod tokens_cmd;
mod traces_cmd;
mod ui_cmd;
mod waterfall;

use clap::{Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tap_protocol::ledger::EventsListParams;

/// mimalloc, not glibc's malloc, for Rust's allocations: a gateway left running for days
/// sees bursts (a flood of calls fills the ledger's queue, large results), and glibc keeps
/// the heap they freed, fragmented across its arenas (docs/reliability.md, the soak).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "tap",
    version,
    about = "Tap gateway: tools for AI agent sessions from local providers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the gateway in the foreground (Ctrl-C stops it gracefully).
    Gateway {
        /// Address to listen on; loopback only. Default: 127.0.0.1 and the port saved in
        /// $TAP_HOME/settings.json (9400 when none is saved).
        #[arg(long, env = "TAP_LISTEN")]
        listen: Option<SocketAddr>,
        /// Start a provider process (a shell command line) with TAP_PROVIDER_TOKEN and
        /// TAP_GATEWAY_URL set; repeatable. It is stopped with the gateway.
        #[arg(long = "spawn", value_name = "COMMAND")]
        spawn: Vec<String>,
        /// Exit once no session has been registered for SECS seconds (default 30): the
        /// spec's process model for a gateway started on demand. Without it the gateway
        /// runs until stopped.
        #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "30")]
        exit_when_idle: Option<u64>,
    },
    /// Sessions.
    Session {
        #[command(subcommand)]
        command: SessionCommand,
    },
    /// Invoke a tool in a session and print its result as JSON. The session's hook rules are
    /// asked first: a deny prints DENIED without invoking; added context goes to stderr.
    Call {
        /// The session to call in.
        #[arg(long)]
        session: String,
        /// Tool name.
        tool: String,
        /// Arguments as a JSON object.
        args: Option<String>,
    },
    /// Apply a session's prompt transforms and contexts to TEXT (as a session host does on
    /// prompt submission) and print the resulting sections and context as JSON.
    Prompt {
        /// The session.
        #[arg(long)]
        session: String,
        /// A prompt section the host would send, as NAME=TEXT; repeatable.
        #[arg(long = "section", value_name = "NAME=TEXT")]
        sections: Vec<String>,
        /// The user's prompt.
        text: String,
    },
    /// Show the running gateway: address, uptime, sessions, providers.
    Status {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print `export TAP_GATEWAY_URL=…` and `export TAP_PROVIDER_TOKEN_FILE=…` for the
    /// running gateway, for providers started by hand: `eval "$(tap env)"`.
    Env,
    /// EventStreams: the events providers pushed, from the gateway's history.
    Streams {
        #[command(subcommand)]
        command: StreamsCommand,
    },
    /// Profiles: the tool set a client's sessions see (`tap mcp --profile NAME`), with what
    /// each costs in the model's context; `set` and `remove` edit them (docs/clients.md).
    #[command(args_conflicts_with_subcommands = true)]
    Profiles {
        #[command(subcommand)]
        command: Option<profiles_cmd::ProfilesCommand>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Pinned tool definitions: a tool whose definition changed after it was first seen
    /// is held (not offered to sessions) until accepted here (docs/pins.md).
    Pins {
        #[command(subcommand)]
        command: pins_cmd::PinsCommand,
    },
    /// Tool calls waiting for your approval, and remembered answers (grants): list,
    /// approve, deny, revoke (docs/approvals.md).
    Approvals {
        #[command(subcommand)]
        command: approvals_cmd::ApprovalsCommand,
    },
    /// The rules that decide whether a tool call is allowed, asked or denied
    /// ($TAP_HOME/policy.json; docs/approvals.md).
    Policy {
        #[command(subcommand)]
        command: approvals_cmd::PolicyCommand,
    },
    /// Client tokens of the MCP HTTP endpoint: one per client, kept across restarts,
    /// revocable, optionally held to a profile (docs/clients.md).
    Tokens {
        #[command(subcommand)]
        command: tokens_cmd::TokensCommand,
    },
    /// Traces from the gateway's history: each push, tool call, … as a tree of timed spans.
    Traces {
        #[command(subcommand)]
        command: traces_cmd::TracesCommand,
    },
    /// Emitters: background commands and scheduled prompts whose output lines feed a
    /// session's streams through a filter.
    Emitters {
        #[command(subcommand)]
        command: emitters_args::EmittersCommand,
    },
    /// Pairing of external providers (browser pages, scripts): list, deny, revoke.
    Pairing {
        #[command(subcommand)]
        command: PairingCommand,
    },
    /// Be an MCP server on stdin/stdout whose tools are a gateway session's (what MCP
    /// clients launch); the running gateway does the work. `tap mcp config` prints a
    /// client's configuration for it; `tap mcp add|list|…` manage the MCP servers the
    /// gateway runs as providers (docs/mcp-servers.md).
    #[command(args_conflicts_with_subcommands = true)]
    Mcp {
        #[command(subcommand)]
        command: Option<McpCommand>,
        /// The gateway session: joined when a session has this id or label, otherwise
        /// registered with this label (and ended 30 s after its last MCP client left).
        #[arg(long, default_value = mcp_cmd::DEFAULT_SESSION)]
        session: String,
        /// Working directory of a session it registers (default: the current directory).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// The profile (in $TAP_HOME/profiles.json) whose tools the session holds
        /// (docs/clients.md, "Profiles"); a session it joins must have been opened with it.
        #[arg(long, value_name = "NAME")]
        profile: Option<String>,
    },
    /// Install a session-host integration: `tap install copilot` makes every GitHub Copilot
    /// CLI session a gateway session (docs/copilot.md).
    Install {
        /// What to install.
        #[arg(value_enum)]
        target: Target,
        /// The Copilot CLI's home directory (default: $COPILOT_HOME, else ~/.copilot).
        #[arg(long, value_name = "DIR")]
        copilot_home: Option<PathBuf>,
        /// Replace an extension tap did not write (it is kept as a backup).
        #[arg(long, conflicts_with = "check")]
        force: bool,
        /// Install nothing; report what would keep it from working.
        #[arg(long)]
        check: bool,
        /// The profile every Copilot session registers with (docs/copilot.md); installing
        /// without it removes one an earlier install wrote.
        #[arg(long, value_name = "NAME", value_parser = connect::parse_profile, conflicts_with = "check")]
        profile: Option<String>,
    },
    /// Remove what `tap install` wrote (and the feature flag it turned on).
    Uninstall {
        /// What to remove.
        #[arg(value_enum)]
        target: Target,
        /// The Copilot CLI's home directory (default: $COPILOT_HOME, else ~/.copilot).
        #[arg(long, value_name = "DIR")]
        copilot_home: Option<PathBuf>,
    },
    /// Write the MCP entry `tap` that makes CLIENT launch `tap mcp` into its own configuration
    /// file (docs/clients.md); without CLIENT, list every client and whether it is connected.
    Connect {
        /// The client (without it: the list).
        #[arg(value_enum)]
        client: Option<connect::Client>,
        /// The profile the client's sessions use (`tap mcp --profile NAME`).
        #[arg(long, value_name = "NAME", value_parser = connect::parse_profile, requires = "client")]
        profile: Option<String>,
        /// Print the change as a unified diff; write nothing.
        #[arg(long, requires = "client")]
        dry_run: bool,
        /// With no CLIENT: print the list as JSON.
        #[arg(long, conflicts_with = "client")]
        json: bool,
    },
    /// Remove the `tap` entry `tap connect` wrote from CLIENT's configuration file.
    Disconnect {
        /// The client.
        #[arg(value_enum)]
        client: connect::Client,
        /// Print the change as a unified diff; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Check what needs the user (clients whose `tap` entry drifted); exit 1 when something does.
    Doctor {
        /// Print the checks as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a one-time login link for the panel (single use, valid 120 s) and open it.
    Ui {
        /// Only print the link; do not start a browser.
        #[arg(long)]
        no_open: bool,
    },
}

/// What `tap install` / `tap uninstall` act on.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Target {
    /// The GitHub Copilot CLI extension.
    Copilot,
}

#[derive(Subcommand)]
enum McpCommand {
    /// Print the configuration snippet that makes an MCP client launch `tap mcp`.
    Config {
        /// The client (default: the common `mcpServers` form).
        #[arg(long, value_enum)]
        client: Option<mcp_cmd::Client>,
        /// The gateway session the client should use.
        #[arg(long, default_value = mcp_cmd::DEFAULT_SESSION)]
        session: String,
        /// Print the Streamable HTTP endpoint and header instead of the stdio form.
        #[arg(long)]
        http: bool,
    },
    #[command(flatten)]
    Servers(mcp_servers_args::ServersCommand),
}

#[derive(Subcommand)]
enum PairingCommand {
    /// Pending requests (with the code to type into the provider), then paired providers.
    List {
        /// Print JSON: an array of entries.
        #[arg(long)]
        json: bool,
    },
    /// Deny a pending request: its provider gets AUTH_FAILED.
    // One of the two, named together in the usage line: `tap pairing deny <ID|--all>`.
    #[command(group = clap::ArgGroup::new("which").required(true).args(["id", "all"]))]
    Deny {
        /// The request's id (from `tap pairing list`).
        id: Option<String>,
        /// Deny every pending request.
        #[arg(long)]
        all: bool,
    },
    /// Revoke a paired provider: its connection closes and its token stops working.
    Revoke {
        /// The pairing's id (from `tap pairing list`).
        id: String,
    },
}

#[derive(Subcommand)]
enum SessionCommand {
    /// Register a session, print its id, then one JSON line per event; Ctrl-C ends it.
    Open {
        /// Label shown to providers and in the panel.
        #[arg(long)]
        label: Option<String>,
        /// Working directory of the session (default: the current directory).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// Use this session id instead of a generated one.
        #[arg(long)]
        id: Option<String>,
        /// Do not mark the session as the foreground one.
        #[arg(long)]
        background: bool,
        /// Hold only the tools of this profile ($TAP_HOME/profiles.json; docs/clients.md).
        #[arg(long, value_name = "NAME")]
        profile: Option<String>,
    },
}

#[derive(Subcommand)]
enum StreamsCommand {
    /// Browse the stored events of every session, live or ended, across gateway restarts,
    /// newest first, a page at a time.
    History {
        /// Only this session's events.
        #[arg(long)]
        session: Option<String>,
        /// Only `name` (that stream of every provider) or `name@provider`.
        #[arg(long = "stream", value_name = "STREAM")]
        stream: Option<String>,
        /// The same as --stream (the command's first form).
        #[arg(value_name = "STREAM", conflicts_with = "stream")]
        stream_arg: Option<String>,
        /// Only events whose text or metadata hold all these words (word prefixes match).
        #[arg(long, value_name = "TEXT")]
        search: Option<String>,
        /// Only events older than event ID: the next page (the previous page says which).
        #[arg(long, value_name = "ID")]
        before: Option<i64>,
        /// At most N events (default 100, at most 1000); --last is its older name.
        #[arg(long, alias = "last", value_name = "N",
              value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: Option<u32>,
        /// Print a JSON array of the events.
        #[arg(long)]
        json: bool,
    },
    /// Write every matching stored event to stdout, one JSON object per line, oldest first
    /// (`tap streams export > events.jsonl`).
    Export {
        /// Only this session's events.
        #[arg(long)]
        session: Option<String>,
        /// Only `name` (that stream of every provider) or `name@provider`.
        #[arg(long, value_name = "STREAM")]
        stream: Option<String>,
        /// Only events of the last DURATION (`30m`, `2h`, `3d`).
        #[arg(long, value_name = "DURATION", value_parser = durations::parse)]
        since: Option<Duration>,
        /// JSON Lines: one event per line (the only format; said for scripts that name it).
        #[arg(long)]
        jsonl: bool,
        /// Write to FILE (created or replaced) instead of stdout.
        #[arg(long, value_name = "FILE", conflicts_with = "into_workspace")]
        out: Option<std::path::PathBuf>,
        /// Write to the session's workspace: `<its cwd>/.tap/records/<session>.jsonl`
        /// (needs --session; its cwd from the gateway, live or from the history).
        #[arg(long, requires = "session")]
        into_workspace: bool,
        /// Events per request to the gateway (tests use small pages).
        #[arg(long, hide = true, default_value_t = streams_export::PAGE,
              value_parser = clap::value_parser!(u32).range(1..=1000))]
        page_size: u32,
    },
}

fn main() -> ExitCode {
    closed_stdout::install();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tap: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let home = tap_client::default_home();
    runtime.block_on(async move {
        match cli.command {
            Command::Gateway {
                listen,
                spawn,
                exit_when_idle,
            } => {
                let idle = exit_when_idle.map(std::time::Duration::from_secs);
                gateway_cmd::run(listen, spawn, idle, home).await
            }
            Command::Session {
                command:
                    SessionCommand::Open {
                        label,
                        cwd,
                        id,
                        background,
                        profile,
                    },
            } => session_cmd::open(&home, label, cwd, id, !background, profile).await,
            Command::Call {
                session,
                tool,
                args,
            } => call_cmd::run(&home, &session, &tool, args.as_deref()).await,
            Command::Prompt {
                session,
                sections,
                text,
            } => prompt_cmd::run(&home, &session, &sections, &text).await,
            Command::Status { json } => status_cmd::run(&home, json).await,
            Command::Env => env_cmd::run(&home).await,
            Command::Tokens { command } => tokens_cmd::run(&home, command).await,
            Command::Approvals { command } => approvals_cmd::run(&home, command).await,
            Command::Policy { command } => approvals_cmd::run_policy(&home, command).await,
            Command::Pins { command } => pins_cmd::run(&home, command).await,
            Command::Profiles { command, json } => profiles_cmd::run(&home, command, json).await,
            Command::Streams { command } => match command {
                StreamsCommand::History {
                    session,
                    stream,
                    stream_arg,
                    search,
                    before,
                    limit,
                    json,
                } => {
                    let query = streams_cmd::HistoryQuery {
                        session,
                        stream: stream.or(stream_arg),
                        search,
                        before,
                        limit,
                    };
                    streams_cmd::history(&home, query, json).await
                }
                StreamsCommand::Export {
                    session,
                    stream,
                    since,
                    jsonl: _,
                    out,
                    into_workspace,
                    page_size,
                } => {
                    let target = match (out, into_workspace) {
                        (Some(file), _) => streams_export::Target::File(file),
                        (None, true) => streams_export::Target::Workspace,
                        (None, false) => streams_export::Target::Stdout,
                    };
                    let filter = EventsListParams {
                        session_id: session,
                        stream,
                        since_us: since.map(durations::since_us),
                        ..Default::default()
                    };
                    streams_export::export(&home, filter, page_size, target).await
                }
            },
            Command::Traces { command } => traces_cmd::run(&home, command).await,
            Command::Emitters { command } => emitters_cmd::run(&home, command).await,
            Command::Pairing { command } => match command {
                PairingCommand::List { json } => pairing_cmd::list(&home, json).await,
                PairingCommand::Deny { id, all: _ } => {
                    pairing_cmd::deny(&home, id.as_deref()).await
                }
                PairingCommand::Revoke { id } => pairing_cmd::revoke(&home, &id).await,
            },
            Command::Install {
                target: Target::Copilot,
                copilot_home,
                force,
                check,
                profile,
            } => {
                if check {
                    copilot::check(&home, copilot_home).await
                } else {
                    copilot::install(copilot_home, force, profile.as_deref())
                }
            }
            Command::Uninstall {
                target: Target::Copilot,
                copilot_home,
            } => copilot::uninstall(copilot_home),
            Command::Ui { no_open } => ui_cmd::run(&home, no_open).await,
            Command::Connect {
                client: Some(client),
                profile,
                dry_run,
                ..
            } => connect::connect(client, profile.as_deref(), dry_run),
            Command::Connect {
                client: None, json, ..
            } => connect::list(json),
            Command::Disconnect { client, dry_run } => connect::disconnect(client, dry_run),
            Command::Doctor { json } => connect::doctor::run(json),
            Command::Mcp {
                command: None,
                session,
                cwd,
                profile,
            } => mcp_cmd::run(&home, &session, cwd, profile.as_deref()).await,
            Command::Mcp {
                command:
                    Some(McpCommand::Config {
                        client,
                        session,
                        http,
                    }),
                ..
            } => mcp_cmd::config(&home, client, &session, http),
            Command::Mcp {
                command: Some(McpCommand::Servers(command)),
                ..
            } => mcp_servers_cmd::run(&home, command).await,
        }
    })
}
