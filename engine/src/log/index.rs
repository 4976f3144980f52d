//! The in-memory index: records in append order, and hash tables from block id to record.
//!
//! A table slot holds a record number and 32 bits of the id's hash (8 bytes); ids are compared
//! against the frames in the mapped segments, so the index costs about 20 bytes of memory per
//! record.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::format::{self, FRAME_KIND_OFFSET, FRAME_LEN_OFFSET};
use super::segment::SegmentTable;
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

/// The parts of a stored frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parts<'a> {
    pub(crate) kind: u8,
    pub(crate) id: &'a [u8],
    pub(crate) body: &'a [u8],
    /// Offset one past the frame inside its segment.
    pub(crate) end: usize,
}

/// Splits the frame at `e` (already verified when it was written or scanned).
pub(crate) fn parts(segments: &SegmentTable, e: Entry) -> Option<Parts<'_>> {
    let bytes = segments.get(e.segment)?.bytes();
    let at = usize::try_from(e.offset).ok()?;
    let kind = *bytes.get(at.checked_add(FRAME_KIND_OFFSET)?)?;
    let len = usize::try_from(format::u32_at(bytes, at.checked_add(FRAME_LEN_OFFSET)?)?).ok()?;
    let id_start = at.checked_add(format::FRAME_HEADER_LEN)?;
    let body_start = id_start.checked_add(format::id_len(kind)?)?;
    let end = id_start.checked_add(len)?;
    Some(Parts {
        kind,
        id: bytes.get(id_start..body_start)?,
        body: bytes.get(body_start..end)?,
        end,
    })
}

/// Id of the record at `e`.
pub(crate) fn id_at(segments: &SegmentTable, e: Entry) -> Option<BlockId> {
    let p = parts(segments, e)?;
    BlockId::from_parts(p.kind, p.id)
}

/// Number of hash tables the index is split into (a power of two). A table that grows moves
/// only its own slots, so one growth stalls appends for 1/[`SHARDS`] of the index, not all of
/// it (one table of 15 M records took seconds).
const SHARDS: usize = 64;

/// A slot of the table: a record number and 32 bits of its id's hash. Growing a table rehashes
/// from the stored bits; it never reads an id back from the mapped segments.
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
    pub(crate) entries: Vec<Entry>,
}

impl Default for Index {
    fn default() -> Self {
        Self {
            hasher: Default::default(),
            tables: (0..SHARDS).map(|_| HashTable::new()).collect(),
            entries: Vec::new(),
        }
    }
}

impl Index {
    /// Builds the tables over `entries` (append order).
    pub(crate) fn build(segments: &SegmentTable, entries: Vec<Entry>) -> Self {
        let mut index = Self::default();
        let per_table = entries.len() / SHARDS + entries.len() / (SHARDS * 8) + 1;
        for table in index.tables.iter_mut() {
            table.reserve(per_table, Slot::rehash);
        }
        index.entries = entries;
        for (n, e) in index.entries.iter().enumerate() {
            let (Ok(record), Some(id)) = (u32::try_from(n), id_at(segments, *e)) else {
                continue;
            };
            let hash = index.hash(&id);
            if let Some(table) = index.tables.get_mut(Slot::shard(hash)) {
                table.insert_unique(Slot::table_hash(hash), Slot { record, hash }, Slot::rehash);
            }
        }
        index
    }

    /// The 32 bits of `id`'s keyed hash that the tables use.
    fn hash(&self, id: &BlockId) -> u32 {
        let full = self.hasher.hash_one(id);
        (full >> 32) as u32 ^ full as u32
    }

    /// Record number of `id`.
    pub(crate) fn find(&self, segments: &SegmentTable, id: &BlockId) -> Option<Entry> {
        let hash = self.hash(id);
        let slot = self
            .tables
            .get(Slot::shard(hash))?
            .find(Slot::table_hash(hash), |s| {
                s.hash == hash
                    && self
                        .entries
                        .get(s.record as usize)
                        .and_then(|e| id_at(segments, *e))
                        .is_some_and(|found| found == *id)
            })?;
        self.entries.get(slot.record as usize).copied()
    }

    /// Appends a record whose id is not in the index yet.
    pub(crate) fn push(&mut self, id: &BlockId, e: Entry) -> bool {
        let Ok(record) = u32::try_from(self.entries.len()) else {
            return false;
        };
        let hash = self.hash(id);
        let Some(table) = self.tables.get_mut(Slot::shard(hash)) else {
            return false;
        };
        self.entries.push(e);
        table.insert_unique(Slot::table_hash(hash), Slot { record, hash }, Slot::rehash);
        true
    }

    /// Whether `e` is the start of a record.
    pub(crate) fn contains_entry(&self, e: Entry) -> bool {
        self.entries.binary_search(&e).is_ok()
    }
}
