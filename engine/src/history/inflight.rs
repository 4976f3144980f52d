//! Blocks between their log append and their tangle insert.
//!
//! A checkpoint names a log position from which a restart loads every record again; each
//! record before it must already be in the checkpoint's state (referenced, or listed as
//! unreferenced). Appends and inserts run on many threads, so a block can be in the log but
//! not yet in the tangle when a checkpoint is taken. Each append registers, before it starts,
//! a lower bound of the position it will get (the end of what was appended before it), and
//! leaves once its block is in the tangle; [`InFlight::safe_tail`] is never past a registered
//! bound nor past what was appended, so no record before it is missing from the state.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

/// The registry of appends on their way to the tangle.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    // Registered lower bounds (`Location::to_u64`) and how many appends hold each.
    bounds: Mutex<BTreeMap<u64, u32>>,
    // A lower bound of the log's end: raised after each append, past its record's start.
    appended: AtomicU64,
}

/// One registered append; leaves the registry when dropped.
#[derive(Debug)]
pub(crate) struct Ticket<'a> {
    registry: &'a InFlight,
    bound: u64,
}

impl InFlight {
    /// Registers an append that is about to start.
    pub(crate) fn begin(&self) -> Ticket<'_> {
        let mut bounds = self.bounds.lock();
        let bound = self.appended.load(Ordering::SeqCst);
        *bounds.entry(bound).or_insert(0) += 1;
        Ticket {
            registry: self,
            bound,
        }
    }

    /// Notes that a record was appended at `record` (its `Location::to_u64`).
    pub(crate) fn appended(&self, record: u64) {
        self.appended
            .fetch_max(record.saturating_add(1), Ordering::SeqCst);
    }

    /// A log position such that every record before it reached the tangle.
    /// Every record before log position `next` is in the tangle (an open loaded them).
    pub(crate) fn loaded_before(&self, next: u64) {
        self.appended.fetch_max(next, Ordering::SeqCst);
    }

    pub(crate) fn safe_tail(&self) -> u64 {
        let bounds = self.bounds.lock();
        let appended = self.appended.load(Ordering::SeqCst);
        bounds
            .keys()
            .next()
            .map_or(appended, |b| (*b).min(appended))
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let mut bounds = self.registry.bounds.lock();
        if let Some(n) = bounds.get_mut(&self.bound) {
            *n -= 1;
            if *n == 0 {
                bounds.remove(&self.bound);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_safe_tail_waits_for_the_oldest_append() {
        let r = InFlight::default();
        r.appended(100);
        let slow = r.begin();
        r.appended(200);
        {
            let fast = r.begin();
            r.appended(300);
            assert_eq!(r.safe_tail(), 101);
            drop(fast);
        }
        assert_eq!(r.safe_tail(), 101);
        drop(slow);
        assert_eq!(r.safe_tail(), 301);
    }
}
