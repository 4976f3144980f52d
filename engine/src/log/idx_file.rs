//! Index files of sealed segments: writing one crash-safely, opening one with the O(1)
//! checks against its segment, verifying its sections (later: by the scrub or the first
//! lookup, see [`IdxState`]), and lookups in the mapped file (layout in `idx_format.rs` and
//! `engine/FORMAT.md`).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use memmap2::Mmap;

use super::error::LogError;
use super::format::{self, Scan, KIND_SEAL};
use super::frames;
use super::idx_format::{self as layout, Header, HEADER_LEN, KEY_ENTRY_LEN, OFFSET_LEN};
use super::segment::{self, Segment};

/// The index file of one sealed segment, mapped (or, when a rebuilt one could not be
/// written, held in memory). Never changed once mapped.
///
/// [`SealedIndex::open`] checks only what costs O(1) in the number of records; its sections
/// are verified by [`SealedIndex::verify_sections`] before the first lookup uses them (see
/// [`IdxState`]).
#[derive(Debug)]
pub(crate) struct SealedIndex {
    bytes: Bytes,
    header: Header,
}

/// Where the bytes of an index live.
#[derive(Debug)]
enum Bytes {
    /// The file, mapped whole. Its descriptor is closed once mapped (the map keeps the file):
    /// an index file is never written after its rename, so a segment costs no descriptor
    /// for its index.
    Mapped(Mmap),
    /// Built in memory (a rebuild whose file could not be written).
    Owned(Vec<u8>),
}

impl Bytes {
    fn get(&self) -> &[u8] {
        match self {
            Self::Mapped(map) => map,
            Self::Owned(v) => v,
        }
    }
}

/// What verifying a sealed segment's index file found; set once per segment (by the
/// background scrub or by the first lookup in the segment, whichever comes first; the other
/// waits for it). A segment without a state yet is *unverified*: its index is not used.
#[derive(Debug)]
pub(crate) enum IdxState {
    /// The sections of the installed index (checksums and order) are valid: it is used.
    Verified,
    /// The installed index was damaged; this one was rebuilt from a scan of the segment and
    /// is used instead.
    Rebuilt(SealedIndex),
    /// The installed index was damaged and the segment's scan failed too: no record of the
    /// segment is served.
    Unusable,
}

/// Binary search over `0..n`: the first position where `is_after` is true (it must be false
/// then true along the range).
fn partition_point(n: usize, is_after: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, n);
    while low < high {
        let mid = low + (high - low) / 2;
        if is_after(mid) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    low
}

impl SealedIndex {
    /// The file name of the index of segment `number`.
    pub(crate) fn file_name(number: u32) -> String {
        format!("{number:08}.idx")
    }

    /// Parses an index file name.
    pub(crate) fn parse_name(name: &str) -> Option<u32> {
        segment::parse_numbered(name, ".idx")
    }

