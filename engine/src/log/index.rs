//! The in-memory index of the active segment: its records' frame offsets in append order, and
//! hash tables from block id to record.
//!
//! Only the active segment is indexed here. Sealed segments are indexed on disk by their
//! `.idx` files (`idx_file.rs`); when the active segment is sealed and its index file is
//! durable, [`Index::restart`] drops its records, so this index never holds more than one
//! segment. A table slot holds a record's ordinal and 32 bits of the id's hash (8 bytes); ids
//! are compared against the frames in the mapped segment, so the index costs about 4 + 8 bytes
//! (plus the tables' spare capacity) per record of the active segment.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::frames;
use super::segment::Segments;
use super::{BlockId, Location};

/// Where a record's frame starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Entry {
    pub(crate) segment: u32,
    pub(crate) offset: u32,
}

impl Entry {
    pub(crate) fn location(self) -> Location {
        Location {
            segment: self.segment,
            offset: self.offset,
        }
    }
}

/// Number of hash tables the index is split into (a power of two). A table that grows moves
/// only its own slots, so one growth stalls appends for 1/[`SHARDS`] of the index, not all of
/// it (one table of 15 M records took seconds).
const SHARDS: usize = 64;

/// A slot of the table: a record's ordinal and 32 bits of its id's hash. Growing a table
/// rehashes from the stored bits; it never reads an id back from the mapped segment.
#[derive(Debug, Clone, Copy)]
struct Slot {
    record: u32,
    hash: u32,
}

impl Slot {
    /// The 64-bit table hash of the stored 32 bits: spread over the whole word, because the
    /// table takes its bucket from the low bits and its tag from the top ones.
    fn table_hash(hash: u32) -> u64 {
        u64::from(hash).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// The table hash of a stored slot, for a table that grows.
    fn rehash(&self) -> u64 {
        Self::table_hash(self.hash)
    }

    /// The table holding ids of hash `hash`.
    fn shard(hash: u32) -> usize {
        (hash >> (u32::BITS - SHARDS.trailing_zeros())) as usize
    }
}

#[derive(Debug)]
pub(crate) struct Index {
    hasher: std::hash::RandomState,
    tables: Box<[HashTable<Slot>]>,
    /// The active segment.
    segment: u32,
    /// Frame offsets of its records in append order (a record's position is its ordinal).
    offsets: Vec<u32>,
    /// Offset one past its last record.
    end: u32,
    /// Records of all sealed segments.
    sealed_records: u64,
}

impl Index {
    /// An empty index of the active segment `segment`, whose data ends at `end`, after
    /// `sealed_records` records in sealed segments.
    pub(crate) fn new(segment: u32, end: u32, sealed_records: u64) -> Self {
        Self {
            hasher: Default::default(),
            tables: (0..SHARDS).map(|_| HashTable::new()).collect(),
            segment,
            offsets: Vec::new(),
            end,
            sealed_records,
        }
    }

    /// Builds the tables over the records of the active segment `segment` at `offsets`
    /// (append order).
    pub(crate) fn build(
        segments: &Segments,
        segment: u32,
        offsets: Vec<u32>,
        end: u32,
        sealed_records: u64,
    ) -> Self {
        let mut index = Self::new(segment, end, sealed_records);
        let per_table = offsets.len() / SHARDS + offsets.len() / (SHARDS * 8) + 1;
        for table in index.tables.iter_mut() {
            table.reserve(per_table, Slot::rehash);
        }
        for (record, &offset) in (0u32..).zip(&offsets) {
            let Some(id) = frames::id_at(segments, Entry { segment, offset }) else {
                continue;
            };
            let hash = index.hash(&id);
            if let Some(table) = index.tables.get_mut(Slot::shard(hash)) {
                table.insert_unique(Slot::table_hash(hash), Slot { record, hash }, Slot::rehash);
            }
        }
        index.offsets = offsets;
        index
    }

    /// The 32 bits of `id`'s keyed hash that the tables use.
    fn hash(&self, id: &BlockId) -> u32 {
        let full = self.hasher.hash_one(id);
        (full >> 32) as u32 ^ full as u32
    }

    /// The active segment's number.
    pub(crate) fn segment(&self) -> u32 {
        self.segment
    }

    /// The position one past the last record.
    pub(crate) fn end(&self) -> Location {
        Location {
            segment: self.segment,
            offset: self.end,
        }
    }

    /// Frame offsets of the active segment's records in append order.
    pub(crate) fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// Records in the whole log.
    pub(crate) fn len(&self) -> u64 {
        self.sealed_records
            .saturating_add(u64::try_from(self.offsets.len()).unwrap_or(u64::MAX))
    }

    /// The active segment's record with this id.
    pub(crate) fn find(&self, segments: &Segments, id: &BlockId) -> Option<Entry> {
        let hash = self.hash(id);
        let entry = |record: u32| {
            Some(Entry {
                segment: self.segment,
                offset: *self.offsets.get(record as usize)?,
            })
        };
        let slot = self
            .tables
            .get(Slot::shard(hash))?
            .find(Slot::table_hash(hash), |s| {
                s.hash == hash
                    && entry(s.record)
                        .and_then(|e| frames::id_at(segments, e))
                        .is_some_and(|found| found == *id)
            })?;
        entry(slot.record)
    }

    /// Appends a record of the active segment whose id is not in the index yet, at `offset`
    /// and ending at `end`.
    pub(crate) fn push(&mut self, id: &BlockId, offset: u32, end: u32) -> bool {
        let Ok(record) = u32::try_from(self.offsets.len()) else {
            return false;
        };
        let hash = self.hash(id);
        let Some(table) = self.tables.get_mut(Slot::shard(hash)) else {
            return false;
        };
        self.offsets.push(offset);
        self.end = end;
        table.insert_unique(Slot::table_hash(hash), Slot { record, hash }, Slot::rehash);
        true
    }

    /// The ordinal of the active segment's record at `offset`, if one starts there.
    pub(crate) fn ordinal(&self, offset: u32) -> Option<u32> {
        let at = self.offsets.binary_search(&offset).ok()?;
        u32::try_from(at).ok()
    }

    /// The ordinal of the first record of the active segment at or after `offset`.
    pub(crate) fn lower_bound(&self, offset: u32) -> u32 {
        let at = self.offsets.partition_point(|&o| o < offset);
        u32::try_from(at).unwrap_or(u32::MAX)
    }

    /// Forgets `records` records of sealed segments (retired).
    pub(crate) fn forget_sealed(&mut self, records: u64) {
        self.sealed_records = self.sealed_records.saturating_sub(records);
    }

    /// The active segment was sealed and its index file is durable: forgets its records and
    /// indexes the new active segment `next`, whose data starts at `end`. Keeps the tables'
    /// memory for the next segment.
    pub(crate) fn restart(&mut self, next: u32, end: u32) {
        self.sealed_records = self.len();
        self.offsets.clear();
        for table in self.tables.iter_mut() {
            table.clear();
        }
        self.segment = next;
        self.end = end;
    }
}
