//! Reading records: lookups by id and location, and iteration in append order.
//!
//! The active segment is looked up in the in-memory [`Index`]; sealed segments, newest first,
//! in their index files, each verified before its first use (`scrub.rs`). Frames of sealed
//! segments are checksummed on every read (the open does not scan them); a damaged one is
//! never handed out.

use std::sync::RwLockReadGuard;

use super::frames::{self, Parts};
use super::idx_format;
use super::*;

impl Log {
    /// The in-memory index of the active segment.
    fn index(&self) -> RwLockReadGuard<'_, Index> {
        self.inner
            .index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The record with this id: the active segment first, then the sealed segments from the
    /// newest to the oldest (from `near` down, then above it, when given), as far as `segs`
    /// holds them.
    fn lookup<'s>(
        &self,
        segs: &'s Segments,
        id: &BlockId,
        near: Option<u32>,
    ) -> Option<Record<'s>> {
        let active = {
            let index = self.index();
            if let Some(e) = index.find(segs, id) {
                let seg = segs.get_arc(e.segment)?;
                let parts = frames::parts_at(seg.bytes(), e.offset)?;
                return Some(Record::new(e.location(), seg, parts));
            }
            // Every segment before this one has its index file installed.
            index.segment()
        };
        let key = idx_format::key_of(id.as_bytes());
        if !self.inner.sealed_keys.may_hold(key) {
            return None;
        }
        let first = self.first_segment();
        let split = near.map_or(active, |n| n.saturating_add(1).clamp(first, active));
        let order = (first..split).rev().chain(split..active);
        for number in order {
            let Some(seg) = segs.get_arc(number) else {
                continue;
            };
            // Verified first if the scrub has not got to it yet; a segment that cannot be
            // indexed serves nothing.
            let Some(sealed) = self.inner.sealed_index(seg) else {
                continue;
            };
            for offset in sealed.offsets_with_key(key) {
                // The index only narrows the search: the id in the frame decides.
                if frames::parts_at(seg.bytes(), offset).is_some_and(|p| p.is(id)) {
                    let location = Location {
                        segment: number,
                        offset,
                    };
                    return self
                        .verified(seg, offset)
                        .map(|p| Record::new(location, seg, p));
                }
            }
        }
        None
    }

    pub(super) fn find(&self, id: &BlockId) -> Option<Entry> {
        let segs = self.inner.segments.load();
        self.lookup(&segs, id, None).map(|r| Entry {
            segment: r.location.segment,
            offset: r.location.offset,
        })
    }

    /// The parts of the frame at `offset` of the sealed segment `seg` if its checksum is
    /// intact; a damaged frame is logged and counted, and never served.
    fn verified<'a>(&self, seg: &'a Segment, offset: u32) -> Option<Parts<'a>> {
        match frames::verified_at(seg.bytes(), offset) {
            Ok(parts) => Some(parts),
            Err(why) => {
                self.inner.corrupt_reads.fetch_add(1, Ordering::Relaxed);
                tracing::error!(
                    file = %seg.path.display(),
                    offset,
                    reason = why,
                    "damaged record in a sealed segment: not served"
                );
                None
            }
        }
    }

    pub(super) fn record_end(&self, e: Entry) -> u64 {
        let end = frames::parts(&self.inner.segments.load(), e).map_or(0, |p| p.end);
        pos(e.segment, u32::try_from(end).unwrap_or(u32::MAX))
    }

    /// A reader over the segments as of now (see [`Reader`]).
    pub fn reader(&self) -> Reader<'_> {
        Reader {
            log: self,
            segs: self.inner.segments.load(),
        }
    }

    /// Whether a record with this id is stored (and, in a sealed segment, intact).
    pub fn contains(&self, id: &BlockId) -> bool {
        self.find(id).is_some()
    }

    /// Where the record with this id is, if stored (and, in a sealed segment, intact).
    pub fn locate(&self, id: &BlockId) -> Option<Location> {
        self.find(id).map(|e| e.location())
    }

    /// The bytes of the record with this id, held beyond any reader (see [`RecordBytes`]).
    pub fn get_bytes(&self, id: &BlockId) -> Option<RecordBytes> {
        self.reader().get(id).map(|r| r.to_bytes())
    }

    /// The ordinal of the record starting at `location` within its segment (its 0-based
    /// position in the segment's append order), or `None` if no record starts there.
    ///
    /// Ordinals of a segment run from 0 to its record count - 1, below
    /// [`Log::max_records_per_segment`].
    pub fn ordinal(&self, location: Location) -> Option<u32> {
        self.ordinal_in(&self.inner.segments.load(), location)
    }

    /// [`Log::ordinal`] as far as `segs` holds the segments.
    fn ordinal_in(&self, segs: &Segments, location: Location) -> Option<u32> {
        if location.segment < self.first_segment() {
            return None;
        }
        {
            let index = self.index();
            match location.segment.cmp(&index.segment()) {
                std::cmp::Ordering::Equal => return index.ordinal(location.offset),
                std::cmp::Ordering::Greater => return None,
                std::cmp::Ordering::Less => {}
            }
        }
        self.inner
            .sealed_index(segs.get(location.segment)?)?
            .ordinal_of(location.offset)
    }

    /// The position one past the last appended record: where the next append goes unless it
    /// does not fit the active segment. [`Reader::iter_from`] at this position yields nothing
    /// (as of this call).
    pub fn end(&self) -> Location {
        self.index().end()
    }

    /// The record at `e`, known to start a frame; verified if its segment is sealed.
    fn record<'s>(&self, segs: &'s Segments, e: Entry) -> Option<Record<'s>> {
        if e.segment < self.first_segment() {
            return None;
        }
        let seg = segs.get_arc(e.segment)?;
        let parts = if seg.is_sealed() {
            self.verified(seg, e.offset)?
        } else {
            frames::parts_at(seg.bytes(), e.offset)?
        };
        Some(Record::new(e.location(), seg, parts))
    }

    /// The verified index of sealed segment `n` (see [`Inner::sealed_index`]).
    fn sealed<'s>(&self, segs: &'s Segments, n: u32) -> Option<&'s idx_file::SealedIndex> {
        self.inner.sealed_index(segs.get(n)?)
    }

    /// Appends to `buf` the entries of segment `segment` with ordinals `from..` (at most
    /// `max`); returns how many.
    fn entries_from(
        &self,
        segs: &Segments,
        segment: u32,
        from: u32,
        max: usize,
        buf: &mut VecDeque<Entry>,
    ) -> usize {
        let before = buf.len();
        let entry = |offset| Entry { segment, offset };
        if let Some(sealed) = self.sealed(segs, segment) {
            buf.extend(sealed.offsets(from, max).map(entry));
            return buf.len() - before;
        }
        {
            let index = self.index();
            if index.segment() == segment {
                let offsets = index.offsets().get(from as usize..).unwrap_or_default();
                buf.extend(offsets.iter().take(max).copied().map(entry));
                return buf.len() - before;
            }
        }
        // Sealed since the check above: its index file is installed now.
        if let Some(sealed) = self.sealed(segs, segment) {
            buf.extend(sealed.offsets(from, max).map(entry));
        }
        buf.len() - before
    }

    /// Number of records stored.
    pub fn len(&self) -> u64 {
        self.index().len()
    }

    /// Whether no record is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A view of the log that keeps the segments it sees mapped while it lives: records read
