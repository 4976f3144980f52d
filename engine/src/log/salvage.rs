//! Salvage: copies every intact record of a damaged log into a new log, for an operator whose
//! node refused to start on corruption (`ledger-node tools salvage`, engine/FORMAT.md). The
//! damaged log is only read.

use std::{fs, path::Path};

use super::{
    format::{self, Scan, HEADER_LEN, KIND_SEAL, KIND_V2, KIND_V3},
    segment::Segment,
    BlockId, Log, LogConfig, LogError,
};

/// What a salvage copied and what it left behind.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SalvageReport {
    /// Records copied.
    pub records: u64,
    /// Damaged ranges skipped: (segment, first offset, offset of the next intact record or
    /// of the end of the data).
    pub skipped: Vec<(u32, u64, u64)>,
}

/// Copies the intact records of the log in `from`, in order, into a new log in `into` (which
/// must not exist yet or be empty). `from` is never written.
///
/// # Errors
/// `into` is not empty, I/O failures, records of an unknown kind.
pub fn salvage(from: &Path, into: &Path) -> Result<SalvageReport, LogError> {
    if fs::read_dir(into).is_ok_and(|mut d| d.next().is_some()) {
        return Err(LogError::Config(
            "the salvage target directory is not empty",
        ));
    }
    let mut numbers: Vec<u32> = fs::read_dir(from)
        .map_err(|e| LogError::io("list", from, e))?
        .filter_map(|e| e.ok()?.file_name().to_str().and_then(Segment::parse_name))
        .collect();
    numbers.sort_unstable();
    // Retired segments hold nothing to keep (their bytes may already read as zeros).
    let first = super::retire::read_first(from).unwrap_or(0);
    numbers.retain(|&n| n >= first);
    let target = Log::open(into, LogConfig::default())?;
    let mut report = SalvageReport::default();
    for n in numbers {
        let seg = Segment::open(from, n)?;
        let bytes = seg.allocated(HEADER_LEN);
        let mut at = HEADER_LEN;
        loop {
            match format::scan_frame(bytes, at) {
                Scan::Frame(f) if f.kind == KIND_SEAL => break,
                Scan::Frame(f) => {
                    let id_bytes = bytes.get(at + format::FRAME_HEADER_LEN..f.body_start);
                    let id = match (f.kind, id_bytes) {
                        (KIND_V2, Some(b)) => b.try_into().ok().map(BlockId::V2),
                        (KIND_V3, Some(b)) => b.try_into().ok().map(BlockId::V3),
                        _ => None,
                    };
                    if let (Some(id), Some(body)) = (id, bytes.get(f.body_start..f.end)) {
                        if target.append(&id, body)?.inserted {
                            report.records += 1;
                        }
                    }
                    at = f.end;
                }
                Scan::Unsupported(kind) => {
                    return Err(LogError::UnsupportedRecord {
                        segment: n,
                        offset: at as u64,
                        kind,
                    })
                }
                Scan::End | Scan::Invalid(_) => match format::intact_frame_after(bytes, at) {
                    Some(next) => {
                        report.skipped.push((n, at as u64, next as u64));
                        at = next;
                    }
                    None => {
                        let end = format::data_end(bytes).max(at);
                        if end > at {
                            report.skipped.push((n, at as u64, end as u64));
                        }
                        break;
                    }
                },
            }
        }
    }
    target.sync()?;
    Ok(report)
}