    /// Opens the index of the sealed segment `seg` (of `size` bytes, its header already
    /// validated) and checks it against the segment in O(1) (see [`SealedIndex::check`]), or
    /// says why it cannot be used. Its sections are not read: call
    /// [`SealedIndex::verify_sections`] before using it.
    pub(crate) fn open(dir: &Path, seg: &Segment, size: u32) -> Result<Self, String> {
        let path = dir.join(Self::file_name(seg.number));
        let file = File::open(&path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => "missing".to_owned(),
            _ => format!("cannot open: {e}"),
        })?;
        let map = segment::map(&file, &path).map_err(|e| e.to_string())?;
        let header = layout::decode_header(&map, seg.number)?;
        let index = Self {
            bytes: Bytes::Mapped(map),
            header,
        };
        index.check(seg, size)?;
        Ok(index)
    }

    /// Checks, in O(1) of the record count, the file's agreement with its header and the
    /// segment: the file length, the segment size, the seal frame at the recorded offset, the
    /// first and last record frames' bounds. Reads the header (whose checksum covers the
    /// sections' checksums), two entries of section A and a few bytes of the segment; not
    /// the sections (see [`SealedIndex::verify_sections`]) nor the segment's records.
    fn check(&self, seg: &Segment, size: u32) -> Result<(), &'static str> {
        let h = &self.header;
        if self.bytes.get().len() != h.file_len() {
            return Err("file length does not match the record count");
        }
        if h.segment_size != size {
            return Err("segment size differs from the segment header");
        }
        if u64::try_from(seg.bytes().len()).ok() != Some(u64::from(size)) {
            return Err("segment file length differs from the segment size");
        }
        let seal_at = usize::try_from(h.seal_offset).map_err(|_| "seal offset")?;
        let Scan::Frame(seal) = format::scan_frame(seg.bytes(), seal_at) else {
            return Err("no intact seal frame at the recorded offset");
        };
        let body = seg
            .bytes()
            .get(seal.body_start..seal.end)
            .unwrap_or_default();
        if seal.kind != KIND_SEAL
            || body.len() != format::SEAL_BODY_LEN
            || format::u32_at(body, 0) != Some(h.count)
            || format::u32_at(body, 4) != Some(h.seal_offset)
        {
            return Err("the seal frame does not match the index");
        }
        // The records run back to back from the segment header to the seal.
        let (first, last_end) = match h.count.checked_sub(1) {
            None => (None, format::HEADER_LEN),
            Some(last) => {
                let last_end = self
                    .offset(last)
                    .and_then(|o| frames::parts_at(seg.bytes(), o))
                    .map_or(0, |p| p.end);
                (self.offset(0), last_end)
            }
        };
        if first.is_some_and(|f| f as usize != format::HEADER_LEN) || last_end != seal_at {
            return Err("record offsets do not span the segment up to its seal");
        }
        Ok(())
    }

    /// Verifies both sections: their checksums, that section A rises strictly below the seal
    /// and that section B is sorted with ordinals in range. Reads the whole file (16 bytes
    /// per record).
    pub(crate) fn verify_sections(&self) -> Result<(), &'static str> {
        layout::verify_sections(self.bytes.get(), &self.header)
    }

    /// Where the segment's seal frame starts: the end of its records.
    pub(crate) fn seal_offset(&self) -> u32 {
        self.header.seal_offset
    }

    /// The segment size recorded in the header (checked against the segment at open).
    pub(crate) fn segment_size(&self) -> u32 {
        self.header.segment_size
    }

    /// Writes the index of the sealed segment `seg` whose records start at `offsets` and
    /// whose seal frame is at `seal_offset`, crash-safely (`.idx.tmp`, fsync, rename, fsync
    /// of the directory), and maps it.
    pub(crate) fn write(
        dir: &Path,
        seg: &Segment,
        offsets: &[u32],
        seal_offset: u32,
        size: u32,
    ) -> Result<Self, LogError> {
        let path = dir.join(Self::file_name(seg.number));
        let tmp = dir.join(format!("{}.tmp", Self::file_name(seg.number)));
        let file = segment::create_tmp(&tmp)?;
        let header = write_index(
            BufWriter::with_capacity(1 << 16, &file),
            seg,
            offsets,
            (seal_offset, size),
            ("write", &tmp),
        )?;
        file.write_all_at(&layout::encode_header(&header), 0)
            .map_err(|e| LogError::io("write", &tmp, e))?;
        file.sync_all()
            .map_err(|e| LogError::io("fsync", &tmp, e))?;
        fs::rename(&tmp, &path).map_err(|e| LogError::io("rename", &tmp, e))?;
        segment::sync_dir(dir)?;
        let map = segment::map(&file, &path)?;
        Ok(Self {
            bytes: Bytes::Mapped(map),
            header,
        })
    }

    /// The index [`SealedIndex::write`] would write, built in memory only (for a rebuild
    /// whose file cannot be written).
    pub(crate) fn in_memory(
        seg: &Segment,
        offsets: &[u32],
        seal_offset: u32,
        size: u32,
    ) -> Result<Self, LogError> {
        let mut bytes = Vec::new();
        let header = write_index(
            &mut bytes,
            seg,
            offsets,
            (seal_offset, size),
            ("build index of", &seg.path),
        )?;
        if let Some(slot) = bytes.get_mut(..HEADER_LEN) {
            slot.copy_from_slice(&layout::encode_header(&header));
        }
        Ok(Self {
            bytes: Bytes::Owned(bytes),
            header,
        })
    }

    /// Records in the segment.
    pub(crate) fn count(&self) -> u32 {
        self.header.count
    }

    /// The frame offset of the record with this ordinal.
    pub(crate) fn offset(&self, ordinal: u32) -> Option<u32> {
        if ordinal >= self.header.count {
            return None;
        }
        format::u32_at(self.bytes.get(), HEADER_LEN + ordinal as usize * OFFSET_LEN)
    }

    /// The frame offsets of the records with ordinals `from..` (at most `max` of them).
    pub(crate) fn offsets(&self, from: u32, max: usize) -> impl Iterator<Item = u32> + '_ {
        (from..self.header.count)
            .take(max)
            .map_while(|ordinal| self.offset(ordinal))
    }

    /// The ordinal of the record whose frame starts at `offset`, if one does.
    pub(crate) fn ordinal_of(&self, offset: u32) -> Option<u32> {
        let ordinal = self.lower_bound(offset);
        (self.offset(ordinal)? == offset).then_some(ordinal)
    }

    /// The ordinal of the first record whose frame starts at or after `offset` (the count if
    /// none does).
    pub(crate) fn lower_bound(&self, offset: u32) -> u32 {
        let n = self.header.count as usize;
        let at = partition_point(n, |i| {
            u32::try_from(i)
                .ok()
                .and_then(|i| self.offset(i))
                .is_none_or(|o| o >= offset)
        });
        u32::try_from(at).unwrap_or(self.header.count)
    }

    /// The frame offsets of the records whose id starts with the 8 bytes of `key`, in append
    /// order (usually none or one).
    pub(crate) fn offsets_with_key(&self, key: u64) -> impl Iterator<Item = u32> + '_ {
        let n = self.header.count as usize;
        let first = partition_point(n, |i| self.key_entry(i).is_none_or(|(k, _)| k >= key));
        (first..n)
            .map_while(move |i| self.key_entry(i).filter(|(k, _)| *k == key))
            .filter_map(|(_, ordinal)| self.offset(ordinal))
    }

    /// The keys of section B, in key order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.header.count as usize)
            .map_while(|i| self.key_entry(i))
            .map(|(key, _)| key)
    }

    /// Entry `i` of section B.
    fn key_entry(&self, i: usize) -> Option<(u64, u32)> {
        let at = self.header.keys_start() + i.checked_mul(KEY_ENTRY_LEN)?;
        layout::key_entry(self.bytes.get().get(at..)?)
    }
}

