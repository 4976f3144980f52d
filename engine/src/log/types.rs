//! The log's public value types: ids, record kinds, locations, configuration, reports.

use super::*;

/// The id of a stored block: v2 ids are BLAKE2b-256 of the block bytes, v3 ids carry a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockId {
    /// A v2 (Stardust) block id: BLAKE2b-256 of the serialized block.
    V2([u8; 32]),
    /// A v3 (Nova) block id: 32-byte hash followed by the little-endian slot index.
    V3([u8; 36]),
}

impl BlockId {
    /// The id bytes as stored (32 or 36 bytes).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Self::V2(b) => b,
            Self::V3(b) => b,
        }
    }

    /// The kind of record this id belongs to.
    pub const fn kind(&self) -> RecordKind {
        match self {
            Self::V2(_) => RecordKind::V2Block,
            Self::V3(_) => RecordKind::V3Block,
        }
    }

    pub(super) fn from_parts(kind: u8, id: &[u8]) -> Option<Self> {
        match kind {
            KIND_V2 => Some(Self::V2(id.try_into().ok()?)),
            KIND_V3 => Some(Self::V3(id.try_into().ok()?)),
            _ => None,
        }
    }
}

/// The kind of a stored record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecordKind {
    /// A v2 (Stardust) block.
    V2Block,
    /// A v3 (Nova) block.
    V3Block,
}

impl RecordKind {
    pub(super) const fn byte(self) -> u8 {
        match self {
            Self::V2Block => KIND_V2,
            Self::V3Block => KIND_V3,
        }
    }
}

/// Where a record lives: its segment and the offset of its frame in the segment file.
///
/// Locations order like appends. [`Location::to_u64`] packs one into 8 bytes for other indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    pub(super) segment: u32,
    pub(super) offset: u32,
}

impl Location {
    /// The segment number.
    pub const fn segment(self) -> u32 {
        self.segment
    }

    /// The offset of the record's frame inside the segment file.
    pub const fn offset(self) -> u32 {
        self.offset
    }

    /// Packs the location as `segment << 32 | offset`.
    pub const fn to_u64(self) -> u64 {
        pos(self.segment, self.offset)
    }

    /// Unpacks a location packed by [`Location::to_u64`].
    pub const fn from_u64(v: u64) -> Self {
        // NOTE: the halves of a u64 fit a u32 each by construction.
        #[expect(clippy::cast_possible_truncation)]
        Self {
            segment: (v >> 32) as u32,
            offset: v as u32,
        }
    }
}

/// Global log position of `offset` in `segment`; orders like appends.
pub(super) const fn pos(segment: u32, offset: u32) -> u64 {
    ((segment as u64) << 32) | offset as u64
}

/// When an appended record is forced to stable storage.
///
/// Every mode survives `kill -9` of the process once [`Log::append_v2`]/[`Log::append_v3`]
/// returned, because the bytes are in the kernel's page cache by then. The modes differ in
/// what a power loss or kernel crash can take away; see `engine/FORMAT.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `fdatasync` inside every append, before it returns and before the record is visible.
    /// Nothing acknowledged is lost on power loss; one fsync per append.
    EveryAppend,
    /// Group commit: an append returns after an `fdatasync` that covers it. A background
    /// thread issues at most one fsync per `interval_ms` and each covers every append written
    /// before it, so concurrent appenders share fsyncs. Nothing acknowledged is lost on power
    /// loss; an append waits up to `interval_ms` plus one fsync.
    Group {
        /// Minimum spacing between two fsyncs, in milliseconds.
        interval_ms: u32,
    },
    /// An append returns once the bytes are written; a background thread fsyncs at most every
    /// `interval_ms`. A power loss can take the appends of the last `interval_ms` plus one
    /// fsync. For bulk loading and tests.
    Deferred {
        /// Spacing between two background fsyncs, in milliseconds.
        interval_ms: u32,
    },
}

impl Default for Durability {
    /// Group commit every 1 ms.
    fn default() -> Self {
        Self::Group { interval_ms: 1 }
    }
}

/// How a log is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogConfig {
    pub(super) segment_size: u32,
    pub(super) durability: Durability,
    pub(super) scrub: bool,
}

impl Default for LogConfig {
    /// 64 MiB segments (the in-memory index covers the active segment only, so this bounds
    /// it; pruning drops whole segments), group commit every 1 ms.
    fn default() -> Self {
        Self {
            segment_size: 64 << 20,
            durability: Durability::default(),
            scrub: true,
        }
    }
}

impl LogConfig {
    /// Sets the size of new segment files (at least 4096 bytes). Existing segments keep the
    /// size written in their headers.
    #[must_use]
    pub const fn with_segment_size(mut self, bytes: u32) -> Self {
        self.segment_size = bytes;
        self
    }

    /// Sets the fsync policy.
    #[must_use]
    pub const fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Whether [`Log::open`] starts the background thread that verifies the sealed segments'
    /// index files (`log-idx-scrub`; on by default). Without it an index file is verified
    /// when a lookup first needs its segment. For tests.
    #[must_use]
    pub const fn with_index_scrub(mut self, scrub: bool) -> Self {
        self.scrub = scrub;
        self
    }

