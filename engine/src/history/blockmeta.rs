//! Block metadata files: the metadata of referenced blocks, one fixed-size slot per possible
//! v2 record position of a log segment, so that a block's slot is found from its log
//! location by arithmetic (layout in `engine/FORMAT.md`, "Block metadata files").
//!
//! A slot is written when the block's milestone is confirmed, through a shared writable map
//! (no system call per block); [`BlockMetaFiles::flush`] makes the written slots durable before
//! a checkpoint names the milestone. Each slot carries the first 8 bytes of its block id and a
//! CRC-32 over its position and contents: a slot of another block (written by a run whose log
//! tail was lost) is not taken for this one, and a damaged slot is reported, naming the file,
//! never used.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::MmapMut;

use crate::log::{BlockId as LogId, Location, Log};
use crate::tangle::{Archive, ArchiveError, Archived, BlockId, Inclusion};

use super::{fsync_dir, HistoryError};

/// Magic of a block metadata file.
pub(crate) const MAGIC: [u8; 8] = *b"\x89LMETA\r\n";
/// Format version.
pub(crate) const VERSION: u16 = 1;
/// Header length; slots follow.
pub(crate) const HEADER_LEN: usize = 32;
/// Bytes per slot.
pub(crate) const SLOT_LEN: usize = 24;
/// The log's segment header length: the first frame starts here.
const SEGMENT_HEADER_LEN: u32 = 32;
/// The smallest frame a v2 block takes in the log: 9 bytes of frame header, the 32-byte id
/// and the smallest block (version, one parent, payload length, nonce: 46 bytes). Two v2
/// records of a segment start at least this far apart, so `offset / MIN_V2_FRAME` numbers
/// them without collisions.
pub(crate) const MIN_V2_FRAME: u32 = 9 + 32 + 46;

/// The slot number of the v2 record at `offset` of its segment.
pub(crate) fn slot_of(offset: u32) -> usize {
    (offset.saturating_sub(SEGMENT_HEADER_LEN) / MIN_V2_FRAME) as usize
}

/// The file name of segment `segment`'s metadata.
pub(crate) fn file_name(segment: u32) -> String {
    format!("{segment:08}.meta")
}

fn inclusion_code(i: Inclusion) -> (u8, u8) {
    match i {
        Inclusion::Pending => (0, 0),
        Inclusion::NoTransaction => (1, 0),
        Inclusion::Included => (2, 0),
        Inclusion::Conflicting(r) => (3, r),
    }
}

fn inclusion_of(code: u8, reason: u8) -> Option<Inclusion> {
    match code {
        1 => Some(Inclusion::NoTransaction),
        2 => Some(Inclusion::Included),
        3 => Some(Inclusion::Conflicting(reason)),
        _ => None,
    }
}

fn slot_crc(segment: u32, slot: usize, body: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&segment.to_le_bytes());
    h.update(&(slot as u64).to_le_bytes());
    h.update(body);
    h.finalize()
}

/// Encodes the slot of block `id`.
pub(crate) fn encode_slot(segment: u32, slot: usize, id: &BlockId, m: &Archived) -> [u8; 24] {
    let mut out = [0u8; SLOT_LEN];
    out[0..8].copy_from_slice(&id[0..8]);
    out[8..12].copy_from_slice(&m.referenced_by.to_le_bytes());
    out[12..16].copy_from_slice(&m.white_flag_index.to_le_bytes());
    let (code, reason) = inclusion_code(m.inclusion);
    out[16] = code;
    out[17] = reason;
    let crc = slot_crc(segment, slot, &out[0..20]);
    out[20..24].copy_from_slice(&crc.to_le_bytes());
    out
}

/// What a slot holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Never written.
    Empty,
    /// Written for another block (first 8 id bytes differ).
    Other,
    /// The block's metadata.
    Meta(Archived),
}

