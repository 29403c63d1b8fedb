//! `tap mcp add|list|get|remove|enable|disable|restart|logs|tools` (docs/mcp-servers.md):
//! MCP servers run by the gateway as providers. The edits are made to the configuration
//! files here (`mcp_servers_file`); then a running gateway is asked to read the user file
//! again (`mcpServers.reload`), and what it says of the server is shown. The live views
//! (`list`, `logs`, `restart`) ask the gateway's control plane.

use crate::mcp_servers_args::{replace_transport, AddArgs, NameArgs, ServersCommand, ToolsArgs};
use crate::mcp_servers_file::{redacted, ConfigFile, FileError, Scope};
use crate::mcp_servers_secrets as secrets;
use crate::mcp_servers_show::{
    describe_live, not_running_info, print_servers, state_line, warn_all,
};
use crate::output::{control_fail, fail, print_json};
use serde_json::{json, Map, Value};
use std::path::Path;
use std::process::ExitCode;
use tap_client::{ControlClient, Discovery};
use tap_gateway::mcp_servers::config::{self, KEY};
use tap_protocol::control::{ControlCall, Empty};
use tap_protocol::mcp_servers::{
    McpScope, McpServerInfo, McpServerRef, McpServerState, McpServersList,
};

/// Runs one of these commands.
pub async fn run(home: &Path, command: ServersCommand) -> ExitCode {
    let result = match command {
        ServersCommand::Add(args) => add(home, args).await,
        ServersCommand::List { json } => list(home, json).await,
        ServersCommand::Get { name, scope, json } => get(home, &name, scope, json).await,
        ServersCommand::Remove(NameArgs { name, scope }) => remove(home, &name, scope).await,
        ServersCommand::Enable(NameArgs { name, scope }) => {
            set_enabled(home, &name, scope, true).await
        }
        ServersCommand::Disable(NameArgs { name, scope }) => {
            set_enabled(home, &name, scope, false).await
        }
        ServersCommand::Restart { name, session } => restart(home, &name, session).await,
        ServersCommand::Login {
            name,
            session,
            no_open,
        } => crate::mcp_servers_sign_in::login(home, &name, session, no_open).await,
        ServersCommand::Logout { name, session } => {
            crate::mcp_servers_sign_in::logout(home, &name, session).await
        }
        ServersCommand::Logs {
            name,
            session,
            follow,
        } => crate::mcp_servers_logs::logs(home, &name, session.as_deref(), follow).await,
        ServersCommand::Tools(args) => tools(home, args).await,
        ServersCommand::Import(args) => Ok(crate::mcp_servers_import::run(home, args).await),
    };
    result.unwrap_or_else(|e| e)
}

pub(crate) type Outcome = Result<ExitCode, ExitCode>;

pub(crate) fn file_fail(e: FileError) -> ExitCode {
    fail(e.code, e.message)
}

fn invalid(message: impl std::fmt::Display) -> ExitCode {
    fail("INVALID_ARGS", message)
}

// ------------------------------------------------------------------ the running gateway

/// The running gateway's control plane: `None` when no gateway runs under `home`.
pub(crate) async fn gateway(home: &Path) -> Option<Result<ControlClient, String>> {
    tap_client::running_gateway(home).await?;
    let found = match Discovery::from_home(home) {
        Ok(f) => f,
        Err(e) => return Some(Err(e.to_string())),
    };
    let Some(token) = found.control_token.as_deref() else {
        let why = found.control_token_error.unwrap_or_else(|| {
            format!(
                "no control token at {}",
                home.join("control-token").display()
            )
        });
        return Some(Err(why));
    };
    Some(
        ControlClient::connect(&found.control_url(), token)
            .await
            .map(|(client, _)| client)
            .map_err(|e| e.to_string()),
    )
}

/// What the running gateway says of its servers.
enum Live {
    NotRunning,
    Failed(String),
    Listed(McpServersList),
}

impl Live {
    fn servers(&self) -> &[McpServerInfo] {
        match self {
            Live::Listed(list) => &list.servers,
            _ => &[],
        }
    }
}

