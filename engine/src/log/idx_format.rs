//! The on-disk layout of segment index files, `NNNNNNNN.idx` (see `engine/FORMAT.md`).
//!
//! Header, 40 bytes, little-endian:
//!
//! ```text
//! 0   8  magic            89 4C 49 44 58 0D 0A 1A  ("\x89LIDX\r\n\x1a")
//! 8   2  format version   1
//! 10  2  reserved         0
//! 12  4  segment number   u32, equal to the number in the file name
//! 16  4  record count     u32, n (equal to the count in the segment's seal)
//! 20  4  seal offset      u32, offset of the segment's seal frame
//! 24  4  segment size     u32, the segment file's length
//! 28  4  CRC-32 of section A
//! 32  4  CRC-32 of section B
//! 36  4  header CRC-32    over bytes 0..36
//! ```
//!
//! Section A, from offset 40: n × u32, the frame offset of each record in append order (a
//! record's position here is its ordinal). Section B, from offset 40 + 4n: n × (u64 key, u32
//! ordinal), sorted by key then ordinal; the key is the first 8 bytes of the id, little-endian.
//! The file ends at 40 + 16n.

use super::format::u32_at;

/// The magic at the head of every index file (the segment's, with `IDX` for `EDG`).
pub(crate) const MAGIC: [u8; 8] = [0x89, b'L', b'I', b'D', b'X', b'\r', b'\n', 0x1a];
/// The format version written in every index header.
pub(crate) const VERSION: u16 = 1;

pub(crate) const VERSION_OFFSET: usize = MAGIC.len();
pub(crate) const NUMBER_OFFSET: usize = VERSION_OFFSET + size_of::<u16>() + 2; // +2 reserved
pub(crate) const COUNT_OFFSET: usize = NUMBER_OFFSET + size_of::<u32>();
pub(crate) const SEAL_OFFSET: usize = COUNT_OFFSET + size_of::<u32>();
pub(crate) const SEGMENT_SIZE_OFFSET: usize = SEAL_OFFSET + size_of::<u32>();
pub(crate) const OFFSETS_CRC_OFFSET: usize = SEGMENT_SIZE_OFFSET + size_of::<u32>();
pub(crate) const KEYS_CRC_OFFSET: usize = OFFSETS_CRC_OFFSET + size_of::<u32>();
pub(crate) const HEADER_CRC_OFFSET: usize = KEYS_CRC_OFFSET + size_of::<u32>();
/// Length of the index header; section A starts here.
pub(crate) const HEADER_LEN: usize = HEADER_CRC_OFFSET + size_of::<u32>();

/// Bytes per record in section A (a frame offset).
pub(crate) const OFFSET_LEN: usize = size_of::<u32>();
/// Bytes per record in section B (a key and an ordinal).
pub(crate) const KEY_ENTRY_LEN: usize = size_of::<u64>() + size_of::<u32>();

/// The sort key of an id: its first 8 bytes (of a BLAKE2b hash), little-endian.
pub(crate) fn key_of(id: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    for (dst, src) in b.iter_mut().zip(id) {
        *dst = *src;
    }
    u64::from_le_bytes(b)
}

/// The fields of an index header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) segment: u32,
    pub(crate) count: u32,
    pub(crate) seal_offset: u32,
    pub(crate) segment_size: u32,
    pub(crate) offsets_crc: u32,
    pub(crate) keys_crc: u32,
}

impl Header {
    /// Where section B starts.
    pub(crate) fn keys_start(&self) -> usize {
        HEADER_LEN.saturating_add(OFFSET_LEN.saturating_mul(self.count as usize))
    }

    /// The length of the whole file.
    pub(crate) fn file_len(&self) -> usize {
        self.keys_start()
            .saturating_add(KEY_ENTRY_LEN.saturating_mul(self.count as usize))
    }
}

