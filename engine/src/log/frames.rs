//! Reading record frames out of mapped segment bytes: their parts, unchecked (frames of the
//! active segment, verified when scanned or written) or with their checksum verified (frames
//! of sealed segments, checked on every read since the open does not scan them).

use super::format::{self, Scan, FRAME_KIND_OFFSET, FRAME_LEN_OFFSET, KIND_V2, KIND_V3};
use super::index::Entry;
use super::segment::Segments;
use super::BlockId;

/// The parts of a stored frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parts<'a> {
    pub(crate) kind: u8,
    pub(crate) id: &'a [u8],
    pub(crate) body: &'a [u8],
    /// Offset of `body` inside its segment.
    pub(crate) body_start: usize,
    /// Offset one past the frame inside its segment.
    pub(crate) end: usize,
}

impl Parts<'_> {
    /// Whether this frame holds the record `id`.
    pub(crate) fn is(&self, id: &BlockId) -> bool {
        self.kind == id.kind().byte() && self.id == id.as_bytes()
    }
}

/// Splits the frame at offset `at` of `segment` without checking its checksum.
pub(crate) fn parts_at(segment: &[u8], at: u32) -> Option<Parts<'_>> {
    let at = usize::try_from(at).ok()?;
    let kind = *segment.get(at.checked_add(FRAME_KIND_OFFSET)?)?;
    let len = usize::try_from(format::u32_at(segment, at.checked_add(FRAME_LEN_OFFSET)?)?).ok()?;
    let id_start = at.checked_add(format::FRAME_HEADER_LEN)?;
    let body_start = id_start.checked_add(format::id_len(kind)?)?;
    let end = id_start.checked_add(len)?;
    Some(Parts {
        kind,
        id: segment.get(id_start..body_start)?,
        body: segment.get(body_start..end)?,
        body_start,
        end,
    })
}

/// Splits the block record at offset `at` of `segment` after verifying its checksum, or
/// says why it is not an intact block record.
pub(crate) fn verified_at(segment: &[u8], at: u32) -> Result<Parts<'_>, &'static str> {
    let start = usize::try_from(at).map_err(|_| "offset")?;
    match format::scan_frame(segment, start) {
        Scan::Frame(f) if matches!(f.kind, KIND_V2 | KIND_V3) => {
            parts_at(segment, at).ok_or("frame out of bounds")
        }
        Scan::Frame(_) => Err("not a block record"),
        Scan::Invalid(why) => Err(why),
        Scan::End => Err("no frame"),
        Scan::Unsupported(_) => Err("unsupported record kind"),
    }
}

/// Splits the frame at `e` without checking its checksum.
pub(crate) fn parts(segments: &Segments, e: Entry) -> Option<Parts<'_>> {
    parts_at(segments.get(e.segment)?.bytes(), e.offset)
}

/// Id of the record at `e`.
pub(crate) fn id_at(segments: &Segments, e: Entry) -> Option<BlockId> {
    let p = parts(segments, e)?;
    BlockId::from_parts(p.kind, p.id)
}
