//! The ledger checkpoint (`history/ledger.checkpoint`, layout in `engine/FORMAT.md`, "Ledger
//! checkpoint"): the unspent outputs at a confirmed milestone L, so that a restart books them
//! and applies only the journal entries after L instead of every entry since the ledger's
//! start (issue 24: "restart opens, it does not rebuild"). The rich list and the indexer are
//! derived from the same outputs; the spent rows are in `spent.redb` and the milestones in
//! the journal.
//!
//! Rows name where each output's bytes are (a log record, or the ledger base's blob), so the
//! file is about 132 bytes per unspent output, and it is only valid against the ledger base it
//! was written with: its base index is checked on opening.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::{fixed_owner, fsync_dir, loc_bytes, Cursor, HistoryError};
use crate::snapshot::AtomicFile;
use crate::utxo::NewOutput;

/// The file's name in the history directory.
pub(crate) const FILE: &str = "ledger.checkpoint";
/// Magic of the file.
const MAGIC: [u8; 8] = *b"\x89LLEDG\r\n";
/// Format version.
const VERSION: u16 = 1;
/// Bytes of the header, its checksum included.
const HEADER_LEN: usize = 36;
/// Bytes of one row.
const ROW_LEN: usize = 34 + 32 + 8 + 1 + 33 + 4 + 4 + 8 + 4 + 4;

/// An unspent output with its booking milestone and timestamp.
pub(crate) type BookedOutput = (NewOutput, u32, u32);

/// What the header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LedgerHeader {
    /// The network's genesis milestone index.
    pub(crate) genesis_index: u32,
    /// The index of the ledger base the rows' bytes refer to (the genesis's before any).
    pub(crate) base_index: u32,
    /// The confirmed milestone the rows are the unspent outputs at.
    pub(crate) ledger_index: u32,
}

/// A ledger checkpoint read back.
#[derive(Debug)]
pub(crate) struct LedgerCheckpoint {
    pub(crate) header: LedgerHeader,
    pub(crate) outputs: Vec<BookedOutput>,
}

