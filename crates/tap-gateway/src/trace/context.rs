//! W3C trace context: the ids of a span, and the `traceparent` header that carries them
//! between processes (`00-<32 hex trace-id>-<16 hex parent-id>-<2 hex flags>`).

use crate::ids::Hex;
/// Where a new span belongs: its trace, and the span it is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpanContext {
    pub trace_id: u128,
    pub span_id: u64,
    /// The span lives in another process (a session host's, from its `traceparent`).
    pub remote: bool,
}

impl SpanContext {
    /// Parses a `traceparent` value. `None` for anything the W3C spec says to ignore: the
    /// wrong shape, version `ff`, an all-zero trace or parent id, upper-case hex.
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        let mut parts = value.split('-');
        let version = parts.next()?;
        let trace = parts.next()?;
        let parent = parts.next()?;
        let flags = parts.next()?;
        // Version 00 has exactly four fields; a later version may add more after them.
        if version.len() != 2 || version == "ff" || (version == "00" && parts.next().is_some()) {
            return None;
        }
        if trace.len() != 32 || parent.len() != 16 || flags.len() != 2 {
            return None;
        }
        if ![version, trace, parent, flags].iter().all(|p| {
            p.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        }) {
            return None;
        }
        let trace_id = u128::from_str_radix(trace, 16).ok()?;
        let span_id = u64::from_str_radix(parent, 16).ok()?;
        (trace_id != 0 && span_id != 0).then_some(Self {
            trace_id,
            span_id,
            remote: true,
        })
    }

    /// This span as a `traceparent` value (sampled: every span is recorded).
    pub fn traceparent(&self) -> String {
        let mut v = String::with_capacity(55);
        v.push_str("00-");
        v.push_str(Hex::<32>::new(self.trace_id).as_str());
        v.push('-');
        v.push_str(Hex::<16>::new(self.span_id.into()).as_str());
        v.push_str("-01");
        v
    }

    /// The trace id as 32 hex digits.
    pub fn trace_hex(&self) -> String {
        Hex::<32>::new(self.trace_id).as_str().to_string()
    }
}

/// A fresh trace id: the time in microseconds in the high 64 bits, 64 random bits in the
/// low ones (never zero), as W3C Trace Context level 2 allows (it asks for randomness in the
/// right-most 7 bytes).
///
/// Why the time: the ledger indexes spans by `trace_id`. Fully random ids sent every span row
/// to a random leaf of that index, so a commit of a thousand spans rewrote about a thousand
/// index pages (WAL writes, checkpoints, and reads of pages the small page cache had let go):
/// the writer thread then paced a flood of tool calls (docs/performance.md, run 28). Ids that
/// grow with time are appended at the index's end. The random half keeps them unique and
/// unguessable; a `traceparent` from a caller keeps its own id.
pub(crate) fn new_trace_id() -> u128 {
    let micros = crate::ledger::record::micros(std::time::SystemTime::now()) as u64;
    (u128::from(micros) << 64) | u128::from(new_span_id())
}

/// A fresh, non-zero span id.
pub(crate) fn new_span_id() -> u64 {
    loop {
        let id = rand::random::<u64>();
        if id != 0 {
            return id;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_trace_ids_grow_with_time_and_keep_64_random_bits() {
        let ids: Vec<u128> = (0..1000).map(|_| new_trace_id()).collect();
        // Sorted by their high half, which is the time: what keeps the ledger's index appending.
        assert!(ids.windows(2).all(|w| (w[0] >> 64) <= (w[1] >> 64)));
        let mut low: Vec<u64> = ids.iter().map(|id| *id as u64).collect();
        assert!(low.iter().all(|l| *l != 0));
        low.sort_unstable();
        low.dedup();
        assert_eq!(low.len(), ids.len(), "the random halves repeat");
        let now = crate::ledger::record::micros(std::time::SystemTime::now()) as u64;
        let first = (ids[0] >> 64) as u64;
        assert!(first <= now && now - first < 60_000_000, "{first} vs {now}");
    }

    #[test]
    fn hex_writes_what_fmt_writes() {
        for id in [0u128, 1, 0xabc, u64::MAX.into(), u128::MAX, new_trace_id()] {
            assert_eq!(Hex::<32>::new(id).as_str(), format!("{id:032x}"));
            let low = id as u64;
            assert_eq!(Hex::<16>::new(low.into()).as_str(), format!("{low:016x}"));
        }
    }

    #[test]
    fn parses_and_formats_the_w3c_example() {
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let c = SpanContext::parse(tp).unwrap();
        assert_eq!(c.trace_id, 0x4bf92f3577b34da6a3ce929d0e0e4736);
        assert_eq!(c.span_id, 0x00f067aa0ba902b7);
        assert!(c.remote);
        assert_eq!(c.traceparent(), tp);
    }

    #[test]
    fn refuses_what_the_spec_says_to_ignore() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(SpanContext::parse(bad), None, "{bad}");
        }
        // A later version may append fields.
        assert!(SpanContext::parse(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-ever"
        )
        .is_some());
    }
}