/// Decodes the slot of block `id`.
///
/// # Errors
/// A checksum mismatch or an impossible value: the reason.
pub(crate) fn decode_slot(
    segment: u32,
    slot: usize,
    id: &BlockId,
    bytes: &[u8],
) -> Result<Slot, String> {
    let Some(bytes) = bytes.get(..SLOT_LEN) else {
        return Ok(Slot::Empty);
    };
    if bytes.iter().all(|b| *b == 0) {
        return Ok(Slot::Empty);
    }
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes)
    };
    if u32_at(20) != slot_crc(segment, slot, &bytes[0..20]) {
        return Err(format!("slot {slot}: checksum mismatch"));
    }
    if bytes[0..8] != id[0..8] {
        return Ok(Slot::Other);
    }
    let inclusion = inclusion_of(bytes[16], bytes[17])
        .ok_or_else(|| format!("slot {slot}: unknown inclusion code {}", bytes[16]))?;
    Ok(Slot::Meta(Archived {
        referenced_by: u32_at(8),
        white_flag_index: u32_at(12),
        inclusion,
    }))
}

fn header(segment: u32, slots: u32) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&segment.to_le_bytes());
    h[16..20].copy_from_slice(&(SLOT_LEN as u32).to_le_bytes());
    h[20..24].copy_from_slice(&slots.to_le_bytes());
    let crc = crc32fast::hash(&h[0..28]);
    h[28..32].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Checks a header; the slot count it declares.
fn check_header(segment: u32, bytes: &[u8]) -> Result<u32, String> {
    let h = bytes.get(..HEADER_LEN).ok_or("shorter than its header")?;
    let u32_at = |at: usize| {
        h.get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes)
    };
    if h[0..8] != MAGIC {
        return Err("not a block metadata file (magic)".into());
    }
    if u32_at(28) != crc32fast::hash(&h[0..28]) {
        return Err("header checksum mismatch".into());
    }
    let version = u16::from_le_bytes([h[8], h[9]]);
    if version != VERSION {
        return Err(format!(
            "format version {version}, this node reads {VERSION}"
        ));
    }
    if u32_at(12) != segment {
        return Err(format!("written for segment {}", u32_at(12)));
    }
    if u32_at(16) as usize != SLOT_LEN {
        return Err(format!("slot size {}", u32_at(16)));
    }
    let slots = u32_at(20);
    let want = HEADER_LEN as u64 + u64::from(slots) * SLOT_LEN as u64;
    if bytes.len() as u64 != want {
        return Err(format!(
            "{} bytes long, its header says {want}",
            bytes.len()
        ));
    }
    Ok(slots)
}

/// Bytes of a metadata file allocated at once before a slot in them is written: a page, so
/// that a file is as sparse as its written slots (large blocks leave most slots unused).
const CHUNK: u64 = 4096;

/// Whether a chunk of a metadata file has its disk blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// No slot written: its slots read as empty; the map is not touched there.
    Hole,
    /// Holds data (found at open), not known to be allocated whole: read through the map,
    /// allocated before the next write.
    Partial,
    /// Allocated whole: slots are written through the map.
    Allocated,
}

/// One segment's metadata file, mapped whole. Its descriptor is closed once mapped (the map
/// keeps the file); syncing, growing and allocating open it again by name, so the files cost
/// the node no descriptors.
///
/// The file is sparse; a chunk of it is allocated (`fallocate`) before the first slot in it is
/// written through the map, because a write through a shared map into a hole of a full file
/// system ends the process with SIGBUS, while a failed allocation is an error the caller
/// handles (the block's row stays in memory). Slots in chunks where nothing was written are
/// read as empty without touching the map (on tmpfs, even a read fault in a hole allocates).
#[derive(Debug)]
struct MetaFile {
    path: PathBuf,
    map: MmapMut,
    slots: u32,
    dirty: bool,
    chunks: Vec<Chunk>,
}

/// The chunk holding byte `at` of a metadata file.
fn chunk_of(at: usize) -> usize {
    (at as u64 / CHUNK) as usize
}

/// Allocates bytes `[start, start + len)` of the file at `path`. A file system that cannot
/// preallocate gives `Ok` (slots are then written into holes).
fn allocate(path: &Path, start: u64, len: u64) -> std::io::Result<()> {
    let file = OpenOptions::new().write(true).open(path)?;
    crate::disk::preallocate(&file, start, len)
}

impl MetaFile {
    /// The chunks of an existing `file` of `len` bytes: those with data are partial, the rest
    /// holes (nothing is allocated at open: a full disk must not stop a start).
    fn chunks_of(file: &File, len: u64) -> Vec<Chunk> {
        use rustix::fs::{seek, SeekFrom};
        let count = len.div_ceil(CHUNK) as usize;
        let mut chunks = vec![Chunk::Hole; count];
        for (i, c) in chunks.iter_mut().enumerate() {
            let start = i as u64 * CHUNK;
            let end = (start + CHUNK).min(len);
            let has_data = match seek(file, SeekFrom::Data(start)) {
                Ok(data) => data < end,
                // No hole reporting: assume data.
                Err(_) => true,
            };
            if has_data {
                *c = Chunk::Partial;
            }
        }
        chunks
    }