async fn live(home: &Path) -> Live {
    match gateway(home).await {
        None => Live::NotRunning,
        Some(Err(why)) => Live::Failed(why),
        Some(Ok(client)) => match client
            .call::<McpServersList>(ControlCall::McpServersList(Empty {}))
            .await
        {
            Ok(list) => Live::Listed(list),
            Err(e) => Live::Failed(e.to_string()),
        },
    }
}

/// After an edit of `file`: a user file is read again by the running gateway, which then
/// says where the server is; a project file is read by the sessions opened there.
async fn apply(home: &Path, file: &ConfigFile, name: &str) {
    apply_all(home, file, &[name.to_string()]).await
}

/// [`apply`] for several servers of `file` (`tap mcp import`): one reload, then each
/// server's state.
pub(crate) async fn apply_all(home: &Path, file: &ConfigFile, names: &[String]) {
    if file.scope == Scope::Project {
        let dir = file.path.parent().unwrap_or(Path::new("."));
        println!(
            "Sessions opened in {} from now on see the change (a project server runs once per session).",
            dir.display()
        );
        return;
    }
    let client = match gateway(home).await {
        None => {
            println!("No gateway is running: the change applies when it starts (`tap gateway` or the desktop app).");
            return;
        }
        Some(Err(why)) => {
            eprintln!("tap: warning: cannot reach the running gateway ({why}): the change applies when it restarts");
            return;
        }
        Some(Ok(client)) => client,
    };
    let list = match client
        .call::<McpServersList>(ControlCall::McpServersReload(Empty {}))
        .await
    {
        Ok(list) => list,
        Err(e) => {
            eprintln!("tap: warning: the running gateway did not reload {} ({e}): the change applies when it restarts", file.path.display());
            return;
        }
    };
    warn_all(&list.warnings);
    let deadline = tokio::time::Instant::now() + SETTLE;
    for name in names {
        settle(&client, file, name, &list, deadline).await;
    }
}

/// Waits (until `deadline`) for where the reloaded server `name` lands, and says it.
async fn settle(
    client: &ControlClient,
    file: &ConfigFile,
    name: &str,
    reloaded: &McpServersList,
    deadline: tokio::time::Instant,
) {
    let user = |list: &McpServersList| {
        list.servers
            .iter()
            .find(|s| s.scope == McpScope::User && s.name == name)
            .cloned()
    };
    let Some(mut info) = user(reloaded) else {
        match file.entry(name).ok().flatten() {
            Some(_) => println!("The gateway reloaded the file but does not run {name}: see the warnings above, or `tap mcp list`."),
            None => println!("The gateway stopped it."),
        }
        return;
    };
    // The reload answers before a started server is ready: wait a little for where it
    // lands (an eager server leaves `stopped` too), so the answer is ready or why not.
    let eager = file
        .entry(name)
        .ok()
        .flatten()
        .and_then(|e| config::parse_entry(name, e).ok())
        .is_some_and(|(spec, _)| spec.startup == config::Startup::Eager);
    while (info.state == McpServerState::Starting
        || (info.state == McpServerState::Stopped && eager))
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        match client
            .call::<McpServersList>(ControlCall::McpServersList(Empty {}))
            .await
            .map(|list| user(&list))
        {
            Ok(Some(now)) => info = now,
            _ => break,
        }
    }
    warn_all(&info.warnings);
    println!("The gateway: {name} is {}.", state_line(&info));
    if info.state == McpServerState::Starting {
        println!("(`tap mcp list` shows when it is ready.)");
    }
}

/// How long `add` and the other edits wait for a started server to be ready.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(10);

// ---------------------------------------------------------------------- finding a server

/// The files (of `scope`, or of both) that configure `name`. A file that cannot be read
/// is an error when it is the only place to look, else a warning.
fn locate(home: &Path, name: &str, scope: Option<Scope>) -> Result<Vec<ConfigFile>, ExitCode> {
    let scopes = match scope {
        Some(s) => vec![s],
        None => vec![Scope::User, Scope::Project],
    };
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for s in scopes {
        match ConfigFile::open(s, home).and_then(|f| Ok((f.entry(name)?.is_some(), f))) {
            Ok((true, f)) => found.push(f),
            Ok((false, _)) => {}
            Err(e) => errors.push(e),
        }
    }
    if found.is_empty() {
        if let Some(e) = errors.into_iter().next() {
            return Err(file_fail(e));
        }
        let where_ = match scope {
            Some(s) => format!("in {}", crate::mcp_servers_file::path_of(s, home).display()),
            None => format!(
                "in {} or {}",
                crate::mcp_servers_file::path_of(Scope::User, home).display(),
                crate::mcp_servers_file::path_of(Scope::Project, home).display()
            ),
        };
        return Err(fail(
            "NOT_FOUND",
            format!("no MCP server '{name}' {where_} (`tap mcp list` shows them)"),
        ));
    }
    for e in errors {
        eprintln!("tap: warning: {}", e.message);
    }
    Ok(found)
}