/// Encodes an index header.
pub(crate) fn encode_header(h: &Header) -> [u8; HEADER_LEN] {
    let mut b = [0u8; HEADER_LEN];
    let fields = [
        (NUMBER_OFFSET, h.segment),
        (COUNT_OFFSET, h.count),
        (SEAL_OFFSET, h.seal_offset),
        (SEGMENT_SIZE_OFFSET, h.segment_size),
        (OFFSETS_CRC_OFFSET, h.offsets_crc),
        (KEYS_CRC_OFFSET, h.keys_crc),
    ];
    let (magic, rest) = b.split_at_mut(VERSION_OFFSET);
    magic.copy_from_slice(&MAGIC);
    if let Some(v) = rest.get_mut(..2) {
        v.copy_from_slice(&VERSION.to_le_bytes());
    }
    for (at, value) in fields {
        if let Some(slot) = b.get_mut(at..at + 4) {
            slot.copy_from_slice(&value.to_le_bytes());
        }
    }
    let crc = crc32fast::hash(b.get(..HEADER_CRC_OFFSET).unwrap_or_default());
    if let Some(slot) = b.get_mut(HEADER_CRC_OFFSET..) {
        slot.copy_from_slice(&crc.to_le_bytes());
    }
    b
}

/// Validates an index header for segment `segment` and returns its fields.
pub(crate) fn decode_header(b: &[u8], segment: u32) -> Result<Header, &'static str> {
    let h = b.get(..HEADER_LEN).ok_or("file shorter than the header")?;
    if h.get(..VERSION_OFFSET) != Some(&MAGIC[..]) {
        return Err("bad magic");
    }
    let crc = u32_at(h, HEADER_CRC_OFFSET).ok_or("short header")?;
    if crc != crc32fast::hash(h.get(..HEADER_CRC_OFFSET).ok_or("short header")?) {
        return Err("header checksum mismatch");
    }
    let version = h
        .get(VERSION_OFFSET..VERSION_OFFSET + 2)
        .and_then(|v| v.try_into().ok())
        .map(u16::from_le_bytes);
    if version != Some(VERSION) {
        return Err("unsupported format version");
    }
    let field = |at| u32_at(h, at).ok_or("short header");
    let header = Header {
        segment: field(NUMBER_OFFSET)?,
        count: field(COUNT_OFFSET)?,
        seal_offset: field(SEAL_OFFSET)?,
        segment_size: field(SEGMENT_SIZE_OFFSET)?,
        offsets_crc: field(OFFSETS_CRC_OFFSET)?,
        keys_crc: field(KEYS_CRC_OFFSET)?,
    };
    if header.segment != segment {
        return Err("segment number does not match the file name");
    }
    Ok(header)
}

/// Checks the sections of a file whose header `h` is valid: the length, both checksums, and
/// that section A rises strictly and section B is sorted with ordinals in range.
pub(crate) fn verify_sections(b: &[u8], h: &Header) -> Result<(), &'static str> {
    if b.len() != h.file_len() {
        return Err("file length does not match the record count");
    }
    let offsets = b.get(HEADER_LEN..h.keys_start()).ok_or("short file")?;
    let keys = b.get(h.keys_start()..).ok_or("short file")?;
    if crc32fast::hash(offsets) != h.offsets_crc {
        return Err("section A (offsets) checksum mismatch");
    }
    if crc32fast::hash(keys) != h.keys_crc {
        return Err("section B (keys) checksum mismatch");
    }
    let mut previous = None;
    for chunk in offsets.chunks_exact(OFFSET_LEN) {
        let offset = u32_at(chunk, 0).ok_or("short offset")?;
        if previous.is_some_and(|p| p >= offset) || offset >= h.seal_offset {
            return Err("section A (offsets) out of order");
        }
        previous = Some(offset);
    }
    let mut previous = None;
    for chunk in keys.chunks_exact(KEY_ENTRY_LEN) {
        let entry = key_entry(chunk).ok_or("short key entry")?;
        if previous.is_some_and(|p| p > entry) || entry.1 >= h.count {
            return Err("section B (keys) out of order");
        }
        previous = Some(entry);
    }
    Ok(())
}

