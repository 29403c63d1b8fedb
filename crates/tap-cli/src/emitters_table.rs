//! How `tap emitters` shows emitters, runs and filter verdicts to a person. The layout is
//! not a contract (`--json` is).

use crate::durations::format_us;
use crate::output::print_table;
use tap_protocol::emitters::{
    EmitterInfo, EmitterKind, EmitterRule, EmitterRun, EmitterRuns, FilterTestResult, LineCounts,
    Ownership, Schedule,
};

/// The header of a line-counts cell.
const COUNTS_HEADER: &str = "LINES/KEPT/DROP/SURF/INJ";

/// An enum's wire name (`stopped`, `oneTime`, `userOwned`).
fn wire<T: serde::Serialize>(value: T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}

/// `3/2/1/0/0`: lines, kept, dropped, surfaced, injected.
fn counts_cell(c: &LineCounts) -> String {
    format!(
        "{}/{}/{}/{}/{}",
        c.lines, c.kept, c.dropped, c.surfaced, c.injected
    )
}

/// `continuous`, `every 5m`, `once`, `when idle`.
pub fn schedule_cell(e: &EmitterInfo) -> String {
    match e.schedule {
        Schedule::Continuous => "continuous".into(),
        Schedule::Timed => format!("every {}", e.every.as_deref().unwrap_or("?")),
        Schedule::OneTime => "once".into(),
        Schedule::Idle => "when idle".into(),
    }
}

fn owner(o: Ownership) -> &'static str {
    match o {
        Ownership::UserOwned => "user",
        Ownership::ModelOwned => "model",
    }
}

/// Text on one line of a table.
fn one_line(text: &str) -> String {
    text.trim_end().replace("\r\n", " ⏎ ").replace('\n', " ⏎ ")
}

fn or_dash(v: Option<&str>) -> String {
    v.map_or_else(|| "-".into(), one_line)
}

/// The emitters, one per line.
pub fn print_emitters(emitters: &[EmitterInfo]) {
    let header = [
        "NAME",
        "SESSION",
        "KIND",
        "SCHEDULE",
        "STATUS",
        "STREAM",
        "RUNS",
        COUNTS_HEADER,
        "LIFESPAN",
        "OWNER",
        "NEXT RUN",
        "LAST ERROR",
    ]
    .map(String::from);
    let rows: Vec<[String; 12]> = emitters
        .iter()
        .map(|e| {
            [
                e.name.clone(),
                e.session_id.clone(),
                wire(e.kind),
                schedule_cell(e),
                wire(e.status),
                e.stream.clone(),
                e.run_count.to_string(),
                counts_cell(&e.counts),
                wire(e.lifespan),
                owner(e.ownership).into(),
                or_dash(e.next_run_at.as_deref()),
                or_dash(e.last_error.as_deref()),
            ]
        })
        .collect();
    print_table(&header, &rows);
}

/// How a run ended: `0`, `SIGTERM`, `signal 40`, `-`.
fn exit_cell(r: &EmitterRun) -> String {
    match (r.exit_code, r.signal) {
        (Some(code), _) => code.to_string(),
        (None, Some(sig)) => match sig {
            1 => "SIGHUP".into(),
            2 => "SIGINT".into(),
            9 => "SIGKILL".into(),
            15 => "SIGTERM".into(),
            n => format!("signal {n}"),
        },
        (None, None) => "-".into(),
    }
}

/// An emitter's runs, newest first, under a title.
pub fn print_runs(runs: &EmitterRuns) {
    let n = runs.runs.len();
    println!(
        "{n} {} of emitter {} in session {}, newest first:",
        if n == 1 { "run" } else { "runs" },
        runs.name,
        runs.session_id
    );
    let header = [
        "RUN",
        "TRIGGER",
        "STATUS",
        "STARTED",
        "ENDED",
        "DURATION",
        "EXIT",
        COUNTS_HEADER,
        "ERROR",
        "TRACE",
    ]
    .map(String::from);
    let rows: Vec<[String; 10]> = runs
        .runs
        .iter()
        .map(|r| {
            [
                r.run.to_string(),
                wire(r.trigger),
                wire(r.status),
                r.started_at.clone(),
                or_dash(r.ended_at.as_deref()),
                r.duration_ms
                    .map_or_else(|| "-".into(), |ms| format_us(ms.saturating_mul(1000))),
                exit_cell(r),
                counts_cell(&r.lines),
                or_dash(r.error.as_deref()),
                r.trace_id.clone(),
            ]
        })
        .collect();
    print_table(&header, &rows);
}

/// `'line-2' → drop`.
fn rule_text(r: &EmitterRule) -> String {
    format!("'{}' → {}", r.pattern, r.outcome.as_str())
}