/// The one file configuring `name`; both scopes having it needs `--scope`.
fn locate_one(home: &Path, name: &str, scope: Option<Scope>) -> Result<ConfigFile, ExitCode> {
    let mut found = locate(home, name, scope)?;
    if found.len() > 1 {
        return Err(invalid(format!(
            "MCP server '{name}' is in {} and in {}: pass --scope user or --scope project",
            found[0].path.display(),
            found[1].path.display()
        )));
    }
    Ok(found.remove(0))
}

/// The live instance of `name` (a project server: of `session`).
pub(crate) fn live_one<'a>(
    servers: &'a [McpServerInfo],
    name: &str,
    session: Option<&str>,
) -> Result<Option<&'a McpServerInfo>, ExitCode> {
    let matching: Vec<_> = servers
        .iter()
        .filter(|s| s.name == name && session.is_none_or(|id| s.session_id.as_deref() == Some(id)))
        .collect();
    match matching.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        several => Err(invalid(format!(
            "MCP server '{name}' runs in several sessions ({}): pass --session ID",
            several
                .iter()
                .filter_map(|s| s.session_id.as_deref())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

// ---------------------------------------------------------------------------- commands

/// `tap mcp add`.
async fn add(home: &Path, args: AddArgs) -> Outcome {
    config::check_name(&args.name)
        .map_err(|why| invalid(format!("MCP server '{}': {why}", args.name)))?;
    let entry = args.entry().map_err(invalid)?;
    secrets::check_asked(&args.name, &entry).map_err(invalid)?;
    let mut file = ConfigFile::open(args.scope, home).map_err(file_fail)?;
    let name = args.name.as_str();
    let servers = file.servers_mut().map_err(file_fail)?;
    let was_there = servers.contains_key(name);
    let old_secrets = servers
        .get(name)
        .map(|old| secrets::own(name, old))
        .unwrap_or_default();
    let mut entry = match servers.get(name) {
        Some(_) if !args.force => {
            return Err(fail(
                "ALREADY_EXISTS",
                format!(
                    "MCP server '{name}' is already in {}: pass --force to replace its command or URL (its other settings are kept), or `tap mcp remove {name}` first",
                    file.path.display()
                ),
            ))
        }
        Some(old) => Value::Object(replace_transport(old, entry)),
        None => Value::Object(entry),
    };
    let (spec, warnings) = config::parse_entry(name, &entry)
        .map_err(|why| invalid(format!("MCP server '{name}': {why}")))?;
    // `@secret` values: read, stored, and replaced by references before anything is written.
    let stored = match entry.as_object_mut() {
        Some(obj) => secrets::take(home, name, obj).map_err(invalid)?,
        None => Vec::new(),
    };
    let dropped: Vec<String> = old_secrets
        .into_iter()
        .filter(|n| !secrets::own(name, &entry).contains(n))
        .collect();
    servers.insert(name.to_string(), entry);
    warn_all(&warnings);
    file.save().map_err(file_fail)?;
    for line in &stored {
        println!("{line}");
    }
    secrets::forget(home, &dropped);
    let other = match args.scope {
        Scope::User => Scope::Project,
        Scope::Project => Scope::User,
    };
    if let Ok(f) = ConfigFile::open(other, home) {
        if f.entry(name).ok().flatten().is_some() {
            eprintln!(
                "tap: note: '{name}' is also configured in {} ({} scope)",
                f.path.display(),
                other.word()
            );
        }
    }
    let kind = serde_json::to_value(spec.transport.kind()).unwrap_or_default();
    println!(
        "{} MCP server '{name}' ({}: {}) in {}.",
        if was_there { "Replaced" } else { "Added" },
        kind.as_str().unwrap_or("?"),
        spec.transport.target(),
        file.path.display()
    );
    let names = spec.transport.secret_names();
    if !names.is_empty() {
        println!(
            "{}: {} (values not shown).",
            if kind == "stdio" {
                "Environment"
            } else {
                "Headers"
            },
            names.join(", ")
        );
    }
    apply(home, &file, name).await;
    Ok(ExitCode::SUCCESS)
}

/// `tap mcp remove`.
async fn remove(home: &Path, name: &str, scope: Option<Scope>) -> Outcome {
    let mut file = locate_one(home, name, scope)?;
    // A user server's sign-in is revoked while the gateway still knows where (its tokens
    // are forgotten either way, with its other secrets below).
    if file.scope == Scope::User {
        crate::mcp_servers_sign_in::sign_out_on_remove(home, name, file.entry(name).ok().flatten())
            .await;
    }
    let removed = file.servers_mut().map_err(file_fail)?.shift_remove(name);
    file.save().map_err(file_fail)?;
    println!("Removed MCP server '{name}' from {}.", file.path.display());
    // Its own secrets go too, unless the other scope's entry of that name still uses them.
    if let Some(removed) = removed {
        let other = match file.scope {
            Scope::User => Scope::Project,
            Scope::Project => Scope::User,
        };
        let kept = ConfigFile::open(other, home)
            .ok()
            .and_then(|f| f.entry(name).ok().flatten().map(|e| secrets::own(name, e)))
            .unwrap_or_default();
        let names: Vec<String> = secrets::own(name, &removed)
            .into_iter()
            .filter(|n| !kept.contains(n))
            .collect();
        secrets::forget(home, &names);
    }
    apply(home, &file, name).await;
    Ok(ExitCode::SUCCESS)
}

/// `tap mcp enable|disable`.
async fn set_enabled(home: &Path, name: &str, scope: Option<Scope>, enabled: bool) -> Outcome {
    let mut file = locate_one(home, name, scope)?;
    let word = if enabled { "enabled" } else { "disabled" };
    let entry = entry_mut(&mut file, name)?;
    let already = match entry.get("enabled") {
        None => enabled,
        Some(v) => v.as_bool() == Some(enabled),
    };
    if already {
        println!("MCP server '{name}' is already {word}.");
    } else {
        entry.insert("enabled".into(), enabled.into());
        file.save().map_err(file_fail)?;
        println!("MCP server '{name}' is {word} in {}.", file.path.display());
    }
    apply(home, &file, name).await;
    Ok(ExitCode::SUCCESS)
}

/// `name`'s entry as an object to edit (an entry that is not an object is not touched).
fn entry_mut<'a>(
    file: &'a mut ConfigFile,
    name: &str,
) -> Result<&'a mut Map<String, Value>, ExitCode> {
    let path = file.path.display().to_string();
    match file.servers_mut().map_err(file_fail)?.get_mut(name) {
        Some(Value::Object(entry)) => Ok(entry),
        _ => Err(fail(
            "INVALID_JSON",
            format!("'{KEY}.{name}' in {path} is not an object; fix it by hand"),
        )),
    }
}

/// `tap mcp list`.
async fn list(home: &Path, json: bool) -> Outcome {
    let servers: Vec<Value> = match live(home).await {
        Live::Listed(list) => {
            warn_all(&list.warnings);
            list.servers
                .iter()
                .map(|s| serde_json::to_value(s).expect("serializable"))
                .collect()
        }
        other => {
            if let Live::Failed(why) = other {
                eprintln!("tap: warning: the running gateway did not list its MCP servers ({why}): showing the configuration files");
            }
            configured(home)
        }
    };
    if json {
        print_json(&servers);
    } else if servers.is_empty() {
        println!("No MCP servers. Add one with `tap mcp add NAME -- COMMAND [ARGS...]` or `tap mcp add NAME URL`.");
    } else {
        print_servers(&servers);
    }
    Ok(ExitCode::SUCCESS)
}

/// The servers of the user file and of this workspace's project file, not running.
fn configured(home: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    for scope in [Scope::User, Scope::Project] {
        let file = match ConfigFile::open(scope, home) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("tap: warning: {}", e.message);
                continue;
            }
        };
        let Some(servers) = file.servers().unwrap_or_else(|e| {
            eprintln!("tap: warning: {}", e.message);
            None
        }) else {
            continue;
        };
        let parsed = config::parse(
            &Value::Object(servers.clone()),
            &file.path.display().to_string(),
        );
        warn_all(&parsed.warnings);
        out.extend(
            parsed
                .servers
                .iter()
                .map(|spec| not_running_info(spec, scope, &file.path)),
        );
    }
    out
}

