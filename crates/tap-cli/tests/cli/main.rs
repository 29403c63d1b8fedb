//! Tests of the `tap` command, linked as one binary: each module drives the real `tap`
//! binary (`tap gateway` children on 127.0.0.1:0 with their own TAP_HOME, one-shot `tap`
//! commands, the spec's example providers) and scripted providers over real sockets.
//!
//! Run one module with `cargo test -p tap-cli --test cli pairing_cli::`.

mod common;

mod approvals_cli;
mod call_precheck;
mod cli_contract;
mod connect_cases;
mod connect_clients;
mod connect_support;
mod copilot_install;
mod copilot_profile;
mod copilot_skills;
mod copilot_token_takeover;
mod emitters_cli;
mod export_workspace_cli;
mod history_cli;
mod history_kill;
mod idle_exit;
mod mcp_cli;
mod mcp_servers_cli;
mod mcp_servers_import_cli;
mod mcp_servers_logs_cli;
mod mcp_servers_secrets_cli;
mod mcp_sign_in_cli;
mod multi_instance_cli;
mod newcomer_cli;
mod pairing_cli;
mod pins_cli;
mod profiles_cli;
mod prompt_cli;
mod session_open_cli;
mod settings_cli;
mod spec_providers;
mod ui_cli;