    /// Makes the chunk holding byte `at` allocated.
    fn allocate_for(&mut self, at: usize) -> Result<(), HistoryError> {
        let c = chunk_of(at);
        if self.chunks.get(c) == Some(&Chunk::Allocated) {
            return Ok(());
        }
        let len = self.map.len() as u64;
        let start = c as u64 * CHUNK;
        let end = (start + CHUNK).min(len);
        allocate(&self.path, start, end.saturating_sub(start))
            .map_err(|e| HistoryError::io("allocating", &self.path, e))?;
        if let Some(chunk) = self.chunks.get_mut(c) {
            *chunk = Chunk::Allocated;
        }
        Ok(())
    }
}

impl MetaFile {
    #[expect(
        unsafe_code,
        reason = "mapping a file is unsafe in memmap2; the SAFETY comment says why it is sound here"
    )]
    fn map(file: &File) -> Result<MmapMut, std::io::Error> {
        // SAFETY: the file lives in the node's data directory, which one process at a time
        // opens (the log's `LOCK` is held while the engine is open); nothing else writes or
        // shrinks it while mapped: this process grows it only through `&mut self`, which
        // drops the old map first. Slices of the map are borrowed from `&self` and writes go
        // through `&mut self`, so no reader ever sees a byte change under its reference.
        unsafe { MmapMut::map_mut(file) }
    }

    fn open(path: PathBuf, segment: u32) -> Result<Self, HistoryError> {
        Self::opened(path, segment, false)
    }

    /// Opens the file at `path`; `fresh`: just created, no slot written (every chunk is a
    /// hole for the slots, whatever the header's page holds).
    fn opened(path: PathBuf, segment: u32, fresh: bool) -> Result<Self, HistoryError> {
        let damaged = |why: String| HistoryError::Damaged {
            path: path.clone(),
            why,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| HistoryError::io("opening", &path, e))?;
        let map = Self::map(&file).map_err(|e| HistoryError::io("mapping", &path, e))?;
        let slots = check_header(segment, &map).map_err(damaged)?;
        let chunks = match fresh {
            true => vec![Chunk::Hole; (map.len() as u64).div_ceil(CHUNK) as usize],
            false => Self::chunks_of(&file, map.len() as u64),
        };
        Ok(Self {
            path,
            map,
            slots,
            dirty: false,
            chunks,
        })
    }

    /// Creates the file crash-safely (temporary name, header, size, fsync, rename, fsync of
    /// the directory); its slots are zero (a sparse file).
    fn create(dir: &Path, segment: u32, slots: u32) -> Result<Self, HistoryError> {
        let path = dir.join(file_name(segment));
        let tmp = dir.join(format!("{}.tmp", file_name(segment)));
        let io = |what: &'static str, e| HistoryError::io(what, &tmp, e);
        {
            let mut f = File::create(&tmp).map_err(|e| io("creating", e))?;
            f.write_all(&header(segment, slots))
                .map_err(|e| io("writing", e))?;
            f.set_len(HEADER_LEN as u64 + u64::from(slots) * SLOT_LEN as u64)
                .map_err(|e| io("sizing", e))?;
            f.sync_all().map_err(|e| io("syncing", e))?;
        }
        fs::rename(&tmp, &path).map_err(|e| io("renaming", e))?;
        fsync_dir(dir)?;
        Self::opened(path, segment, true)
    }

    /// The bytes of `slot`; `None` past the end, all zeros for a slot in a hole.
    fn slot_bytes(&self, slot: usize) -> Option<&[u8]> {
        const EMPTY: [u8; SLOT_LEN] = [0; SLOT_LEN];
        let at = HEADER_LEN + slot.checked_mul(SLOT_LEN)?;
        let bytes = self.map.get(at..at + SLOT_LEN)?;
        // A slot is written only once both chunks it touches are allocated (`write`).
        let hole = |b: usize| self.chunks.get(chunk_of(b)) == Some(&Chunk::Hole);
        match hole(at) || hole(at + SLOT_LEN - 1) {
            true => Some(&EMPTY),
            false => Some(bytes),
        }
    }
}