/// What `start` and `stop` print: a title, then the emitter's details, one per line.
pub fn describe(e: &EmitterInfo, verb: &str) -> String {
    let mut out = format!(
        "{verb} emitter {} in session {}: {}.\n",
        e.name,
        e.session_id,
        wire(e.status)
    );
    let mut rows: Vec<(&str, String)> = Vec::new();
    match e.kind {
        EmitterKind::Command => rows.push(("command", or_dash(e.command.as_deref()))),
        EmitterKind::Prompt => rows.push(("prompt", or_dash(e.prompt.as_deref()))),
    }
    rows.push(("schedule", schedule_cell(e)));
    rows.push(("stream", e.stream.clone()));
    let filter = if e.event_filter.is_empty() {
        "none (every line is kept)".to_string()
    } else {
        e.event_filter
            .iter()
            .map(rule_text)
            .collect::<Vec<_>>()
            .join(", then ")
    };
    rows.push(("filter", filter));
    let c = &e.counts;
    rows.push((
        "runs",
        format!(
            "{}; lines {}: {} kept, {} dropped, {} surfaced, {} injected",
            e.run_count, c.lines, c.kept, c.dropped, c.surfaced, c.injected
        ),
    ));
    rows.push((
        "lifespan",
        format!("{}, {}-owned", wire(e.lifespan), owner(e.ownership)),
    ));
    if let Some(next) = &e.next_run_at {
        rows.push(("next run", next.clone()));
    }
    if let Some(err) = &e.last_error {
        rows.push(("last error", one_line(err)));
    }
    if let Some(d) = &e.description {
        rows.push(("description", one_line(d)));
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in rows {
        out.push_str(&format!("  {k:<width$}  {v}\n"));
    }
    out
}

/// `drop: the 2nd --filter, 'line-2' → drop, matches` / `keep: no rule matches (a line no
/// rule matches is kept)`. The flags are counted from 1 here (the JSON's `rule` from 0).
pub fn filter_verdict(rules: &[EmitterRule], result: &FilterTestResult) -> String {
    let outcome = result.outcome.as_str();
    match result
        .rule
        .and_then(|i| rules.get(i as usize).map(|r| (i, r)))
    {
        Some((i, r)) => format!(
            "{outcome}: the {} --filter, {}, matches",
            ordinal(i as usize + 1),
            rule_text(r)
        ),
        None => format!("{outcome}: no rule matches (a line no rule matches is kept)"),
    }
}

/// `1st`, `2nd`, `3rd`, `4th`, `11th`, `21st`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tap_protocol::emitters::{EmitterStatus, Lifespan};
    use tap_protocol::ledger::EventOutcome;

    fn info() -> EmitterInfo {
        EmitterInfo {
            name: "tests".into(),
            session_id: "s-1".into(),
            kind: EmitterKind::Command,
            command: Some("cargo test\n--quiet".into()),
            prompt: None,
            schedule: Schedule::Timed,
            every: Some("1h".into()),
            status: EmitterStatus::Waiting,
            stream: "tests".into(),
            run_count: 1,
            counts: LineCounts {
                lines: 3,
                kept: 2,
                dropped: 1,
                surfaced: 0,
                injected: 0,
            },
            event_filter: vec![EmitterRule {
                pattern: "line-2".into(),
                outcome: EventOutcome::Drop,
            }],
            lifespan: Lifespan::Temporary,
            ownership: Ownership::UserOwned,
            next_run_at: Some("2026-11-25T15:00:00Z".into()),
            last_error: None,
            description: None,
        }
    }

    #[test]
    fn describe_shows_what_it_runs_when_and_what_came_of_it() {
        let text = describe(&info(), "Started");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Started emitter tests in session s-1: waiting.");
        assert_eq!(lines[1], "  command   cargo test ⏎ --quiet");
        assert_eq!(lines[2], "  schedule  every 1h");
        assert_eq!(lines[4], "  filter    'line-2' → drop");
        assert_eq!(
            lines[5],
            "  runs      1; lines 3: 2 kept, 1 dropped, 0 surfaced, 0 injected"
        );
        assert_eq!(lines[6], "  lifespan  temporary, user-owned");
        assert_eq!(lines[7], "  next run  2026-11-25T15:00:00Z");
        assert_eq!(lines.len(), 8, "{text}");
    }

    #[test]
    fn schedules_in_words() {
        let mut e = info();
        assert_eq!(schedule_cell(&e), "every 1h");
        e.schedule = Schedule::Continuous;
        assert_eq!(schedule_cell(&e), "continuous");
        e.schedule = Schedule::Idle;
        assert_eq!(schedule_cell(&e), "when idle");
        assert_eq!(wire(Schedule::OneTime), "oneTime");
    }

    #[test]
    fn verdicts_name_the_rule_that_matched() {
        let rules = info().event_filter;
        let hit = FilterTestResult {
            rule: Some(0),
            outcome: EventOutcome::Drop,
        };
        assert_eq!(
            filter_verdict(&rules, &hit),
            "drop: the 1st --filter, 'line-2' → drop, matches"
        );
        assert_eq!(
            [1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal),
            ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]
        );
        let miss = FilterTestResult {
            rule: None,
            outcome: EventOutcome::Keep,
        };
        assert!(filter_verdict(&rules, &miss).starts_with("keep: no rule matches"));
    }

    #[test]
    fn exits_by_code_or_signal() {
        let mut r = EmitterRun {
            run: 1,
            trigger: tap_protocol::emitters::RunTrigger::Start,
            status: EmitterStatus::Exited,
            scheduled_at: String::new(),
            started_at: String::new(),
            ended_at: None,
            duration_ms: None,
            exit_code: Some(0),
            signal: None,
            lines: LineCounts::default(),
            error: None,
            trace_id: String::new(),
        };
        assert_eq!(exit_cell(&r), "0");
        r.exit_code = None;
        r.signal = Some(15);
        assert_eq!(exit_cell(&r), "SIGTERM");
        r.signal = None;
        assert_eq!(exit_cell(&r), "-");
    }
}
