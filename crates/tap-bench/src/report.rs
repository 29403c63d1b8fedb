//! The results table, and the rows and errors a run collects for it (`Report`).

use crate::rss;

/// How a row compares with its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Miss,
    /// No target: context for the other rows.
    Info,
    /// Not run (not selected, or a prerequisite is missing).
    Skip,
    /// The scenario broke: an error, a wrong answer or a timeout.
    Fail,
}

impl Verdict {
    pub fn of(pass: bool) -> Self {
        if pass {
            Verdict::Pass
        } else {
            Verdict::Miss
        }
    }

    fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Miss => "MISS",
            Verdict::Info => "-",
            Verdict::Skip => "SKIP",
            Verdict::Fail => "FAIL",
        }
    }
}

pub struct Row {
    pub scenario: String,
    pub metric: String,
    pub value: String,
    /// The number this row is compared with: the bare echo's, the bare SQLite insert's, or
    /// the same scenario's with the ledger off.
    pub baseline: String,
    pub ratio: String,
    pub target: String,
    pub verdict: Verdict,
}

impl Row {
    pub fn info(scenario: &str, metric: &str, value: String) -> Self {
        Self {
            scenario: scenario.into(),
            metric: metric.into(),
            value,
            baseline: String::new(),
            ratio: String::new(),
            target: String::new(),
            verdict: Verdict::Info,
        }
    }

    pub fn vs(mut self, baseline: String, ratio: f64) -> Self {
        self.baseline = baseline;
        self.ratio = format!("{ratio:.2}x");
        self
    }

    pub fn target(mut self, target: &str, pass: bool) -> Self {
        self.target = target.into();
        self.verdict = Verdict::of(pass);
        self
    }

    pub fn failed(scenario: &str, why: &str) -> Self {
        let mut r = Self::info(scenario, "error", first_line(why));
        r.verdict = Verdict::Fail;
        r
    }

    pub fn skipped(scenario: &str, why: &str) -> Self {
        let mut r = Self::info(scenario, "", first_line(why));
        r.verdict = Verdict::Skip;
        r
    }
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(59).collect::<String>())
    } else {
        line.to_string()
    }
}

/// Prints the rows as an aligned table.
pub fn print(rows: &[Row]) {
    let header = [
        "Scenario", "Metric", "Value", "Baseline", "Ratio", "Target", "Result",
    ];
    let cells: Vec<[&str; 7]> = rows
        .iter()
        .map(|r| {
            [
                r.scenario.as_str(),
                r.metric.as_str(),
                r.value.as_str(),
                r.baseline.as_str(),
                r.ratio.as_str(),
                r.target.as_str(),
                r.verdict.label(),
            ]
        })
        .collect();
    let mut width = header.map(|h| h.chars().count());
    for row in &cells {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |row: &[&str; 7]| {
        let mut out = String::new();
        for (i, (c, w)) in row.iter().zip(width).enumerate() {
            // Text columns left-aligned, numbers right-aligned.
            let right = matches!(i, 2..=4);
            let pad = w - c.chars().count();
            if i > 0 {
                out.push_str("  ");
            }
            if right {
                out.push_str(&" ".repeat(pad));
                out.push_str(c);
            } else {
                out.push_str(c);
                if i < 6 {
                    out.push_str(&" ".repeat(pad));
                }
            }
        }
        println!("{}", out.trim_end());
    };
    line(&header);
    let rule: usize = width.iter().sum::<usize>() + 2 * (width.len() - 1);
    println!("{}", "-".repeat(rule));
    let mut last = "";
    for (row, r) in cells.iter().zip(rows) {
        // A blank scenario cell when it repeats keeps the groups readable.
        let mut row = *row;
        if r.scenario == last {
            row[0] = "";
        }
        last = &r.scenario;
        line(&row);
    }
}

/// Results and errors, in table order.
pub struct Report {
    pub rows: Vec<Row>,
    pub errors: Vec<String>,
}

impl Report {
    pub fn fail(&mut self, scenario: &str, e: String) {
        self.rows.push(Row::failed(scenario, &e));
        self.errors.push(format!("{scenario}: {e}"));
    }

    /// The `tap` binary for a scenario that starts it as a child process; without one the
    /// scenario shows `SKIP` and says how to build it.
    pub(crate) fn tap_for(
        &mut self,
        scenario: &str,
        explicit: Option<&std::path::Path>,
    ) -> Option<std::path::PathBuf> {
        match rss::locate_tap(explicit) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("tap-bench: {scenario} skipped: {e}");
                self.rows.push(Row::skipped(
                    scenario,
                    "no tap binary: cargo build --release -p tap-cli",
                ));
                None
            }
        }
    }
}