/// `tap mcp get`.
async fn get(home: &Path, name: &str, scope: Option<Scope>, json: bool) -> Outcome {
    let live = live(home).await;
    let running: Vec<&McpServerInfo> = live
        .servers()
        .iter()
        .filter(|s| s.name == name && scope.is_none_or(|sc| scope_of(s) == sc))
        .collect();
    let files = match locate(home, name, scope) {
        Ok(files) => files,
        // Not in the files here, but running (a project server of another workspace).
        Err(_) if !running.is_empty() => Vec::new(),
        Err(code) => return Err(code),
    };
    let configured: Vec<Value> = files
        .iter()
        .map(|f| {
            let entry = f.entry(name).ok().flatten().cloned().unwrap_or_default();
            let problems = match config::parse_entry(name, &entry) {
                Ok((_, warnings)) => warnings,
                Err(why) => vec![format!("MCP server '{name}' is skipped: {why}")],
            };
            json!({
                "scope": f.scope.word(),
                "path": f.path.display().to_string(),
                "entry": redacted(&entry),
                "problems": problems,
            })
        })
        .collect();
    if json {
        print_json(&json!({"configured": configured, "running": running}));
        return Ok(ExitCode::SUCCESS);
    }
    for c in &configured {
        println!(
            "{name} ({} scope, in {}):",
            c["scope"].as_str().unwrap_or("?"),
            c["path"].as_str().unwrap_or("?")
        );
        let text = serde_json::to_string_pretty(&c["entry"]).expect("serializable");
        for line in text.lines() {
            println!("  {line}");
        }
        for p in c["problems"].as_array().into_iter().flatten() {
            println!("  problem: {}", p.as_str().unwrap_or_default());
        }
    }
    match live {
        Live::NotRunning => println!("No gateway is running."),
        Live::Failed(why) => println!("The running gateway did not answer ({why})."),
        Live::Listed(_) if running.is_empty() => {
            println!("The running gateway does not run it.")
        }
        Live::Listed(_) => {
            for info in running {
                print!("{}", describe_live(info));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn scope_of(info: &McpServerInfo) -> Scope {
    match info.scope {
        McpScope::User => Scope::User,
        McpScope::Project => Scope::Project,
    }
}

/// `tap mcp restart`.
async fn restart(home: &Path, name: &str, session: Option<String>) -> Outcome {
    let client = match gateway(home).await {
        None => return Err(fail(
            "DISCONNECTED",
            "no gateway is running: MCP servers start with it (`tap gateway` or the desktop app)",
        )),
        Some(Err(why)) => return Err(fail("DISCONNECTED", why)),
        Some(Ok(client)) => client,
    };
    // A project server running for one session only needs no --session.
    let session = match session {
        Some(s) => Some(s),
        None => match client
            .call::<McpServersList>(ControlCall::McpServersList(Empty {}))
            .await
        {
            Ok(list) => live_one(&list.servers, name, None)?.and_then(|s| s.session_id.clone()),
            Err(_) => None,
        },
    };
    let which = McpServerRef {
        name: name.to_string(),
        session_id: session,
    };
    let info: McpServerInfo = client
        .call(ControlCall::McpServersRestart(which))
        .await
        .map_err(control_fail)?;
    println!("Restarted MCP server '{name}': {}.", state_line(&info));
    Ok(ExitCode::SUCCESS)
}

/// The running gateway's list, or the contract's failure.
pub(crate) async fn listed(home: &Path) -> Result<McpServersList, ExitCode> {
    match live(home).await {
        Live::Listed(list) => Ok(list),
        Live::NotRunning => Err(no_gateway()),
        Live::Failed(why) => Err(fail("DISCONNECTED", why)),
    }
}

/// The contract's failure of a command that needs a running gateway when none runs.
pub(crate) fn no_gateway() -> ExitCode {
    fail(
        "DISCONNECTED",
        "no gateway is running: what MCP servers do is known while it runs (`tap gateway` or the desktop app)",
    )
}

/// `tap mcp tools`.
async fn tools(home: &Path, args: ToolsArgs) -> Outcome {
    let name = args.name.as_str();
    match (args.enable.as_deref(), args.disable.as_deref()) {
        (None, None) => show_tools(home, &args).await,
        (enable, disable) => {
            let mut file = locate_one(home, name, args.scope)?;
            let path = file.path.display().to_string();
            let entry = entry_mut(&mut file, name)?;
            let tool = unprefixed(entry, name, enable.or(disable).expect("one of them"));
            let mut disabled = match entry.get("disabledTools") {
                None => Vec::new(),
                Some(v) => serde_json::from_value::<Vec<String>>(v.clone()).map_err(|_| {
                    fail(
                        "INVALID_JSON",
                        format!("'disabledTools' of '{name}' in {path} is not an array of tool names; fix it by hand"),
                    )
                })?,
            };
            let was = disabled.contains(&tool);
            let on = enable.is_some();
            if on != was {
                println!(
                    "Tool '{tool}' of '{name}' is already {}.",
                    if on { "enabled" } else { "disabled" }
                );
                return Ok(ExitCode::SUCCESS);
            }
            if on {
                disabled.retain(|t| *t != tool);
            } else {
                disabled.push(tool.clone());
            }
            if disabled.is_empty() {
                entry.shift_remove("disabledTools");
            } else {
                entry.insert("disabledTools".into(), disabled.into());
            }
            file.save().map_err(file_fail)?;
            println!(
                "Tool '{tool}' of '{name}' is {} ({}).",
                if on { "enabled" } else { "disabled" },
                file.path.display()
            );
            apply(home, &file, name).await;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A tool's name as the server gives it: the prefix sessions see is taken off.
fn unprefixed(entry: &Map<String, Value>, name: &str, tool: &str) -> String {
    let default = format!("{name}__");
    let configured = entry.get("prefix").and_then(Value::as_str);
    for prefix in [configured.unwrap_or_default(), default.as_str()] {
        match tool.strip_prefix(prefix) {
            Some(rest) if !prefix.is_empty() && !rest.is_empty() => return rest.to_string(),
            _ => {}
        }
    }
    tool.to_string()
}

/// `tap mcp tools NAME`: the tools sessions see, and those turned off.
async fn show_tools(home: &Path, args: &ToolsArgs) -> Outcome {
    let name = args.name.as_str();
    let live = live(home).await;
    let running = live_one(live.servers(), name, args.session.as_deref())?;
    let disabled: Vec<String> = match locate(home, name, args.scope) {
        Ok(files) => files
            .iter()
            .filter_map(|f| f.entry(name).ok().flatten().cloned())
            .filter_map(|e| {
                serde_json::from_value::<Vec<String>>(e.get("disabledTools")?.clone()).ok()
            })
            .flatten()
            .collect(),
        Err(_) if running.is_some() => Vec::new(),
        Err(code) => return Err(code),
    };
    if args.json {
        print_json(&json!({
            "tools": running.map(|s| s.tools.clone()),
            "disabledTools": disabled,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    match (running, &live) {
        (Some(info), _) if info.tools.is_empty() => {
            println!(
                "MCP server '{name}' offers no tools now ({}).",
                state_line(info)
            )
        }
        (Some(info), _) => {
            println!(
                "Tools of '{name}' as sessions see them ({}):",
                info.tools.len()
            );
            for t in &info.tools {
                println!("  {t}");
            }
        }
        (None, Live::NotRunning) => {
            println!("No gateway is running: the tools of '{name}' are known once it runs it.")
        }
        (None, Live::Failed(why)) => println!("The running gateway did not answer ({why})."),
        (None, Live::Listed(_)) => println!("The running gateway does not run '{name}'."),
    }
    if !disabled.is_empty() {
        println!("Disabled (disabledTools): {}", disabled.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
