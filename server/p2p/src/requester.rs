//! Requests for missing blocks and milestones (`docs/peering.md` §4.4): one queue, each
//! request sent to one eligible peer at a time, re-sent to the next one after 2.5 s doubling
//! up to 20 s. Requests inside a milestone's cone live until that milestone is confirmed;
//! others expire after 15 s. Bounded: beyond [`CAPACITY`] only cone requests are taken.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use ledger_engine::BlockId;

use parking_lot::Mutex;

/// Most requests held at once.
pub const CAPACITY: usize = 100_000;
/// First retry delay.
const RETRY_FIRST: Duration = Duration::from_millis(2_500);
/// Longest retry delay.
const RETRY_MAX: Duration = Duration::from_secs(20);
/// Lifetime of a request outside any milestone cone.
const EXPIRY: Duration = Duration::from_secs(15);

/// What is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Want {
    /// A block by id.
    Block(BlockId),
    /// A milestone by index.
    Milestone(u32),
}

#[derive(Debug)]
struct Entry {
    // The milestone whose cone needs it (0: none).
    index: u32,
    created: Instant,
    due: Instant,
    attempts: u32,
}

/// A request due to be sent now, with the attempt number (to rotate peers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// What to ask for.
    pub want: Want,
    /// The cone's milestone index (0: none), to pick a peer that has it.
    pub index: u32,
    /// 0 for the first send, then 1, 2, …
    pub attempt: u32,
}

/// The request queue.
#[derive(Debug, Default)]
pub struct Requester {
    entries: Mutex<HashMap<Want, Entry>>,
}

impl Requester {
    /// Queues `want` for the cone of milestone `index` (0: outside any cone), due at once.
    /// Returns false when it was queued already or the queue is full.
    pub fn request(&self, want: Want, index: u32, now: Instant) -> bool {
        let mut entries = self.entries.lock();
        if let Some(e) = entries.get_mut(&want) {
            // A later cone request keeps a request alive that would expire.
            if e.index == 0 {
                e.index = index;
            }
            return false;
        }
        if entries.len() >= CAPACITY && index == 0 {
            return false;
        }
        entries.insert(
            want,
            Entry {
                index,
                created: now,
                due: now,
                attempts: 0,
            },
        );
        true
    }

    /// Records that `want` was just sent (outside the sync loop): its next send is a retry.
    pub fn sent_now(&self, want: &Want, now: Instant) {
        if let Some(e) = self.entries.lock().get_mut(want) {
            e.attempts = e.attempts.max(1);
            e.due = now + RETRY_FIRST;
        }
    }

    /// Whether `want` is queued; its cone index if so.
    pub fn pending(&self, want: &Want) -> Option<u32> {
        self.entries.lock().get(want).map(|e| e.index)
    }

    /// Drops `want` (it arrived); its cone index if it was queued.
    pub fn fulfil(&self, want: &Want) -> Option<u32> {
        self.entries.lock().remove(want).map(|e| e.index)
    }

    /// Drops every request of a confirmed cone (index ≤ `confirmed`), expired requests
    /// outside any cone, and those `have` says are satisfied.
    pub fn purge(&self, confirmed: u32, now: Instant, have: impl Fn(&Want) -> bool) {
        self.entries.lock().retain(|want, e| {
            let confirmed_cone = e.index != 0 && e.index <= confirmed;
            let expired = e.index == 0 && now.duration_since(e.created) >= EXPIRY;
            let milestone_done = matches!(want, Want::Milestone(i) if *i <= confirmed);
            !(confirmed_cone || expired || milestone_done || have(want))
        });
    }

    /// The requests due now, oldest cone first (at most `limit`); each is rescheduled.
    pub fn due(&self, now: Instant, limit: usize) -> Vec<Due> {
        let mut entries = self.entries.lock();
        let mut due: Vec<(&Want, &mut Entry)> =
            entries.iter_mut().filter(|(_, e)| e.due <= now).collect();
        due.sort_by_key(|(_, e)| if e.index == 0 { u32::MAX } else { e.index });
        due.truncate(limit);
        due.into_iter()
            .map(|(want, e)| {
                let attempt = e.attempts;
                let delay = RETRY_FIRST
                    .saturating_mul(1 << e.attempts.min(8))
                    .min(RETRY_MAX);
                e.attempts = e.attempts.saturating_add(1);
                e.due = now + delay;
                Due {
                    want: *want,
                    index: e.index,
                    attempt,
                }
            })
            .collect()
    }

    /// Requests held.
    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    /// Whether no request is held.
    pub fn is_empty(&self) -> bool {
        self.entries.lock().is_empty()
    }
}