/// Writes the index sections of `seg`'s records at `offsets` to `out` (the header's place
/// left for the caller) and returns the header that describes them; `seal` is the segment's
/// seal offset and size. A failed write is reported as `verb` on `path`.
fn write_index(
    out: impl Write,
    seg: &Segment,
    offsets: &[u32],
    (seal_offset, segment_size): (u32, u32),
    (verb, path): (&'static str, &Path),
) -> Result<Header, LogError> {
    let count = u32::try_from(offsets.len()).map_err(|_| LogError::Full("records"))?;
    let keys = sorted_keys(seg, offsets)?;
    let (offsets_crc, keys_crc) =
        write_sections(out, offsets, &keys).map_err(|e| LogError::io(verb, path, e))?;
    Ok(Header {
        segment: seg.number,
        count,
        seal_offset,
        segment_size,
        offsets_crc,
        keys_crc,
    })
}

/// The section B entries of the records of `seg` at `offsets`: (key, ordinal), sorted.
fn sorted_keys(seg: &Segment, offsets: &[u32]) -> Result<Vec<(u64, u32)>, LogError> {
    let mut keys = Vec::with_capacity(offsets.len());
    for (ordinal, &offset) in (0u32..).zip(offsets) {
        let parts = frames::parts_at(seg.bytes(), offset).ok_or_else(|| {
            super::open::corrupted(seg.number, offset as usize, "indexed frame out of bounds")
        })?;
        keys.push((layout::key_of(parts.id), ordinal));
    }
    keys.sort_unstable();
    Ok(keys)
}

/// Writes a (zero) header and sections A and B to `out`; returns the sections' checksums.
fn write_sections(
    mut out: impl Write,
    offsets: &[u32],
    keys: &[(u64, u32)],
) -> io::Result<(u32, u32)> {
    out.write_all(&[0u8; HEADER_LEN])?;
    let mut crc = crc32fast::Hasher::new();
    for offset in offsets {
        let b = offset.to_le_bytes();
        crc.update(&b);
        out.write_all(&b)?;
    }
    let offsets_crc = crc.finalize();
    let mut crc = crc32fast::Hasher::new();
    for &(key, ordinal) in keys {
        let b = layout::encode_key_entry(key, ordinal);
        crc.update(&b);
        out.write_all(&b)?;
    }
    out.flush()?;
    Ok((offsets_crc, crc.finalize()))
}