/// through it borrow it, so a segment that pruning retires meanwhile stays readable for them
/// (though no longer served) and is unmapped when the last reader holding it is dropped.
/// Take one per request or task, not for good: it does not see segments started after it
/// was made, and it holds retired segments' memory and disk space while it lives.
pub struct Reader<'a> {
    log: &'a Log,
    segs: Arc<Segments>,
}

impl fmt::Debug for Reader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader").finish_non_exhaustive()
    }
}

impl Reader<'_> {
    /// The record with this id.
    pub fn get(&self, id: &BlockId) -> Option<Record<'_>> {
        self.log.lookup(&self.segs, id, None)
    }

    /// [`Reader::get`] for a record expected in or before segment `near` (a parent near its
    /// child): the sealed segments are searched from `near` down first. Same answer, found
    /// in a few probes instead of one per newer segment.
    pub fn get_near(&self, id: &BlockId, near: u32) -> Option<Record<'_>> {
        self.log.lookup(&self.segs, id, Some(near))
    }

    /// The record at `location`, or `None` if no record starts there.
    pub fn read(&self, location: Location) -> Option<Record<'_>> {
        self.log.ordinal_in(&self.segs, location)?;
        self.log.record(
            &self.segs,
            Entry {
                segment: location.segment,
                offset: location.offset,
            },
        )
    }

    /// Where an iteration through this reader ends: after the active segment's records as of
    /// now, or, when a roll came after the reader was made, after the last segment it holds
    /// (sealed by then: its index file is installed before the next segment is).
    fn iter_end(&self, index: &Index) -> (u32, u32) {
        match self.segs.last_number() {
            Some(last) if last < index.segment() => {
                let count = self
                    .segs
                    .get(last)
                    .and_then(Segment::installed_index)
                    .map_or(0, idx_file::SealedIndex::count);
                (last, count)
            }
            _ => (index.segment(), index_len(index)),
        }
    }

    /// All records in append order, as of this call (later appends are not visited).
    pub fn iter(&self) -> Iter<'_> {
        let index = self.log.index();
        Iter {
            reader: self,
            segment: self.log.first_segment(),
            ordinal: 0,
            end: self.iter_end(&index),
            remaining: index.len(),
            buf: VecDeque::new(),
        }
    }

    /// The records at or after `from` in append order, as of this call: from the record
    /// starting at `from`, or the first one after it. `from` may be [`Log::end`] (nothing).
    pub fn iter_from(&self, from: Location) -> Iter<'_> {
        let log = self.log;
        let first = log.first_segment();
        let from = if from.segment < first {
            Location {
                segment: first,
                offset: 0,
            }
        } else {
            from
        };
        let index = log.index();
        let end = self.iter_end(&index);
        let total = index.len();
        let start = if from.segment > end.0 {
            end
        } else if from.segment == index.segment() {
            (from.segment, index.lower_bound(from.offset))
        } else {
            drop(index);
            let ordinal = log
                .sealed(&self.segs, from.segment)
                .map_or(0, |s| s.lower_bound(from.offset));
            (from.segment, ordinal)
        };
        // Header counts (checked against the seals at open): no index needs verifying here.
        let before: u64 = (first..start.0)
            .filter_map(|n| self.segs.get(n)?.installed_index())
            .map(|s| u64::from(s.count()))
            .sum();
        Iter {
            reader: self,
            segment: start.0,
            ordinal: start.1,
            end,
            remaining: total
                .saturating_sub(before)
                .saturating_sub(u64::from(start.1)),
            buf: VecDeque::new(),
        }
    }
}

