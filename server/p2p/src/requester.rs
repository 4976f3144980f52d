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

/// How many milestones ahead of the confirmed index warp sync fetches cones for. A
/// milestone's blocks stay in memory until it is confirmed (about 1 KB each): with 1 000
/// blocks a milestone, 150 milestones of cones fetched side by side are 150 000 blocks, and a
/// node cannot know a network's blocks per milestone before it has fetched some. So the span
/// starts at `narrow` and doubles (up to `wide`) at each confirmation while the tangle holds
/// less than half of `budget` unreferenced blocks; while it holds `budget` or more, no cone
/// of a further milestone is started (the last milestone in the window stays where it is),
/// but the cones started go on: theirs are the next blocks to be confirmed and freed, and a
/// cone cut halfway would hold its blocks until the cone walk came back for it. The next
/// `narrow` milestones are always in the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpSpan {
    span: u32,
    // The highest milestone index whose cone is fetched.
    last: u32,
    // The confirmed index of the last round (none before the first).
    confirmed: Option<u32>,
    wide: u32,
    narrow: u32,
    budget: usize,
}

impl WarpSpan {
    /// A span of `narrow` milestones, growing to at most `wide`, held at `budget` unreferenced
    /// blocks.
    pub fn new(wide: u32, narrow: u32, budget: usize) -> Self {
        let narrow = narrow.clamp(1, wide.max(1));
        Self {
            span: narrow,
            last: 0,
            confirmed: None,
            wide: wide.max(narrow),
            narrow,
            budget,
        }
    }

    /// The span for this round of the sync loop (the window is the milestones after
    /// `confirmed`, up to `confirmed` + span), given the confirmed index and the tangle's
    /// unreferenced blocks now.
    pub fn next(&mut self, confirmed: u32, unreferenced: usize) -> u32 {
        let moved = self.confirmed.is_some_and(|before| confirmed > before);
        let confirmed = self.confirmed.map_or(confirmed, |c| c.max(confirmed));
        self.confirmed = Some(confirmed);
        if unreferenced < self.budget {
            if moved && unreferenced < self.budget / 2 {
                self.span = self.span.saturating_mul(2).min(self.wide);
            }
            self.last = self.last.max(confirmed.saturating_add(self.span));
        }
        self.last = self.last.max(confirmed.saturating_add(self.narrow));
        self.span = (self.last - confirmed).clamp(self.narrow, self.wide);
        self.span
    }
}

/// The last milestone index of warp sync's window: `window` milestones after `confirmed`. Cones
/// of milestones up to it are fetched as their blocks arrive; those beyond wait for the window.
pub fn window_end(confirmed: u32, window: u32) -> u32 {
    confirmed.saturating_add(window)
}

/// The milestone indexes warp sync asks for: those in (confirmed, min([`window_end`], target)]
/// that `known` does not have.
pub fn warp_window(
    confirmed: u32,
    target: u32,
    window: u32,
    known: impl Fn(u32) -> bool,
) -> Vec<u32> {
    let Some(first) = confirmed.checked_add(1) else {
        return Vec::new();
    };
    let end = target.min(window_end(confirmed, window));
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
    fn warp_span_starts_narrow_widens_on_confirmations_and_holds_at_the_budget() {
        let mut w = WarpSpan::new(150, 3, 50_000);
        // No confirmation yet: the next 3 only, however empty the tangle.
        assert_eq!(w.next(0, 0), 3);
        assert_eq!(w.next(0, 0), 3);
        // Each confirmation doubles it while under half the budget, up to 150.
        let spans: Vec<u32> = (1..=8).map(|c| w.next(c, 1_000)).collect();
        assert_eq!(spans, [6, 12, 24, 48, 96, 150, 150, 150]);
        // The index a node starts at is not a confirmation.
        assert_eq!(WarpSpan::new(150, 3, 50_000).next(46, 0), 3);

        // At the budget the window's last milestone stays (no new cone starts) while
        // confirmations come, down to the next 3; under half the budget it widens again.
        let mut w = WarpSpan::new(150, 3, 100);
        assert_eq!(w.next(10, 0), 3); // window 11..=13
        assert_eq!(w.next(11, 0), 6); // ..=17
        assert_eq!(w.next(12, 100), 5, "held at ..=17");
        assert_eq!(w.next(15, 150), 3, "..=18: the next 3 stay in");
        assert_eq!(
            w.next(16, 60),
            3,
            "under the budget, not under half: slides"
        );
        assert_eq!(w.next(17, 10), 6);
        // The window never shrinks from its end: a cone once started is fetched on.
        let mut last = 0;
        let mut w = WarpSpan::new(150, 3, 100);
        for (confirmed, unreferenced) in [(1, 0), (2, 0), (3, 0), (4, 500), (4, 0), (9, 200)] {
            let end = window_end(confirmed, w.next(confirmed, unreferenced));
            assert!(end >= last, "{end} < {last}");
            last = end;
        }
        // A budget of 0 keeps it at the next 3.
        let mut tight = WarpSpan::new(150, 3, 0);
        assert_eq!((1..=5).map(|c| tight.next(c, 0)).max(), Some(3));
        // A narrow span wider than the wide one is the wide one.
        assert_eq!(WarpSpan::new(2, 3, 10).next(1, 0), 2);
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
