//! The checkpoint: the confirmed milestone a restart starts from (layout in
//! `engine/FORMAT.md`, "Checkpoint"). It names the length of the milestone journal up to that
//! milestone, the log position from which blocks are loaded again, and the log records of
//! the blocks that were stored before that position but not referenced yet. Everything it
//! names (journal entries, block metadata slots) is made durable before it is written, and it
//! replaces the previous one atomically.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use super::{fsync_dir, Cursor, HistoryError};

/// Magic of the checkpoint file.
pub(crate) const MAGIC: [u8; 8] = *b"\x89LCKPT\r\n";
/// Format version. Version 1 (before pruning) has no pruning index and is read as index 0.
pub(crate) const VERSION: u16 = 2;

/// A restart's starting point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checkpoint {
    /// The genesis milestone index of the network (a checkpoint of another genesis is refused).
    pub(crate) genesis_index: u32,
    /// The confirmed milestone index.
    pub(crate) ledger_index: u32,
    /// Blocks referenced since genesis.
    pub(crate) referenced: u64,
    /// The pruning index: nothing of milestones at or below it is served.
    pub(crate) pruning_index: u32,
    /// The log position (`Location::to_u64`) from which every record is loaded again.
    pub(crate) tail: u64,
    /// Log records, before `tail`, of blocks not referenced at `ledger_index`, in log order.
    pub(crate) unreferenced: Vec<u64>,
}

impl Checkpoint {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + self.unreferenced.len() * 8);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&[0; 2]);
        out.extend_from_slice(&self.genesis_index.to_le_bytes());
        out.extend_from_slice(&self.ledger_index.to_le_bytes());
        out.extend_from_slice(&self.referenced.to_le_bytes());
        out.extend_from_slice(&self.pruning_index.to_le_bytes());
        out.extend_from_slice(&self.tail.to_le_bytes());
        let n = u64::try_from(self.unreferenced.len()).unwrap_or(u64::MAX);
        out.extend_from_slice(&n.to_le_bytes());
        for r in &self.unreferenced {
            out.extend_from_slice(&r.to_le_bytes());
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    fn decode(bytes: &[u8]) -> Result<Self, String> {
        let (body, crc) = bytes
            .split_last_chunk::<4>()
            .ok_or("shorter than its checksum")?;
        if crc32fast::hash(body) != u32::from_le_bytes(*crc) {
            return Err("checksum mismatch".into());
        }
        let mut c = Cursor::new(body);
        if c.array::<8>()? != MAGIC {
            return Err("not a checkpoint (magic)".into());
        }
        let version = u16::from_le_bytes(c.array()?);
        if version != 1 && version != VERSION {
            return Err(format!(
                "format version {version}, this node reads 1 to {VERSION}"
            ));
        }
        c.take(2)?;
        let genesis_index = c.u32()?;
        let ledger_index = c.u32()?;
        let referenced = c.u64()?;
        let pruning_index = if version == 1 { 0 } else { c.u32()? };
        let fixed = if version == 1 { 44 } else { 48 };
        let tail = c.u64()?;
        let n = usize::try_from(c.u64()?).map_err(|_| "record count")?;
        if n.checked_mul(8) != Some(body.len().saturating_sub(fixed)) {
            return Err(format!("{n} records do not fill the file"));
        }
        let mut unreferenced = Vec::with_capacity(n);
        for _ in 0..n {
            unreferenced.push(c.u64()?);
        }
        Ok(Self {
            genesis_index,
            ledger_index,
            referenced,
            pruning_index,
            tail,
            unreferenced,
        })
    }

    /// Reads the checkpoint at `path`; `None` when there is none.
    ///
    /// # Errors
    /// I/O failures, or a file that fails its checks ([`HistoryError::Damaged`]).
    pub(crate) fn read(path: &Path) -> Result<Option<Self>, HistoryError> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(HistoryError::io("reading", path, e)),
        };
        Self::decode(&bytes)
            .map(Some)
            .map_err(|why| HistoryError::Damaged {
                path: path.to_path_buf(),
                why,
            })
    }

    /// Writes the checkpoint to `path`, replacing the previous one atomically (temporary
    /// name, fsync, rename, fsync of the directory).
    ///
    /// # Errors
    /// I/O failures; the previous checkpoint is then still in place.
    pub(crate) fn write(&self, path: &Path) -> Result<(), HistoryError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let tmp = path.with_extension("tmp");
        {
            let mut f = File::create(&tmp).map_err(|e| HistoryError::io("creating", &tmp, e))?;
            f.write_all(&self.encode())
                .and_then(|()| f.sync_all())
                .map_err(|e| HistoryError::io("writing", &tmp, e))?;
        }
        super::crash_point("checkpoint-before-rename");
        std::fs::rename(&tmp, path).map_err(|e| HistoryError::io("renaming", &tmp, e))?;
        fsync_dir(dir)
    }

    /// Removes the checkpoint (the next start replays the log), durably.
    ///
    /// # Errors
    /// I/O failures other than the file being absent.
    pub(crate) fn remove(path: &Path) -> Result<(), HistoryError> {
        match std::fs::remove_file(path) {
            Ok(()) => fsync_dir(path.parent().unwrap_or(Path::new("."))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(HistoryError::io("removing", path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_every_flipped_byte_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoint");
        assert_eq!(Checkpoint::read(&path).unwrap(), None);
        let c = Checkpoint {
            genesis_index: 1,
            ledger_index: 42,
            referenced: 1234,
            pruning_index: 17,
            tail: (3 << 32) | 96,
            unreferenced: vec![(2 << 32) | 32, (2 << 32) | 500],
        };
        c.write(&path).unwrap();
        assert_eq!(Checkpoint::read(&path).unwrap(), Some(c));
        let clean = std::fs::read(&path).unwrap();
        for at in 0..clean.len() {
            let mut bytes = clean.clone();
            bytes[at] ^= 0x01;
            std::fs::write(&path, &bytes).unwrap();
            let err = Checkpoint::read(&path).unwrap_err();
            assert!(err.to_string().contains("checkpoint"), "{err}");
        }
    }
}
