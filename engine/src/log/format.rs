//! The on-disk layout of segment files and record frames (see `engine/FORMAT.md`).
//!
//! Segment header, 32 bytes, little-endian:
//!
//! ```text
//! 0   8  magic            89 4C 45 44 47 0D 0A 1A  ("\x89LEDG\r\n\x1a")
//! 8   2  format version   1
//! 10  2  reserved         0
//! 12  4  segment number   u32, equal to the number in the file name
//! 16  4  segment size     u32, the file length in bytes
//! 20  8  reserved         0
//! 28  4  header CRC-32    over bytes 0..28
//! ```
//!
//! Record frame, from offset 32 on, back to back:
//!
//! ```text
//! 0   4  CRC-32           over bytes 4..9+len (length, kind, id, body)
//! 4   4  len              u32, length of id + body
//! 8   1  kind             0x01 v2 block (32-byte id), 0x02 v3 block (36-byte id), 0xFF seal
//! 9   len  id, then body
//! ```
//!
//! A frame of nine zero bytes (crc 0, len 0, kind 0) marks the end of the data.

/// The magic at the head of every segment file (inspired by PNG's).
pub(crate) const MAGIC: [u8; 8] = [0x89, b'L', b'E', b'D', b'G', b'\r', b'\n', 0x1a];
/// The format version written in every segment header.
pub(crate) const VERSION: u16 = 1;

pub(crate) const MAGIC_OFFSET: usize = 0;
pub(crate) const VERSION_OFFSET: usize = MAGIC_OFFSET + MAGIC.len();
pub(crate) const NUMBER_OFFSET: usize = VERSION_OFFSET + size_of::<u16>() + 2; // +2 reserved
pub(crate) const SIZE_OFFSET: usize = NUMBER_OFFSET + size_of::<u32>();
pub(crate) const HEADER_CRC_OFFSET: usize = SIZE_OFFSET + size_of::<u32>() + 8; // +8 reserved
/// Length of the segment header; the first frame starts here.
pub(crate) const HEADER_LEN: usize = HEADER_CRC_OFFSET + size_of::<u32>();

pub(crate) const FRAME_CRC_OFFSET: usize = 0;
pub(crate) const FRAME_LEN_OFFSET: usize = FRAME_CRC_OFFSET + size_of::<u32>();
pub(crate) const FRAME_KIND_OFFSET: usize = FRAME_LEN_OFFSET + size_of::<u32>();
/// Length of a frame header; the id starts here.
pub(crate) const FRAME_HEADER_LEN: usize = FRAME_KIND_OFFSET + size_of::<u8>();

/// Kind byte of a v2 (Stardust) block record.
pub(crate) const KIND_V2: u8 = 0x01;
/// Kind byte of a v3 (Nova) block record.
pub(crate) const KIND_V3: u8 = 0x02;
/// Kind byte of the seal record that closes a full segment.
pub(crate) const KIND_SEAL: u8 = 0xFF;

/// Body of a seal record: record count (u32) and the seal's own offset (u32).
pub(crate) const SEAL_BODY_LEN: usize = 2 * size_of::<u32>();
/// Bytes kept free at the end of every segment for its seal record.
pub(crate) const SEAL_FRAME_LEN: usize = FRAME_HEADER_LEN + SEAL_BODY_LEN;

/// Smallest segment size accepted by the configuration.
pub(crate) const MIN_SEGMENT_SIZE: u32 = 4096;