fn damaged(path: &Path, why: impl Into<String>) -> HistoryError {
    HistoryError::Damaged {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

fn encode_row(out: &mut [u8; ROW_LEN], (o, booked_index, booked_ts): (&NewOutput, u32, u32)) {
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        out[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    put(&o.output_id);
    put(&o.block_id);
    put(&o.amount.to_le_bytes());
    put(&fixed_owner(o.owner.as_ref()));
    put(&booked_index.to_le_bytes());
    put(&booked_ts.to_le_bytes());
    put(&loc_bytes(o.loc));
}

fn decode_row(bytes: &[u8]) -> Result<BookedOutput, String> {
    let mut c = Cursor::new(bytes);
    let output_id = c.array()?;
    let block_id = c.array()?;
    let amount = c.u64()?;
    let owner = c.fixed_owner()?;
    let booked_index = c.u32()?;
    let booked_ts = c.u32()?;
    let loc = c.bytes_loc()?;
    Ok((
        NewOutput {
            output_id,
            block_id,
            amount,
            owner,
            loc,
        },
        booked_index,
        booked_ts,
    ))
}

fn encode_header(h: &LedgerHeader, rows: u64) -> [u8; HEADER_LEN] {
    let mut b = [0u8; HEADER_LEN];
    b[0..8].copy_from_slice(&MAGIC);
    b[8..10].copy_from_slice(&VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&h.genesis_index.to_le_bytes());
    b[16..20].copy_from_slice(&h.base_index.to_le_bytes());
    b[20..24].copy_from_slice(&h.ledger_index.to_le_bytes());
    b[24..32].copy_from_slice(&rows.to_le_bytes());
    let crc = crc32fast::hash(&b[0..32]);
    b[32..36].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Writes a ledger checkpoint at `dir/ledger.checkpoint`: the rows go to its temporary file
/// through a buffer (the caller may hold a lock meanwhile: nothing is fsynced here); the
/// returned [`PendingLedger`] makes it durable and puts it in place.
///
/// # Errors
/// I/O failures, or fewer or more rows than `count` (the temporary file is then removed).
pub(crate) fn write_rows(
    dir: &Path,
    header: &LedgerHeader,
    count: usize,
    rows: impl Iterator<Item = BookedOutput>,
) -> Result<PendingLedger, HistoryError> {
    let failed = |e| HistoryError::Write(Box::new(e));
    let mut file = AtomicFile::create(&dir.join(FILE)).map_err(failed)?;
    let n = u64::try_from(count).unwrap_or(u64::MAX);
    file.write(&encode_header(header, n)).map_err(failed)?;
    let mut crc = crc32fast::Hasher::new();
    let mut row = [0u8; ROW_LEN];
    let mut written = 0usize;
    for (o, booked_index, booked_ts) in rows {
        encode_row(&mut row, (&o, booked_index, booked_ts));
        crc.update(&row);
        file.write(&row).map_err(failed)?;
        written += 1;
    }
    if written != count {
        return Err(failed(
            file.fail(format!("{written} rows given, {count} announced")),
        ));
    }
    file.write(&crc.finalize().to_le_bytes()).map_err(failed)?;
    Ok(PendingLedger(file))
}

/// A ledger checkpoint written but not yet durable nor in place (see [`write_rows`]); dropped
/// uncommitted, its temporary file is removed.
pub(crate) struct PendingLedger(AtomicFile);

impl PendingLedger {
    /// The file's size.
    pub(crate) fn bytes(&self) -> u64 {
        self.0.position()
    }

    /// Fsyncs the file, renames it over the previous checkpoint and fsyncs the directory.
    ///
    /// # Errors
    /// I/O failures; the previous file is then still in place.
    pub(crate) fn commit(self) -> Result<(), HistoryError> {
        super::crash_point("ledger-checkpoint-before-rename");
        self.0
            .commit()
            .map(|_| ())
            .map_err(|e| HistoryError::Write(Box::new(e)))
    }
}

/// Reads the ledger checkpoint in `dir`; `None` when there is none.
///
/// # Errors
/// I/O failures, or a file that fails its checks ([`HistoryError::Damaged`], naming it).
pub(crate) fn read(dir: &Path) -> Result<Option<LedgerCheckpoint>, HistoryError> {
    let path = dir.join(FILE);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(HistoryError::io("opening", &path, e)),
    };
    let len = file
        .metadata()
        .map_err(|e| HistoryError::io("reading", &path, e))?
        .len();
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut head = [0u8; HEADER_LEN];
    r.read_exact(&mut head)
        .map_err(|_| damaged(&path, "shorter than its header"))?;
    let mut c = Cursor::new(&head);
    let ok = c.array::<8>().ok() == Some(MAGIC)
        && crc32fast::hash(&head[0..32]).to_le_bytes() == head[32..36];
    if !ok {
        return Err(damaged(&path, "header (magic or checksum) does not match"));
    }
    let version = u16::from_le_bytes([head[8], head[9]]);
    if version != VERSION {
        return Err(damaged(
            &path,
            format!("format version {version}, this node reads {VERSION}"),
        ));
    }
    let field =
        |at: usize| u32::from_le_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    let header = LedgerHeader {
        genesis_index: field(12),
        base_index: field(16),
        ledger_index: field(20),
    };
    let n = u64::from_le_bytes(head[24..32].try_into().unwrap_or([0; 8]));
    let expected = n
        .checked_mul(ROW_LEN as u64)
        .and_then(|b| b.checked_add(HEADER_LEN as u64 + 4));
    if expected != Some(len) {
        return Err(damaged(
            &path,
            format!("{len} bytes do not hold the {n} rows its header names"),
        ));
    }
    let mut outputs = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
    let mut crc = crc32fast::Hasher::new();
    let mut row = [0u8; ROW_LEN];
    for i in 0..n {
        r.read_exact(&mut row)
            .map_err(|e| HistoryError::io("reading", &path, e))?;
        crc.update(&row);
        outputs.push(decode_row(&row).map_err(|why| damaged(&path, format!("row {i}: {why}")))?);
    }
    let mut stored = [0u8; 4];
    r.read_exact(&mut stored)
        .map_err(|e| HistoryError::io("reading", &path, e))?;
    if crc.finalize().to_le_bytes() != stored {
        return Err(damaged(&path, "the rows fail their checksum"));
    }
    Ok(Some(LedgerCheckpoint { header, outputs }))
}

/// Removes the ledger checkpoint (a replay makes a new one), durably.
///
/// # Errors
/// I/O failures other than the file being absent.
pub(crate) fn remove(dir: &Path) -> Result<(), HistoryError> {
    let path = dir.join(FILE);
    match std::fs::remove_file(&path) {
        Ok(()) => fsync_dir(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(HistoryError::io("removing", &path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utxo::BytesLoc;

    fn output(i: u8, owned: bool) -> BookedOutput {
        let mut id = [i; 34];
        id[33] = 0;
        (
            NewOutput {
                output_id: id,
                block_id: [i.wrapping_add(1); 32],
                amount: 1_000 * u64::from(i),
                owner: owned.then_some([i; 33]),
                loc: BytesLoc {
                    record: u64::from(i) << 32 | 40,
                    offset: u32::from(i),
                    len: 50,
                },
            },
            u32::from(i),
            100 + u32::from(i),
        )
    }

    #[test]
    fn round_trips_and_every_flipped_byte_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(dir.path()).unwrap().is_none());
        let header = LedgerHeader {
            genesis_index: 0,
            base_index: 0,
            ledger_index: 9,
        };
        let outputs: Vec<BookedOutput> = (1..=3).map(|i| output(i, i != 2)).collect();
        let pending = write_rows(dir.path(), &header, 3, outputs.iter().cloned()).unwrap();
        assert_eq!(pending.bytes(), (HEADER_LEN + 3 * ROW_LEN + 4) as u64);
        pending.commit().unwrap();
        // A count that does not match the rows is an error, and the file in place stays.
        assert!(write_rows(dir.path(), &header, 4, outputs.iter().cloned()).is_err());
        let back = read(dir.path()).unwrap().unwrap();
        assert_eq!(back.header, header);
        assert_eq!(back.outputs, outputs);
        let path = dir.path().join(FILE);
        let clean = std::fs::read(&path).unwrap();
        for at in 0..clean.len() {
            let mut bytes = clean.clone();
            bytes[at] ^= 0x01;
            std::fs::write(&path, &bytes).unwrap();
            let err = read(dir.path()).unwrap_err();
            assert!(
                matches!(err, HistoryError::Damaged { .. }) && err.to_string().contains(FILE),
                "byte {at}: {err}"
            );
        }
        std::fs::write(&path, &clean[..clean.len() - 1]).unwrap();
        assert!(read(dir.path()).is_err());
        remove(dir.path()).unwrap();
        assert!(read(dir.path()).unwrap().is_none());
    }
}
