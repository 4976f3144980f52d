//! One Bloom filter over the keys of every sealed segment, so that looking up an id the log
//! does not hold (the duplicate check of every new block) costs one probe, not one per sealed
//! segment: without it that check grew with the history (92 µs with 2 048 sealed segments,
//! BENCHMARKS.md session 15).
//!
//! Built from the index files once they are verified (by the scrub after the open, or at the
//! open when nothing is left to verify), then each roll adds the segment it seals. It never
//! misses a stored key; about 1 % of absent keys pass while it holds no more than its
//! capacity, after which the next roll builds it again with twice the room. Until it is
//! built, and for every key it passes, lookups search each segment's index file.
//!
//! Its bits live in an unnamed file in the log directory, mapped (`key_filter.rs`): they grow
//! with the history kept, so they are page cache, not heap. A filter that cannot be created
//! (a full disk) is not installed: lookups then search the index files, and the next roll
//! tries again.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::RwLock;

use super::idx_file::SealedIndex;
use super::key_filter::KeyFilter;
use super::*;

/// The least room a filter is built with (1.25 MB of file).
const MIN_CAPACITY: usize = 1 << 20;

/// The filter and how full it is.
#[derive(Debug)]
struct Covering {
    filter: KeyFilter,
    capacity: usize,
    keys: AtomicUsize,
}

impl Covering {
    /// An empty filter with room for twice `keys`, its file in `dir`.
    fn with_room_for(dir: &Path, keys: usize) -> Result<Self, LogError> {
        let capacity = keys.saturating_mul(2).max(MIN_CAPACITY);
        let filter = KeyFilter::create_in(dir, capacity)
            .map_err(|e| LogError::io("create the key filter's file in", dir, e))?;
        Ok(Self {
            filter,
            capacity,
            keys: AtomicUsize::new(0),
        })
    }

    fn add(&self, index: &SealedIndex) {
        let mut n = 0;
        for key in index.keys() {
            self.filter.insert(key);
            n += 1;
        }
        self.keys.fetch_add(n, Ordering::AcqRel);
    }

    fn is_full(&self) -> bool {
        self.keys.load(Ordering::Acquire) > self.capacity
    }
}

/// The filter over the sealed segments' keys, once built.
#[derive(Debug, Default)]
pub(super) struct SealedKeys {
    covering: RwLock<Option<Covering>>,
    /// The last build failed (its file could not be made): the next roll tries again.
    retry: AtomicBool,
    /// Builds still to fail as if the filter's file could not be made (tests).
    #[cfg(test)]
    fail_next: AtomicUsize,
}

impl SealedKeys {
    /// An empty filter with room for twice `keys`, its file in `dir` (tests can make it fail
    /// as when the disk is full).
    fn new_covering(&self, dir: &Path, keys: usize) -> Result<Covering, LogError> {
        #[cfg(test)]
        {
            let take = |n: usize| n.checked_sub(1);
            if self
                .fail_next
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, take)
                .is_ok()
            {
                let injected = std::io::Error::other("failure injected by a test");
                return Err(LogError::io(
                    "create the key filter's file in",
                    dir,
                    injected,
                ));
            }
        }
        Covering::with_room_for(dir, keys)
    }

    /// False when no sealed segment holds a record whose key is `key` (sure); true when one
    /// may, or when the filter is not built yet.
    pub(super) fn may_hold(&self, key: u64) -> bool {
        let covering = self.covering.read().unwrap_or_else(PoisonError::into_inner);
        covering.as_ref().is_none_or(|c| c.filter.may_contain(key))
    }
}

impl Inner {
    /// Builds the filter over the sealed segments below the active one and installs it.
    /// The keys are read without the writer lock; the segments sealed meanwhile are added
    /// under it, so no roll is missed.
    pub(super) fn build_sealed_keys(&self) {
        let started = std::time::Instant::now();
        let upto = self.active_segment();
        let Some(covering) = self.covering_of(upto) else {
            return;
        };
        let w = lock(&self.writer);
        let segs = self.segments.load();
        for index in self.sealed_indexes(&segs, upto, w.segment) {
            covering.add(index);
        }
        self.install_sealed_keys(covering, started, "built");
        drop(w);
    }

    /// A roll sealed `seg` (the writer lock held): its keys join the filter; a filter past
    /// its capacity is built again, larger, all at once (a stall of this roll once each time
    /// the keys double).
    pub(super) fn seal_keys(&self, seg: &Segment) {
        let full = {
            let covering = self
                .sealed_keys
                .covering
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            let Some(covering) = covering.as_ref() else {
                drop(covering);
                if self.sealed_keys.retry.load(Ordering::Acquire) {
                    let started = std::time::Instant::now();
                    if let Some(covering) = self.covering_of(seg.number + 1) {
                        self.install_sealed_keys(covering, started, "built");
                    }
                }
                return;
            };
            if let Some(index) = self.sealed_index(seg) {
                covering.add(index);
            }
            covering.is_full()
        };
        if full {
            let started = std::time::Instant::now();
            if let Some(covering) = self.covering_of(seg.number + 1) {
                self.install_sealed_keys(covering, started, "rebuilt with more room");
            }
        }
    }