    /// The size of new segment files.
    pub const fn segment_size(&self) -> u32 {
        self.segment_size
    }

    /// The fsync policy.
    pub const fn durability(&self) -> Durability {
        self.durability
    }
}

/// The result of an append.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended {
    /// Where the record is.
    pub location: Location,
    /// `false` if a record with this id was already stored (nothing was written).
    pub inserted: bool,
}

/// What opening the log found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Segments found.
    pub segments: u32,
    /// Records recovered.
    pub records: u64,
    /// Where a torn or corrupt tail of the active segment began, if one was truncated.
    pub truncated_at: Option<Location>,
    /// Why the truncated tail was rejected.
    pub truncated_reason: Option<&'static str>,
    /// Segments whose frames were read and verified: the active one, and sealed segments
    /// without a usable index file. A sealed segment with a valid index file is not scanned.
    pub scanned_segments: u32,
    /// Sealed segments whose index file was missing or failed the checks made at open (header,
    /// lengths, seal; see `engine/FORMAT.md`), with the reason; each was scanned and its index
    /// file written anew. Damage found later in an index file's sections is reported by
    /// [`Log::index_health`].
    pub rebuilt_indexes: Vec<(u32, String)>,
    /// Sealed segments opened from their index file without reading its sections (checked
    /// by the background scrub or the first lookup in the segment, see
    /// [`Log::index_health`]).
    pub unverified_indexes: u32,
}

/// The state of the sealed segments' index files since the open (see [`Log::index_health`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexHealth {
    /// Index files found at open whose sections have been verified since (by the scrub or a
    /// lookup), valid or not. Files written by this process are not counted.
    pub verified: u32,
    /// Index files found at open whose sections are not verified yet.
    pub unverified: u32,
    /// Every index file rebuilt since the open began, with the reason: those rebuilt by the
    /// open ([`Recovery::rebuilt_indexes`]), then those whose sections were found damaged
    /// later.
    pub rebuilt: Vec<(u32, String)>,
    /// Sealed segments whose index file was damaged and whose scan failed too, with the
    /// reason: none of their records is served.
    pub unusable: Vec<(u32, String)>,
    /// Whether the scrub went through every sealed segment found at open.
    pub scrub_done: bool,
}

/// Sizes of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogStats {
    /// Records stored.
    pub records: u64,
    /// Segment files.
    pub segments: u32,
    /// Bytes used in segment files: headers, frames and seals, without the unused
    /// (zero, sparse) rest of the active segment.
    pub used_bytes: u64,
    /// Reads of sealed-segment records whose checksum failed since the open (such records
    /// are never served; each is logged with its file and offset).
    pub corrupt_reads: u64,
}

/// A stored record, borrowing the memory map of its segment from a [`Reader`] (which keeps
/// the segment mapped). [`Record::to_bytes`] keeps the bytes beyond the reader.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    pub(super) location: Location,
    pub(super) kind: u8,
    pub(super) id: &'a [u8],
    pub(super) bytes: &'a [u8],
    segment: &'a Arc<Segment>,
    body_start: usize,
}

impl fmt::Debug for Record<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Record")
            .field("location", &self.location)
            .field("id", &self.id())
            .field("len", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Record<'a> {
    pub(super) fn new(location: Location, segment: &'a Arc<Segment>, p: frames::Parts<'a>) -> Self {
        Self {
            location,
            kind: p.kind,
            id: p.id,
            bytes: p.body,
            segment,
            body_start: p.body_start,
        }
    }

    /// The block bytes as an owned handle that keeps the segment mapped while it is held
    /// (no copy).
    pub fn to_bytes(&self) -> RecordBytes {
        RecordBytes {
            segment: Arc::clone(self.segment),
            start: self.body_start,
            len: self.bytes.len(),
        }
    }

    /// Where the record is.
    pub const fn location(&self) -> Location {
        self.location
    }

    /// The record kind.
    pub fn kind(&self) -> RecordKind {
        if self.kind == KIND_V3 {
            RecordKind::V3Block
        } else {
            RecordKind::V2Block
        }
    }

    /// The block id.
    pub fn id(&self) -> BlockId {
        // Frames are verified before they are indexed, so the id has the length of its kind.
        BlockId::from_parts(self.kind, self.id).unwrap_or(BlockId::V2([0; 32]))
    }

    /// The block bytes, straight from the memory map.
    pub const fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// A record's block bytes, zero-copy from its segment's memory map, which stays mapped while
/// this is held (even if pruning retires the segment meanwhile); see [`Record::to_bytes`].
#[derive(Clone)]
pub struct RecordBytes {
    segment: Arc<Segment>,
    start: usize,
    len: usize,
}

impl RecordBytes {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.start
            .checked_add(self.len)
            .and_then(|end| self.segment.bytes().get(self.start..end))
            // Made from a record's range of this very map, so always in bounds.
            .unwrap_or_default()
    }
}

impl std::ops::Deref for RecordBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for RecordBytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl fmt::Debug for RecordBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordBytes")
            .field("segment", &self.segment.number)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl PartialEq for RecordBytes {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for RecordBytes {}