/// Id length of a record kind, or `None` if the kind is unknown.
pub(crate) const fn id_len(kind: u8) -> Option<usize> {
    match kind {
        KIND_V2 => Some(32),
        KIND_V3 => Some(36),
        KIND_SEAL => Some(0),
        _ => None,
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// Encodes a segment header.
pub(crate) fn encode_header(number: u32, size: u32) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[MAGIC_OFFSET..VERSION_OFFSET].copy_from_slice(&MAGIC);
    h[VERSION_OFFSET..VERSION_OFFSET + 2].copy_from_slice(&VERSION.to_le_bytes());
    h[NUMBER_OFFSET..SIZE_OFFSET].copy_from_slice(&number.to_le_bytes());
    h[SIZE_OFFSET..SIZE_OFFSET + 4].copy_from_slice(&size.to_le_bytes());
    let crc = crc32fast::hash(&h[..HEADER_CRC_OFFSET]);
    h[HEADER_CRC_OFFSET..].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Validates a segment header and returns the segment size it declares.
pub(crate) fn decode_header(b: &[u8], number: u32) -> Result<u32, &'static str> {
    let h = b
        .get(..HEADER_LEN)
        .ok_or("file shorter than the segment header")?;
    if h.get(MAGIC_OFFSET..VERSION_OFFSET) != Some(&MAGIC[..]) {
        return Err("bad magic");
    }
    let crc = u32_at(h, HEADER_CRC_OFFSET).ok_or("short header")?;
    if crc != crc32fast::hash(h.get(..HEADER_CRC_OFFSET).ok_or("short header")?) {
        return Err("header checksum mismatch");
    }
    if u16_at(h, VERSION_OFFSET) != Some(VERSION) {
        return Err("unsupported format version");
    }
    if u32_at(h, NUMBER_OFFSET) != Some(number) {
        return Err("segment number does not match the file name");
    }
    let size = u32_at(h, SIZE_OFFSET).ok_or("short header")?;
    // A segment must hold its header, one minimal frame and its seal; smaller sizes would
    // make the scan's bounds arithmetic meaningless.
    if size < MIN_SEGMENT_SIZE {
        return Err("segment size below the minimum");
    }
    Ok(size)
}

/// Appends one frame (header, id, body) to `out`.
///
/// The caller has checked that `id.len() + body.len()` fits in a `u32`.
pub(crate) fn encode_frame(out: &mut Vec<u8>, kind: u8, id: &[u8], body: &[u8]) {
    let start = out.len();
    out.extend_from_slice(&[0u8; 4]);
    let len = u32::try_from(id.len().saturating_add(body.len())).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.push(kind);
    out.extend_from_slice(id);
    out.extend_from_slice(body);
    let crc = crc32fast::hash(out.get(start.saturating_add(4)..).unwrap_or_default());
    if let Some(slot) = out.get_mut(start..start.saturating_add(4)) {
        slot.copy_from_slice(&crc.to_le_bytes());
    }
}

/// One frame found by [`scan_frame`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    /// The kind byte.
    pub(crate) kind: u8,
    /// Offset of the body inside the segment.
    pub(crate) body_start: usize,
    /// Offset one past the frame.
    pub(crate) end: usize,
}

