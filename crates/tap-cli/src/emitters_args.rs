//! The flags of `tap emitters …` (clap), and `--filter REGEX=OUTCOME` read into an
//! EventFilter rule.

use clap::{ArgGroup, Args, Subcommand};
use tap_protocol::emitters::{EmitterRule, EmitterStart, Lifespan};
use tap_protocol::ledger::EventOutcome;

#[derive(Subcommand)]
pub enum EmittersCommand {
    /// Emitters of the running sessions: schedule, status, stream, runs, line counts.
    List {
        /// Only this session's emitters.
        #[arg(long)]
        session: Option<String>,
        /// Print a JSON array of the emitters.
        #[arg(long)]
        json: bool,
    },
    /// Start an emitter in a running session (replacing one of the same name): a command
    /// whose output lines feed a stream, or a prompt delivered to the session.
    Start(Box<StartArgs>),
    /// Stop an emitter: its process group gets SIGTERM, then SIGKILL after 2 s.
    Stop {
        /// The session.
        #[arg(long)]
        session: String,
        /// The emitter.
        name: String,
        /// Stop a user-owned emitter.
        #[arg(long)]
        force: bool,
        /// Also remove its definition from the project's tap.config.json.
        #[arg(long)]
        persistent: bool,
        /// Print the stopped emitter as JSON.
        #[arg(long)]
        json: bool,
    },
    /// An emitter's runs, newest first: trigger, status, times, exit, line counts, trace.
    Runs {
        /// The emitter.
        name: String,
        /// The session.
        #[arg(long)]
        session: String,
        /// Print a JSON array of the runs.
        #[arg(long)]
        json: bool,
    },
    /// Which --filter rule matches LINE, and what becomes of the line (no session needed).
    TestFilter {
        /// A filter rule, REGEX=OUTCOME, as for `tap emitters start`; repeatable, in order.
        #[arg(long = "filter", value_name = "REGEX=OUTCOME", value_parser = parse_rule,
              required = true)]
        filters: Vec<EmitterRule>,
        /// A line of output.
        line: String,
        /// Print the gateway's answer as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// The flags of `tap emitters start`.
#[derive(Args)]
#[command(group = ArgGroup::new("what").required(true).args(["command", "prompt"]))]
pub struct StartArgs {
    /// The session.
    #[arg(long)]
    pub session: String,
    /// The emitter's name (also its stream's, unless --stream).
    pub name: String,
    /// A shell command (`bash -lc`); each output line goes through the filter.
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
    /// A prompt delivered to the session (an inject).
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
    /// Run every DURATION (`30s`, `5m`, `2h`, `1d`), or `idle` (prompts: whenever the
    /// session goes idle). Without it a command runs continuously, a prompt once.
    #[arg(long, value_name = "DURATION|idle")]
    pub every: Option<String>,
    /// The command's working directory, relative to the session's (must stay inside it).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// The stream its lines go to (default: the emitter's name).
    #[arg(long, value_name = "STREAM")]
    pub stream: Option<String>,
    /// Route stderr lines through the filter too.
    #[arg(long)]
    pub include_stderr: bool,
    /// Stop after N runs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_runs: Option<u32>,
    /// `on-failure`: restart a continuous command that fails (backoff 1 s doubling to
    /// 5 min).
    #[arg(long, value_name = "POLICY", value_parser = ["on-failure", "never"])]
    pub restart: Option<String>,
    /// A filter rule, REGEX=OUTCOME (outcome: drop, keep, surface, inject; split at the
    /// last `=`); repeatable, in order: the first rule whose case-insensitive regex
    /// matches a line decides; a line no rule matches is kept.
    #[arg(long = "filter", value_name = "REGEX=OUTCOME", value_parser = parse_rule)]
    pub filters: Vec<EmitterRule>,
    /// What it is for.
    #[arg(long, value_name = "TEXT")]
    pub description: Option<String>,
    /// Replace a user-owned emitter of the same name.
    #[arg(long)]
    pub force: bool,
    /// Also write it to the project's tap.config.json, so the next session starts it.
    #[arg(long)]
    pub persistent: bool,
    /// With --persistent: written with autoStart false (not started by the next session).
    #[arg(long, requires = "persistent")]
    pub no_auto_start: bool,
    /// Print the started emitter as JSON.
    #[arg(long)]
    pub json: bool,
}

impl StartArgs {
    /// The `emitters.start` request these flags make.
    pub fn request(self) -> EmitterStart {
        EmitterStart {
            session_id: self.session,
            name: self.name,
            command: self.command,
            prompt: self.prompt,
            every: self.every,
            cwd: self.cwd,
            stream: self.stream,
            include_stderr: self.include_stderr.then_some(true),
            max_runs: self.max_runs,
            restart: self.restart,
            event_filter: (!self.filters.is_empty()).then_some(self.filters),
            description: self.description,
            force: self.force.then_some(true),
            lifespan: self.persistent.then_some(Lifespan::Persistent),
            auto_start: self.no_auto_start.then_some(false),
        }
    }
}

/// `REGEX=OUTCOME`, split at the last `=` (so a regex may hold `=`).
pub fn parse_rule(text: &str) -> Result<EmitterRule, String> {
    let Some((pattern, outcome)) = text.rsplit_once('=') else {
        return Err("expected REGEX=OUTCOME (e.g. 'error|fail=surface')".into());
    };
    if pattern.is_empty() {
        return Err("the regex before '=' is empty (use '.*' to match every line)".into());
    }
    let outcome = match outcome.trim().to_ascii_lowercase().as_str() {
        "drop" => EventOutcome::Drop,
        "keep" => EventOutcome::Keep,
        "surface" => EventOutcome::Surface,
        "inject" => EventOutcome::Inject,
        _ => {
            return Err(format!(
                "the outcome '{outcome}' is not one of drop, keep, surface, inject (the rule is split at its last '=')"
            ))
        }
    };
    Ok(EmitterRule {
        pattern: pattern.to_string(),
        outcome,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_splits_at_its_last_equals_sign() {
        let r = parse_rule("a=b=drop").unwrap();
        assert_eq!(r.pattern, "a=b");
        assert_eq!(r.outcome, EventOutcome::Drop);
        let r = parse_rule("^line-2$=Surface").unwrap();
        assert_eq!(r.pattern, "^line-2$");
        assert_eq!(r.outcome, EventOutcome::Surface);
    }

    #[test]
    fn what_a_rule_may_not_be() {
        assert!(parse_rule("no-outcome")
            .unwrap_err()
            .contains("REGEX=OUTCOME"));
        assert!(parse_rule("=drop").unwrap_err().contains("empty"));
        let e = parse_rule("x=shout").unwrap_err();
        assert!(
            e.contains("'shout'") && e.contains("drop, keep, surface, inject"),
            "{e}"
        );
        // The last `=` decides: `a=drop=` has an empty outcome.
        assert!(parse_rule("a=drop=").is_err());
    }
}
