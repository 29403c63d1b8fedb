//! What the bench prints about the machine before it measures.

use crate::options::Options;
use std::time::Duration;

fn first_match(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

pub(crate) fn print_machine(opts: &Options) {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let cpu = first_match("/proc/cpuinfo", "model name").unwrap_or_else(|| "unknown".into());
    let mem = first_match("/proc/meminfo", "MemTotal").unwrap_or_else(|| "unknown".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    println!("tap-bench {}", env!("CARGO_PKG_VERSION"));
    println!("machine: {cores} cores available, CPU {cpu}, memory {mem}, Linux {kernel}");
    println!(
        "runtime: tokio multi-thread, {cores} workers; clients, providers and the in-process gateway share it; loopback only"
    );
    if cfg!(debug_assertions) {
        println!("WARNING: debug build; numbers are meaningless. Use `cargo run --release -p tap-bench`.");
    }
    println!(
        "mode: {}, ledger {}{}{}",
        if opts.quick { "quick" } else { "full" },
        opts.history.label(),
        if opts.nodelay { ", nodelay" } else { "" },
        if opts.only.is_empty() {
            String::new()
        } else {
            format!(", only {}", opts.only.join(","))
        }
    );
}

/// Busy and total jiffies of all CPUs (`/proc/stat`; steal counts as busy).
fn cpu_jiffies() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    let total: u64 = fields.iter().take(8).sum();
    let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// How busy the machine is before the bench starts: other processes skew every number.
pub(crate) async fn print_background_load() {
    let Some((b0, t0)) = cpu_jiffies() else {
        return;
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let Some((b1, t1)) = cpu_jiffies() else {
        return;
    };
    let busy = (b1 - b0) as f64 / (t1 - t0).max(1) as f64 * 100.0;
    println!("background CPU load before the run: {busy:.0}%");
    if busy > 10.0 {
        println!("WARNING: the machine is busy; the numbers below will be noisy.");
    }
    println!();
}
