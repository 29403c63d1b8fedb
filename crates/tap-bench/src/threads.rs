//! Diagnosis only (`TAP_BENCH_THREADS=1`): context switches per thread of this process,
//! so a per-operation count can be placed on the threads that make it.

use std::collections::BTreeMap;

/// Switches so far per thread, keyed by `name/tid`.
pub fn snapshot() -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        let Ok(status) = std::fs::read_to_string(path.join("status")) else {
            continue;
        };
        let mut total = 0;
        for line in status.lines() {
            if let Some(v) = line
                .strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
            {
                total += v.trim().parse::<u64>().unwrap_or(0);
            }
        }
        let key = format!("{}/{}", comm.trim(), task.file_name().to_string_lossy());
        out.insert(key, total);
    }
    out
}

/// Per-thread switches accumulated over the rounds of one phase.
#[derive(Default)]
pub struct PerThread {
    totals: BTreeMap<String, u64>,
    mark: Option<BTreeMap<String, u64>>,
}

impl PerThread {
    pub fn enabled() -> bool {
        std::env::var_os("TAP_BENCH_THREADS").is_some()
    }

    pub fn begin(&mut self) {
        if Self::enabled() {
            self.mark = Some(snapshot());
        }
    }

    pub fn end(&mut self) {
        let Some(before) = self.mark.take() else {
            return;
        };
        for (k, v) in snapshot() {
            let d = v.saturating_sub(before.get(&k).copied().unwrap_or(0));
            *self.totals.entry(k).or_default() += d;
        }
    }

    pub fn print(&self, label: &str, ops: usize) {
        if !Self::enabled() {
            return;
        }
        for (k, v) in &self.totals {
            if *v > 0 {
                eprintln!(
                    "threads {label}: {k} {:.2}/op",
                    *v as f64 / ops.max(1) as f64
                );
            }
        }
    }
}