/// The block metadata files of a data directory, an [`Archive`] for the tangle.
#[derive(Debug)]
pub struct BlockMetaFiles {
    dir: PathBuf,
    log: Arc<Log>,
    files: BTreeMap<u32, MetaFile>,
    // Slots of a new file: enough for the configured segment size.
    slots_per_file: u32,
}

impl BlockMetaFiles {
    /// Opens the metadata files in `dir` (created if missing) for the blocks of `log`.
    /// Leftover temporary files are deleted; a file that fails its header check is an error
    /// naming it.
    ///
    /// # Errors
    /// I/O failures, or a damaged header.
    pub fn open(dir: impl Into<PathBuf>, log: Arc<Log>) -> Result<Self, HistoryError> {
        let dir = dir.into();
        fs::create_dir_all(&dir).map_err(|e| HistoryError::io("creating", &dir, e))?;
        let mut files = BTreeMap::new();
        let entries = fs::read_dir(&dir).map_err(|e| HistoryError::io("listing", &dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| HistoryError::io("listing", &dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.ends_with(".meta.tmp") {
                let path = entry.path();
                fs::remove_file(&path).map_err(|e| HistoryError::io("removing", &path, e))?;
                continue;
            }
            let Some(segment) = name
                .strip_suffix(".meta")
                .filter(|d| d.len() == 8 && d.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|d| d.parse::<u32>().ok())
            else {
                continue;
            };
            if segment < log.first_segment() {
                // Its log segment is retired (a crash came between the two deletions).
                let path = entry.path();
                fs::remove_file(&path).map_err(|e| HistoryError::io("removing", &path, e))?;
                continue;
            }
            files.insert(segment, MetaFile::open(entry.path(), segment)?);
        }
        let segment_size = log.config().segment_size();
        let slots_per_file = u32::try_from(slot_of(segment_size) + 1).unwrap_or(u32::MAX);
        Ok(Self {
            dir,
            log,
            files,
            slots_per_file,
        })
    }

    /// The directory of the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Checks every written slot of every file (a full scan, for tools and tests).
    ///
    /// # Errors
    /// The first damaged slot, naming its file.
    pub fn verify(&self) -> Result<u64, HistoryError> {
        let mut written = 0u64;
        for (segment, f) in &self.files {
            for slot in 0..f.slots as usize {
                let Some(bytes) = f.slot_bytes(slot) else {
                    break;
                };
                if bytes.iter().all(|b| *b == 0) {
                    continue;
                }
                let crc = u32::from_le_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
                if crc != slot_crc(*segment, slot, &bytes[0..20]) {
                    return Err(HistoryError::Damaged {
                        path: f.path.clone(),
                        why: format!("slot {slot}: checksum mismatch"),
                    });
                }
                written += 1;
            }
        }
        Ok(written)
    }

    fn file_for_write(&mut self, segment: u32, slot: usize) -> Result<&mut MetaFile, HistoryError> {
        if !self.files.contains_key(&segment) {
            let slots = self
                .slots_per_file
                .max(u32::try_from(slot + 1).unwrap_or(u32::MAX));
            let f = MetaFile::create(&self.dir, segment, slots)?;
            self.files.insert(segment, f);
        }
        let f = self.files.get_mut(&segment).ok_or_else(|| {
            HistoryError::io("opening", &self.dir, std::io::ErrorKind::NotFound.into())
        })?;
        if slot >= f.slots as usize {
            // A segment larger than the configured size (configured smaller since): grow.
            let slots = u32::try_from(slot + 1).unwrap_or(u32::MAX);
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&f.path)
                .map_err(|e| HistoryError::io("opening", &f.path, e))?;
            file.set_len(HEADER_LEN as u64 + u64::from(slots) * SLOT_LEN as u64)
                .map_err(|e| HistoryError::io("growing", &f.path, e))?;
            f.map = MetaFile::map(&file).map_err(|e| HistoryError::io("mapping", &f.path, e))?;
            f.chunks
                .resize((f.map.len() as u64).div_ceil(CHUNK) as usize, Chunk::Hole);
            let h = header(segment, slots);
            f.map[..HEADER_LEN].copy_from_slice(&h);
            f.slots = slots;
        }
        Ok(f)
    }
}

impl Archive for BlockMetaFiles {
    fn locate(&self, id: &BlockId) -> Option<u64> {
        self.log.locate(&LogId::V2(*id)).map(Location::to_u64)
    }

