//! Conformance suite for the TAP Provider Interface v2
//! (`provider-interface-v2.md`, with `provider-interface-core-profile.md`), as this
//! gateway reads it (`docs/spec-decisions.md`).
//!
//! One module per spec section, one test per rule, each named after its rule. Providers
//! are raw WebSocket clients sending JSON text frames exactly as a provider written in
//! any language would; session hosts connect over `/session` with `tap-client`. Rules
//! the engine does not implement yet are `#[ignore = "not implemented yet: …"]`; a rule
//! the engine claims but breaks is `#[ignore = "engine bug: …"]`. Run with
//! `cargo test -p tap-gateway --test conformance` (add `-- --ignored` for the rest).

mod common;

mod all_binding;
mod authentication_and_trust;
mod capabilities;
mod connection_states;
mod core_authentication;
mod dynamic_tool_registration;
mod error_recovery_guide;
mod error_responses;
mod gate_timeout;
mod gateway_crash_recovery;
mod hook_rules;
mod messages_gateway_to_provider;
mod messages_provider_to_gateway;
mod multi_instance;
mod multi_session;
mod ordering_guarantees;
mod payload_limits;
mod project_providers;
mod protected_prompt_sections;
mod provider_lifecycle;
mod push_loop_prevention;
mod reconnect;
mod regex_safety;
mod session_binding;
mod session_ids_and_correlation;
mod session_scope;
mod stream_access_control;
mod terminal_ordering;
mod tool_concurrency;
mod tool_name_collisions;
mod transform_rules;
mod update_acknowledgments;
mod version_negotiation;