/// What lies at a given offset of a segment.
#[derive(Debug)]
pub(crate) enum Scan {
    /// An intact frame.
    Frame(Frame),
    /// Nine zero bytes, or too little room for a frame header: the data ends here.
    End,
    /// An intact frame of a kind this version does not know.
    Unsupported(u8),
    /// Bytes that are not an intact frame.
    Invalid(&'static str),
}

/// Looks at the frame starting at `at` of the segment bytes `seg`.
pub(crate) fn scan_frame(seg: &[u8], at: usize) -> Scan {
    let Some(head) = at
        .checked_add(FRAME_HEADER_LEN)
        .and_then(|e| seg.get(at..e))
    else {
        // No room for a header: the end, unless a header was begun (a short file).
        let rest = seg.get(at..).unwrap_or_default();
        return if rest.iter().all(|&b| b == 0) {
            Scan::End
        } else {
            Scan::Invalid("frame header cut short")
        };
    };
    if head.iter().all(|&b| b == 0) {
        return Scan::End;
    }
    let (Some(crc), Some(len)) = (
        u32_at(head, FRAME_CRC_OFFSET),
        u32_at(head, FRAME_LEN_OFFSET),
    ) else {
        return Scan::End;
    };
    let kind = head.get(FRAME_KIND_OFFSET).copied().unwrap_or(0);
    let id_start = at.saturating_add(FRAME_HEADER_LEN);
    let Some(end) = usize::try_from(len)
        .ok()
        .and_then(|l| id_start.checked_add(l))
    else {
        return Scan::Invalid("length overflows");
    };
    let Some(covered) = seg.get(at.saturating_add(FRAME_LEN_OFFSET)..end) else {
        return Scan::Invalid("frame runs past the end of the segment");
    };
    if crc32fast::hash(covered) != crc {
        return Scan::Invalid("checksum mismatch");
    }
    let Some(idl) = id_len(kind) else {
        return Scan::Unsupported(kind);
    };
    match id_start.checked_add(idl) {
        Some(body_start) if body_start <= end => Scan::Frame(Frame {
            kind,
            body_start,
            end,
        }),
        _ => Scan::Invalid("length shorter than the record id"),
    }
}

/// One past the last non-zero byte of `seg` (0 for an all-zero segment). The file is
/// pre-sized with zeros, so this is where written data ends.
pub(crate) fn data_end(seg: &[u8]) -> usize {
    const CHUNK: usize = 4096;
    let whole = seg.len() - seg.len() % CHUNK;
    if let Some(i) = seg
        .get(whole..)
        .and_then(|t| t.iter().rposition(|&b| b != 0))
    {
        return whole + i + 1;
    }
    let chunks = seg.get(..whole).unwrap_or_default().chunks_exact(CHUNK);
    for (n, chunk) in chunks.enumerate().rev() {
        if let Some(i) = chunk.iter().rposition(|&b| b != 0) {
            return n * CHUNK + i + 1;
        }
    }
    0
}

/// The offset of the first intact record frame that starts after `at` (at any byte offset,
/// since a damaged frame's length cannot be trusted), if any. A torn tail has none: only
/// the zeros of the pre-sized file, or the rest of the one frame being written, follow it.
/// Damage in the middle of the data has the later records after it.
/// `seg` is the segment cut at the end of its allocated data (see
/// `Segment::allocated_end`; the rest reads as zeros).
pub(crate) fn intact_frame_after(seg: &[u8], at: usize) -> Option<usize> {
    // A record may end in zero bytes (a milestone's nonce is 0), so it may reach past the
    // last non-zero byte; by less than the largest record, far less than this.
    const TRAILING_ZEROS: usize = 1 << 20;
    let data = data_end(seg);
    let end = data.saturating_add(TRAILING_ZEROS).min(seg.len());
    (at.saturating_add(1)..data).find(|&pos| {
        // Cheap filters first: a known kind and a length that fits the data.
        let kind_ok = seg
            .get(pos + FRAME_KIND_OFFSET)
            .is_some_and(|&k| matches!(k, KIND_V2 | KIND_V3 | KIND_SEAL));
        kind_ok
            && u32_at(seg, pos + FRAME_LEN_OFFSET)
                .and_then(|l| usize::try_from(l).ok())
                .and_then(|l| (pos + FRAME_HEADER_LEN).checked_add(l))
                .is_some_and(|e| e <= end)
            && matches!(scan_frame(seg, pos), Scan::Frame(_))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(n: u8) -> Vec<u8> {
        let mut seg = vec![0u8; HEADER_LEN];
        for i in 0..n {
            encode_frame(&mut seg, KIND_V2, &[i; 32], &[i; 100]);
        }
        seg.resize(seg.len() + 4096, 0);
        seg
    }

    #[test]
    fn data_end_is_one_past_the_last_non_zero_byte() {
        assert_eq!(data_end(&[0; 10_000]), 0);
        let mut seg = vec![0u8; 10_000];
        seg[4095] = 1;
        assert_eq!(data_end(&seg), 4096);
        seg[9_999] = 1;
        assert_eq!(data_end(&seg), 10_000);
    }

    #[test]
    fn a_torn_tail_has_no_intact_frame_after_it_and_damage_in_the_middle_has() {
        let seg = frames(3);
        let second = HEADER_LEN + FRAME_HEADER_LEN + 132;
        let third = second + FRAME_HEADER_LEN + 132;
        // Intact: the next frame after the first is the second.
        assert_eq!(intact_frame_after(&seg, HEADER_LEN), Some(second));
        // A flipped byte in the second frame: the third is still found after it.
        let mut flipped = seg.clone();
        flipped[second + 50] ^= 1;
        assert!(matches!(scan_frame(&flipped, second), Scan::Invalid(_)));
        assert_eq!(intact_frame_after(&flipped, second), Some(third));
        // A last record ending in zeros is still found.
        let mut zero_tail = frames(2);
        let last = second;
        let body_end = last + FRAME_HEADER_LEN + 132;
        zero_tail[body_end - 8..body_end].fill(0);
        let covered = zero_tail[last + FRAME_LEN_OFFSET..body_end].to_vec();
        zero_tail[last..last + 4].copy_from_slice(&crc32fast::hash(&covered).to_le_bytes());
        zero_tail[HEADER_LEN + 20] ^= 1;
        assert_eq!(intact_frame_after(&zero_tail, HEADER_LEN), Some(last));
        // The last frame cut short (zeros after its first half): nothing after it.
        let mut torn = seg.clone();
        torn[third + 70..].fill(0);
        assert!(matches!(scan_frame(&torn, third), Scan::Invalid(_)));
        assert_eq!(intact_frame_after(&torn, third), None);
    }

    #[test]
    fn header_constants_match_the_documented_layout() {
        assert_eq!((VERSION_OFFSET, NUMBER_OFFSET, SIZE_OFFSET), (8, 12, 16));
        assert_eq!((HEADER_CRC_OFFSET, HEADER_LEN), (28, 32));
        assert_eq!(
            (FRAME_LEN_OFFSET, FRAME_KIND_OFFSET, FRAME_HEADER_LEN),
            (4, 8, 9)
        );
        assert_eq!(SEAL_FRAME_LEN, 17);
    }

    #[test]
    fn header_round_trips_and_rejects_a_flipped_bit() {
        let h = encode_header(7, 1 << 20);
        assert_eq!(decode_header(&h, 7), Ok(1 << 20));
        assert_eq!(
            decode_header(&h, 8),
            Err("segment number does not match the file name")
        );
        for byte in 0..HEADER_LEN {
            let mut bad = h;
            bad[byte] ^= 0x10;
            assert!(
                decode_header(&bad, 7).is_err(),
                "flip in byte {byte} not detected"
            );
        }
    }

    #[test]
    fn frame_round_trips_and_every_truncation_is_invalid() {
        let mut seg = vec![0u8; 3];
        encode_frame(&mut seg, KIND_V2, &[7u8; 32], b"block bytes");
        let Scan::Frame(f) = scan_frame(&seg, 3) else {
            panic!("frame not found")
        };
        assert_eq!((f.kind, f.body_start, f.end), (KIND_V2, 44, seg.len()));
        assert_eq!(&seg[f.body_start..f.end], b"block bytes");
        for cut in 3 + FRAME_HEADER_LEN..seg.len() {
            assert!(
                matches!(scan_frame(&seg[..cut], 3), Scan::Invalid(_)),
                "cut at {cut}"
            );
        }
        // Trailing zeros after a frame read as the end of the data.
        seg.extend_from_slice(&[0u8; 20]);
        assert!(matches!(scan_frame(&seg, f.end), Scan::End));
    }

    #[test]
    fn unknown_kind_with_intact_checksum_is_unsupported() {
        let mut seg = Vec::new();
        encode_frame(&mut seg, 0x42, &[], b"future");
        assert!(matches!(scan_frame(&seg, 0), Scan::Unsupported(0x42)));
    }
}
