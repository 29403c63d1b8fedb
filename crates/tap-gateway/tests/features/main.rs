//! The gateway's feature tests, one module per feature, linked as one binary (the spec's
//! rules have their own binary, `conformance/`). Every test runs a real gateway in this
//! process on 127.0.0.1:0 with its own TAP_HOME (see `tap-testkit`), so tests share no
//! ports, paths or environment variables and run in parallel.
//!
//! Run one feature with `cargo test -p tap-gateway --test features pairing::`.

mod activity;
mod agent_tools;
mod all_binding;
mod approvals;
mod approvals_control;
mod approvals_history;
mod approvals_in_client;
mod approvals_in_host;
mod child_env;
mod clients_control;
mod clients_copilot;
mod close_codes;
mod concurrency;
mod config_hot_reload;
mod control_logs;
mod control_plane;
mod control_streams;
mod copilot_token_file;
mod diagnostics;
mod emitter_config_edits;
mod emitters;
mod file_results;
mod followed_changes;
mod gateway_stop;
mod goal_evidence;
mod history;
mod hook_session_match;
mod hooks;
mod host_protocol;
mod host_resume;
mod host_resume_answers;
mod identity;
mod key_order;
mod live_events;
mod malformed_results;
mod mcp;
mod mcp_servers;
mod monitor_skill;
mod multi_instance;
mod otlp_export;
mod pairing;
mod panel_http;
mod pattern_cost;
mod pins;
mod playground;
mod project_providers;
mod project_refusals;
mod provider_auth;
mod provider_hello;
mod provider_limits;
mod provider_states;
mod push_and_streams;
mod push_budgets;
mod queued_deliveries;
mod records_tools;
mod session_events;
mod session_mode;
mod sessions;
mod settings;
mod slow_consumers;
mod smoke;
mod spawn;
mod stream_filters;
mod terminal_results;
mod tool_arguments;
mod tool_calls;
mod tools_update;
mod toolset_debounce;
mod traces;
mod transforms;
mod update_rate;