    /// The verified indexes of the sealed segments `from..to` of `segs`.
    fn sealed_indexes<'s>(
        &'s self,
        segs: &'s Segments,
        from: u32,
        to: u32,
    ) -> impl Iterator<Item = &'s SealedIndex> {
        (from..to).filter_map(|n| self.sealed_index(segs.get(n)?))
    }

    /// A filter over the keys of the kept segments below `upto`, with room for twice as many;
    /// `None` when the log is being dropped meanwhile or the filter's file cannot be made
    /// (said in the log; lookups search the index files meanwhile).
    fn covering_of(&self, upto: u32) -> Option<Covering> {
        let first = self.first.load(Ordering::Acquire);
        let segs = self.segments.load();
        let keys = self
            .sealed_indexes(&segs, first, upto)
            .map(|i| i.count() as usize)
            .sum();
        let made = self.sealed_keys.new_covering(&self.dir, keys);
        let covering = match made {
            Ok(covering) => covering,
            Err(e) => {
                self.sealed_keys.retry.store(true, Ordering::Release);
                tracing::warn!(
                    error = %e,
                    "no filter over the sealed segments' keys: looking up a new id searches \
                     every sealed segment's index until a roll can build it"
                );
                return None;
            }
        };
        for index in self.sealed_indexes(&segs, first, upto) {
            if self.scrub_stop.load(Ordering::Acquire) {
                return None;
            }
            covering.add(index);
        }
        Some(covering)
    }

    /// Puts `covering` in place of the filter (the writer lock held) and says so.
    fn install_sealed_keys(&self, covering: Covering, started: std::time::Instant, how: &str) {
        self.sealed_keys.retry.store(false, Ordering::Release);
        tracing::info!(
            keys = covering.keys.load(Ordering::Acquire),
            capacity = covering.capacity,
            file_bytes = covering.filter.len(),
            ms = started.elapsed().as_millis(),
            "filter over the sealed segments' keys {how}"
        );
        *self
            .sealed_keys
            .covering
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(covering);
    }

    /// The segment appends go to.
    fn active_segment(&self) -> u32 {
        self.index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .segment()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::super::tests::{block, contents, v2, FAST};
    use super::*;

    const SMALL: LogConfig = FAST.with_segment_size(4096);

    fn built(log: &Log) -> bool {
        log.inner.sealed_keys.covering.read().unwrap().is_some()
    }

    fn absent_passed(log: &Log) -> usize {
        (0..10_000u64)
            .map(|i| idx_format::key_of(&ledger_codec::hash::blake2b256(&i.to_le_bytes())))
            .filter(|k| log.inner.sealed_keys.may_hold(*k))
            .count()
    }

    fn assert_all_found(log: &Log, n: u64) {
        for i in 0..n {
            assert!(log.contains(&v2(&block(i))), "block {i}");
        }
    }

    #[test]
    fn the_filter_never_hides_a_stored_block_through_rolls_a_rebuild_and_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::open(dir.path(), SMALL).unwrap();
        assert!(
            built(&log),
            "an empty log builds its (empty) filter at open"
        );
        for i in 0..300 {
            log.append_v2(&block(i)).unwrap();
        }
        assert!(log.active_segment() >= 5);
        assert_all_found(&log, 300);
        assert!(
            absent_passed(&log) < 500,
            "rolls add their keys, absent ones stay out"
        );

        // Built again as when full: the same answers.
        {
            let w = lock(&log.inner.writer);
            let covering = log.inner.covering_of(w.segment).unwrap();
            log.inner
                .install_sealed_keys(covering, Instant::now(), "rebuilt");
        }
        assert_all_found(&log, 300);
        assert!(absent_passed(&log) < 500);
        let before = contents(&log);
        drop(log);

        // Reopened: the scrub verifies the index files, then builds the filter.
        let log = Log::open(dir.path(), SMALL).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !built(&log) {
            assert!(
                Instant::now() < deadline,
                "the filter is built after the scrub"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(contents(&log), before);
        assert_all_found(&log, 300);
        assert!(absent_passed(&log) < 500);
        for i in 300..400 {
            log.append_v2(&block(i)).unwrap();
        }
        assert_all_found(&log, 400);
    }

    #[test]
    fn a_filter_whose_file_cannot_be_made_leaves_lookups_to_the_index_files_until_a_roll_builds_it()
    {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::open(dir.path(), SMALL).unwrap();
        for i in 0..200 {
            log.append_v2(&block(i)).unwrap();
        }
        // A build that fails (as when the disk is full): nothing is installed.
        *log.inner.sealed_keys.covering.write().unwrap() = None;
        log.inner.sealed_keys.fail_next.store(1, Ordering::Release);
        log.inner.build_sealed_keys();
        assert!(!built(&log));
        assert!(log.inner.sealed_keys.retry.load(Ordering::Acquire));
        // Every stored block is still found, and every absent key is searched for.
        assert_all_found(&log, 200);
        assert_eq!(absent_passed(&log), 10_000);
        // The next roll builds it.
        let segment = log.active_segment();
        let mut i = 200;
        while log.active_segment() == segment {
            log.append_v2(&block(i)).unwrap();
            i += 1;
        }
        assert!(built(&log), "built at the roll after the failure");
        assert!(!log.inner.sealed_keys.retry.load(Ordering::Acquire));
        assert_all_found(&log, i);
        assert!(absent_passed(&log) < 500);
    }
}
