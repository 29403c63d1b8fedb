//! The command line and how much work each scenario does.

use std::path::PathBuf;
use std::time::Duration;
use tap_gateway::History;

pub(crate) const USAGE: &str = "\
usage: tap-bench [--quick] [--only LIST] [--history on|off|both] [--tap PATH]
                 [--mcp-proxy PATH] [--nodelay]

  --quick      smaller counts (a few seconds in all)
  --only LIST  comma-separated scenarios to run: s1,s2,s3,s3d,s4,s5,s6,s7,s8,s9,s10,s11,s12
               (E0 always runs)
  --history W  the ledger of the in-process gateway S1-S4 and S7 run against: `on`
               ($TAP_HOME/history.sqlite3 in a temp dir), `off` (records discarded), or
               `both` (default): S1-S3 run against one gateway of each, interleaved, and
               report the on/off ratio; S4 and S7 run with it on. S3d and S6 are
               always on
  --tap PATH   the `tap` binary for S5, S7 out of process, S8, S9 and S10 (default: `tap`
               next to this executable; build it with `cargo build --release -p tap-cli`)
  --mcp-proxy PATH
               PyPI's `mcp-proxy`, the peer S9 compares the gateway with (default:
               `mcp-proxy` on PATH; without it S9's peer rows say it is not installed)
  --nodelay    TCP_NODELAY on the bench's own sockets (clients, providers, bare
               server); the gateway's sockets and HostClient keep their defaults";

/// The scenarios `--only` takes.
const SCENARIOS: [&str; 13] = [
    "s1", "s2", "s3", "s3d", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12",
];

/// `--history`: which ledger settings the in-process scenarios run with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ledgers {
    On,
    Off,
    Both,
}

impl Ledgers {
    /// The gateways to start, the first being the one every scenario uses (on, when it is
    /// among them: the product's default).
    pub fn settings(self) -> &'static [History] {
        match self {
            Ledgers::On => &[History::File],
            Ledgers::Off => &[History::Off],
            Ledgers::Both => &[History::File, History::Off],
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Ledgers::On => "on",
            Ledgers::Off => "off",
            Ledgers::Both => "on and off",
        }
    }
}

/// `ledger on` / `ledger off`, for progress lines and the report.
pub(crate) fn ledger_label(h: History) -> &'static str {
    match h {
        History::Off => "ledger off",
        History::Memory => "ledger in memory",
        History::File => "ledger on",
    }
}

pub(crate) struct Options {
    pub quick: bool,
    pub nodelay: bool,
    pub only: Vec<String>,
    pub history: Ledgers,
    pub tap: Option<PathBuf>,
    /// S9's peer, PyPI's `mcp-proxy`.
    pub mcp_proxy: Option<PathBuf>,
}

impl Options {
    pub fn parse() -> Result<Option<Self>, String> {
        let mut opts = Options {
            quick: false,
            nodelay: false,
            only: Vec::new(),
            history: Ledgers::Both,
            tap: None,
            mcp_proxy: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) => (f.to_string(), Some(v.to_string())),
                None => (arg.clone(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| args.next())
                    .ok_or(format!("{flag} needs a value"))
            };
            match flag.as_str() {
                "--quick" => opts.quick = true,
                "--nodelay" => opts.nodelay = true,
                "--only" => {
                    opts.only = value()?
                        .split(',')
                        .map(|s| s.trim().to_ascii_lowercase())
                        .filter(|s| !s.is_empty())
                        .collect();
                    if let Some(bad) = opts.only.iter().find(|s| !SCENARIOS.contains(&s.as_str())) {
                        return Err(format!("unknown scenario '{bad}'"));
                    }
                }
                "--history" => {
                    opts.history = match value()?.as_str() {
                        "on" => Ledgers::On,
                        "off" => Ledgers::Off,
                        "both" => Ledgers::Both,
                        other => {
                            return Err(format!("--history takes on, off or both, not '{other}'"))
                        }
                    }
                }
                "--tap" => opts.tap = Some(PathBuf::from(value()?)),
                "--mcp-proxy" => opts.mcp_proxy = Some(PathBuf::from(value()?)),
                "-h" | "--help" => return Ok(None),
                // `cargo bench` style harness flags are not ours; refuse rather than ignore.
                other => return Err(format!("unknown argument '{other}'")),
            }
        }
        Ok(Some(opts))
    }

    pub fn wants(&self, scenario: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == scenario)
    }
}

/// How much work each scenario does.
pub(crate) struct Counts {
    pub warmup: usize,
    pub sequential: usize,
    /// E0/S1a/S1b are interleaved in this many rounds.
    pub rounds: usize,
    /// Throughput scenarios run this many times; the table shows the median.
    pub reps: usize,
    pub pipelined: usize,
    pub in_flight: usize,
    pub fan_calls: usize,
    pub pushes: usize,
    /// S3d: pushes into the ledger, and the baseline's rows.
    pub ledger_pushes: usize,
    /// S6: the emitter's command is `seq 1 emitter_lines`.
    pub emitter_lines: usize,
    pub churn: usize,
    pub churn_workers: usize,
    pub rss_load_calls: usize,
    /// S9 and S10: calls per run with 32 in flight, on each path.
    pub mcp_calls: usize,
    /// Upper bound on any one scenario's wall time.
    pub limit: Duration,
}

impl Counts {
    pub fn new(quick: bool) -> Self {
        if quick {
            Self {
                warmup: 200,
                sequential: 2_000,
                rounds: 4,
                reps: 1,
                pipelined: 20_000,
                in_flight: 64,
                fan_calls: 20_000,
                pushes: 20_000,
                ledger_pushes: 20_000,
                emitter_lines: 100_000,
                churn: 1_000,
                churn_workers: 4,
                rss_load_calls: 5_000,
                mcp_calls: 1_000,
                limit: Duration::from_secs(30),
            }
        } else {
            Self {
                warmup: 2_000,
                sequential: 20_000,
                rounds: 10,
                reps: 3,
                pipelined: 200_000,
                in_flight: 64,
                fan_calls: 200_000,
                pushes: 100_000,
                ledger_pushes: 100_000,
                emitter_lines: 1_000_000,
                churn: 10_000,
                churn_workers: 4,
                rss_load_calls: 50_000,
                mcp_calls: 10_000,
                limit: Duration::from_secs(120),
            }
        }
    }
}