    fn read(&self, id: &BlockId, record: u64) -> Result<Option<Archived>, ArchiveError> {
        let at = Location::from_u64(record);
        let Some(f) = self.files.get(&at.segment()) else {
            return Ok(None);
        };
        let slot = slot_of(at.offset());
        let Some(bytes) = f.slot_bytes(slot) else {
            return Ok(None);
        };
        match decode_slot(at.segment(), slot, id, bytes) {
            Ok(Slot::Meta(m)) => Ok(Some(m)),
            Ok(Slot::Empty | Slot::Other) => Ok(None),
            Err(why) => Err(ArchiveError(format!("{}: {why}", f.path.display()))),
        }
    }

    fn write(&mut self, id: &BlockId, record: u64, meta: &Archived) -> Result<(), ArchiveError> {
        let at = Location::from_u64(record);
        let slot = slot_of(at.offset());
        let f = self
            .file_for_write(at.segment(), slot)
            .map_err(|e| ArchiveError(e.to_string()))?;
        let bytes = encode_slot(at.segment(), slot, id, meta);
        let start = HEADER_LEN + slot * SLOT_LEN;
        // Both ends: a slot may straddle two chunks.
        for at in [start, start + SLOT_LEN - 1] {
            f.allocate_for(at)
                .map_err(|e| ArchiveError(e.to_string()))?;
        }
        let Some(dst) = f.map.get_mut(start..start + SLOT_LEN) else {
            return Err(ArchiveError(format!(
                "{}: slot {slot} out of range",
                f.path.display()
            )));
        };
        dst.copy_from_slice(&bytes);
        f.dirty = true;
        Ok(())
    }

    fn retire_below(&mut self, segment: u32) -> Result<usize, ArchiveError> {
        let kept = self.files.split_off(&segment);
        let gone = std::mem::replace(&mut self.files, kept);
        for f in gone.values() {
            // The map goes with `gone` below; no slice of it is borrowed (reads borrow
            // `&self`, and this takes `&mut self`). Not made durable with a directory fsync
            // (the caller holds the state lock, which submits wait for): a file a crash
            // brings back is below the log's first segment, and the next open deletes it.
            fs::remove_file(&f.path)
                .map_err(|e| ArchiveError(format!("removing {}: {e}", f.path.display())))?;
        }
        Ok(gone.len())
    }

    fn take_unsynced(&mut self) -> Result<Vec<(PathBuf, File)>, ArchiveError> {
        let mut out = Vec::new();
        for f in self.files.values_mut().filter(|f| f.dirty) {
            // `fsync` of the file (any descriptor of it) writes back the pages dirtied
            // through the shared map.
            let handle = File::open(&f.path)
                .map_err(|e| ArchiveError(format!("{}: {e}", f.path.display())))?;
            out.push((f.path.clone(), handle));
            f.dirty = false;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_round_trip_and_name_damage() {
        let id = [7u8; 32];
        let m = Archived {
            referenced_by: 9,
            white_flag_index: 3,
            inclusion: Inclusion::Conflicting(2),
        };
        let mut bytes = encode_slot(4, 11, &id, &m);
        assert_eq!(decode_slot(4, 11, &id, &bytes), Ok(Slot::Meta(m)));
        assert_eq!(decode_slot(4, 11, &[8u8; 32], &bytes), Ok(Slot::Other));
        // The position is part of the checksum: a slot copied elsewhere is damage.
        assert!(decode_slot(4, 12, &id, &bytes).is_err());
        bytes[9] ^= 1;
        assert!(decode_slot(4, 11, &id, &bytes).is_err());
        assert_eq!(decode_slot(4, 11, &id, &[0; SLOT_LEN]), Ok(Slot::Empty));
    }

    #[test]
    fn v2_records_never_share_a_slot() {
        let first = SEGMENT_HEADER_LEN;
        assert_eq!(slot_of(first), 0);
        assert_eq!(slot_of(first + MIN_V2_FRAME), 1);
        assert_eq!(slot_of(first + MIN_V2_FRAME - 1), 0);
    }
}
