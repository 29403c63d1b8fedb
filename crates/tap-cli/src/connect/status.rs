//! `tap connect`'s list: every client's report from `tap_connect::status`, and the Copilot
//! CLI's, judged by the extension `tap install copilot` writes (`tap_connect::copilot`).

use std::path::Path;
use tap_connect::{Dirs, Report};

/// Every client's report, the Copilot CLI last.
pub fn all(d: &Dirs, tap: &str, tap_home: &Path) -> Vec<Report> {
    let mut reports = tap_connect::status::all(d, tap, tap_home);
    reports.push(tap_connect::copilot::report(d));
    reports
}