/// Encodes a section B entry.
pub(crate) fn encode_key_entry(key: u64, ordinal: u32) -> [u8; KEY_ENTRY_LEN] {
    let mut b = [0u8; KEY_ENTRY_LEN];
    let (k, o) = b.split_at_mut(size_of::<u64>());
    k.copy_from_slice(&key.to_le_bytes());
    o.copy_from_slice(&ordinal.to_le_bytes());
    b
}

/// Decodes a section B entry: (key, ordinal).
pub(crate) fn key_entry(b: &[u8]) -> Option<(u64, u32)> {
    let key = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
    Some((key, u32_at(b, 8)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(offsets: &[u32], keys: &[u64]) -> Vec<u8> {
        let mut a = Vec::new();
        for o in offsets {
            a.extend_from_slice(&o.to_le_bytes());
        }
        let mut sorted: Vec<(u64, u32)> = keys.iter().copied().zip(0..).collect();
        sorted.sort_unstable();
        let mut b = Vec::new();
        for (k, o) in sorted {
            b.extend_from_slice(&encode_key_entry(k, o));
        }
        let h = Header {
            segment: 3,
            count: offsets.len() as u32,
            seal_offset: 1000,
            segment_size: 4096,
            offsets_crc: crc32fast::hash(&a),
            keys_crc: crc32fast::hash(&b),
        };
        [&encode_header(&h)[..], &a, &b].concat()
    }

    #[test]
    fn header_constants_match_the_documented_layout() {
        assert_eq!(
            (
                NUMBER_OFFSET,
                COUNT_OFFSET,
                SEAL_OFFSET,
                SEGMENT_SIZE_OFFSET
            ),
            (12, 16, 20, 24)
        );
        assert_eq!(
            (
                OFFSETS_CRC_OFFSET,
                KEYS_CRC_OFFSET,
                HEADER_CRC_OFFSET,
                HEADER_LEN
            ),
            (28, 32, 36, 40)
        );
        assert_eq!((OFFSET_LEN, KEY_ENTRY_LEN), (4, 12));
        assert_ne!(MAGIC, super::super::format::MAGIC);
    }

    #[test]
    fn a_file_round_trips_and_every_flipped_byte_is_detected() {
        let f = file(&[32, 100, 300], &[9, 2, 9]);
        let h = decode_header(&f, 3).unwrap();
        assert_eq!((h.count, h.seal_offset, h.segment_size), (3, 1000, 4096));
        assert_eq!(h.file_len(), f.len());
        verify_sections(&f, &h).unwrap();
        assert_eq!(key_entry(&f[h.keys_start()..]), Some((2, 1)));
        assert_eq!(key_entry(&f[h.keys_start() + 12..]), Some((9, 0)));
        assert_eq!(
            decode_header(&f, 4),
            Err("segment number does not match the file name")
        );
        for byte in 0..f.len() {
            for bit in [0x01, 0x80] {
                let mut bad = f.clone();
                bad[byte] ^= bit;
                let caught = decode_header(&bad, 3).and_then(|h| verify_sections(&bad, &h));
                assert!(caught.is_err(), "flip {bit:#x} in byte {byte} not detected");
            }
        }
        let h = decode_header(&f, 3).unwrap();
        assert!(verify_sections(&f[..f.len() - 1], &h).is_err());
    }

    #[test]
    fn offsets_out_of_order_are_refused_even_with_valid_checksums() {
        let f = file(&[32, 32], &[1, 2]);
        let h = decode_header(&f, 3).unwrap();
        assert_eq!(
            verify_sections(&f, &h),
            Err("section A (offsets) out of order")
        );
        let past_seal = file(&[32, 1000], &[1, 2]);
        let h = decode_header(&past_seal, 3).unwrap();
        assert!(verify_sections(&past_seal, &h).is_err());
    }

    #[test]
    fn key_is_the_first_eight_id_bytes_little_endian() {
        assert_eq!(key_of(&[1, 0, 0, 0, 0, 0, 0, 0, 9, 9]), 1);
        assert_eq!(key_of(&[0, 0, 0, 0, 0, 0, 0, 0x80]), 1 << 63);
    }
}