/// Records of the active segment.
fn index_len(index: &Index) -> u32 {
    u32::try_from(index.offsets().len()).unwrap_or(u32::MAX)
}

/// Iterator over the records of a [`Log`] in append order; see [`Reader::iter`] and
/// [`Reader::iter_from`]. A record of a sealed segment whose checksum fails is skipped (and
/// logged, like [`Reader::get`] does).
pub struct Iter<'a> {
    reader: &'a Reader<'a>,
    /// The segment and ordinal of the next record to fetch into `buf`.
    segment: u32,
    ordinal: u32,
    /// The active segment and its record count when the iterator was made.
    end: (u32, u32),
    /// Records not yet returned (including `buf`), at most.
    remaining: u64,
    buf: VecDeque<Entry>,
}

impl fmt::Debug for Iter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter")
            .field("segment", &self.segment)
            .field("ordinal", &self.ordinal)
            .field("end", &self.end)
            .finish()
    }
}

impl Iter<'_> {
    /// Fetches the next batch of entries (1024 at most, so the index lock is taken once per
    /// batch); false at the end.
    fn refill(&mut self) -> bool {
        while self.buf.is_empty() {
            if (self.segment, self.ordinal) >= self.end {
                return false;
            }
            let max = if self.segment == self.end.0 {
                self.end.1.saturating_sub(self.ordinal) as usize
            } else {
                usize::MAX
            };
            let reader = self.reader;
            let got = reader.log.entries_from(
                &reader.segs,
                self.segment,
                self.ordinal,
                max.min(1024),
                &mut self.buf,
            );
            if got == 0 {
                if self.segment == self.end.0 {
                    return false;
                }
                self.segment = self.segment.saturating_add(1);
                self.ordinal = 0;
            } else {
                self.ordinal = self
                    .ordinal
                    .saturating_add(u32::try_from(got).unwrap_or(u32::MAX));
            }
        }
        true
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = Record<'a>;

    fn next(&mut self) -> Option<Record<'a>> {
        loop {
            if !self.refill() {
                return None;
            }
            let e = self.buf.pop_front()?;
            self.remaining = self.remaining.saturating_sub(1);
            // A damaged record of a sealed segment is skipped (`record` logged it).
            if let Some(record) = self.reader.log.record(&self.reader.segs, e) {
                return Some(record);
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Damaged records are skipped, so the count is an upper bound only.
        (0, usize::try_from(self.remaining).ok())
    }
}
