//! When each provider connection was last heard from. Multi-instance routing sends a call
//! without `target` to the most recently active instance (spec: "Multi-instance
//! providers"), and `list_<name>_instances` shows each instance's last activity.
//!
//! Activity is any frame the provider sends after `auth` (its `hello`, a `push`, a
//! `tool.result`, …): a browser tab that gains focus makes itself the default target by
//! saying anything. Calls the gateway sends do not count, so routing follows the provider.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Orders activity across every connection of the process: unique and increasing, so two
/// frames within one clock tick (or under a paused test clock) are still ordered.
static ORDER: AtomicU64 = AtomicU64::new(1);

/// The last activity of one connection. Written only by its own connection task.
#[derive(Debug, Default)]
pub(crate) struct Activity {
    order: AtomicU64,
    at_ms: AtomicU64,
}

impl Activity {
    /// Records activity now.
    pub fn touch(&self) {
        self.order
            .store(ORDER.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.at_ms.store(ms, Ordering::Relaxed);
    }

    /// Higher is more recent; 0 = never active.
    pub fn order(&self) -> u64 {
        self.order.load(Ordering::Relaxed)
    }

    /// Wall-clock time of the last activity, if any.
    pub fn at(&self) -> Option<SystemTime> {
        match self.at_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(UNIX_EPOCH + Duration::from_millis(ms)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_touch_orders_after_an_earlier_one() {
        let (a, b) = (Activity::default(), Activity::default());
        assert_eq!((a.order(), a.at()), (0, None));
        a.touch();
        b.touch();
        assert!(b.order() > a.order());
        a.touch();
        assert!(a.order() > b.order());
        assert!(a.at().is_some());
    }
}