/// Milestones ahead of the confirmed index whose cones warp sync fetches: `wide` while the
/// tangle holds fewer than `budget` unreferenced blocks, else `narrow` (the cones the sync
/// loop's walk covers, so confirmations go on and free the budget). A milestone's blocks stay
/// in memory until it is confirmed: with 1 000 blocks a milestone, 150 milestones of cones
/// held at once are 150 000 blocks (about 150 MB of tangle rows), whatever the gap.
pub fn warp_span(unreferenced: usize, budget: usize, wide: u32, narrow: u32) -> u32 {
    if unreferenced < budget {
        wide
    } else {
        narrow.min(wide)
    }
}

/// The milestone indexes warp sync asks for: those in (confirmed, min(confirmed + window,
/// target)] that `known` does not have.
pub fn warp_window(
    confirmed: u32,
    target: u32,
    window: u32,
    known: impl Fn(u32) -> bool,
) -> Vec<u32> {
    let Some(first) = confirmed.checked_add(1) else {
        return Vec::new();
    };
    let end = target.min(confirmed.saturating_add(window));
    (first..=end).filter(|i| !known(*i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_up_to_the_cap_and_rotate() {
        let r = Requester::default();
        let t0 = Instant::now();
        let want = Want::Block([1; 32]);
        assert!(r.request(want, 5, t0));
        assert!(!r.request(want, 5, t0), "queued once");
        let first = r.due(t0, 10);
        assert_eq!(
            first,
            vec![Due {
                want,
                index: 5,
                attempt: 0
            }]
        );
        assert!(r.due(t0 + Duration::from_millis(2_400), 10).is_empty());
        let second = r.due(t0 + Duration::from_millis(2_500), 10);
        assert_eq!(second[0].attempt, 1);
        // 2.5 s → 5 s → 10 s → 20 s → 20 s.
        let mut at = t0 + Duration::from_millis(2_500);
        for delay in [5_000u64, 10_000, 20_000, 20_000] {
            assert!(r.due(at + Duration::from_millis(delay - 1), 10).is_empty());
            at += Duration::from_millis(delay);
            assert_eq!(r.due(at, 10).len(), 1);
        }
    }

    #[test]
    fn cone_requests_live_until_confirmed_others_expire() {
        let r = Requester::default();
        let t0 = Instant::now();
        r.request(Want::Block([1; 32]), 0, t0);
        r.request(Want::Block([2; 32]), 7, t0);
        r.request(Want::Milestone(8), 8, t0);
        r.purge(6, t0 + Duration::from_secs(16), |_| false);
        assert_eq!(r.pending(&Want::Block([1; 32])), None, "expired");
        assert_eq!(r.pending(&Want::Block([2; 32])), Some(7));
        r.purge(7, t0 + Duration::from_secs(16), |_| false);
        assert_eq!(r.pending(&Want::Block([2; 32])), None, "cone confirmed");
        assert_eq!(r.pending(&Want::Milestone(8)), Some(8));
        r.purge(7, t0, |w| *w == Want::Milestone(8));
        assert_eq!(r.len(), 0, "satisfied");
    }

    #[test]
    fn oldest_cone_first_and_a_full_queue_takes_only_cone_requests() {
        let r = Requester::default();
        let t0 = Instant::now();
        r.request(Want::Block([9; 32]), 0, t0);
        r.request(Want::Block([3; 32]), 30, t0);
        r.request(Want::Block([2; 32]), 20, t0);
        let order: Vec<u32> = r.due(t0, 10).iter().map(|d| d.index).collect();
        assert_eq!(order, vec![20, 30, 0]);
        let r = Requester::default();
        for i in 0..CAPACITY as u32 {
            let mut id = [0; 32];
            id[..4].copy_from_slice(&i.to_le_bytes());
            r.request(Want::Block(id), 1, t0);
        }
        assert!(!r.request(Want::Block([0xff; 32]), 0, t0));
        assert!(r.request(Want::Block([0xfe; 32]), 2, t0));
    }

    #[test]
    fn warp_span_narrows_once_the_unreferenced_blocks_reach_the_budget() {
        assert_eq!(warp_span(0, 50_000, 150, 3), 150);
        assert_eq!(warp_span(49_999, 50_000, 150, 3), 150);
        assert_eq!(warp_span(50_000, 50_000, 150, 3), 3);
        assert_eq!(warp_span(usize::MAX, 50_000, 150, 3), 3);
        // Never wider when narrowed.
        assert_eq!(warp_span(60_000, 50_000, 2, 3), 2);
    }

    #[test]
    fn warp_window_asks_for_the_missing_indexes_within_150() {
        assert_eq!(warp_window(10, 14, 150, |i| i == 12), vec![11, 13, 14]);
        assert_eq!(warp_window(0, 1000, 150, |_| false).len(), 150);
        assert_eq!(warp_window(0, 1000, 150, |_| false)[149], 150);
        assert!(warp_window(5, 5, 150, |_| false).is_empty());
        assert!(warp_window(u32::MAX, u32::MAX, 150, |_| false).is_empty());
    }
}
