//! The in-memory index: records in append order, and a hash table from block id to record.
//!
//! The table stores only record numbers (4 bytes a slot); ids are compared against the frames
//! in the mapped segments, so the index costs about 13 bytes of memory per record.

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

#[derive(Debug, Default)]
pub(crate) struct Index {
    hasher: std::hash::RandomState,
    table: HashTable<u32>,
    pub(crate) entries: Vec<Entry>,
}

impl Index {
    /// Builds the table over `entries` (append order).
    pub(crate) fn build(segments: &SegmentTable, entries: Vec<Entry>) -> Self {
        let mut index = Self {
            hasher: Default::default(),
            table: HashTable::new(),
            entries: Vec::new(),
        };
        index.table.reserve(entries.len(), |_| 0);
        index.entries = entries;
        for (n, e) in index.entries.iter().enumerate() {
            let (Ok(n), Some(id)) = (u32::try_from(n), id_at(segments, *e)) else {
                continue;
            };
            let hash = index.hasher.hash_one(id);
            // Room was reserved above, so the rehash closure is never called.
            index.table.insert_unique(hash, n, |_| 0);
        }
        index
    }

    /// Record number of `id`.
    pub(crate) fn find(&self, segments: &SegmentTable, id: &BlockId) -> Option<Entry> {
        let hash = self.hasher.hash_one(id);
        let n = self.table.find(hash, |&n| {
            self.entries
                .get(n as usize)
                .and_then(|e| id_at(segments, *e))
                .is_some_and(|found| found == *id)
        })?;
        self.entries.get(*n as usize).copied()
    }

    /// Appends a record whose id is not in the index yet.
    pub(crate) fn push(&mut self, segments: &SegmentTable, id: &BlockId, e: Entry) -> bool {
        let Ok(n) = u32::try_from(self.entries.len()) else {
            return false;
        };
        self.entries.push(e);
        let hasher = &self.hasher;
        let entries = &self.entries;
        self.table.insert_unique(hasher.hash_one(id), n, |&m| {
            entries
                .get(m as usize)
                .and_then(|e| id_at(segments, *e))
                .map_or(0, |id| hasher.hash_one(id))
        });
        true
    }

    /// Whether `e` is the start of a record.
    pub(crate) fn contains_entry(&self, e: Entry) -> bool {
        self.entries.binary_search(&e).is_ok()
    }
}
