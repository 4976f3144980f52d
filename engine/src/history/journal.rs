//! The milestone journal: per confirmed milestone, in index order, what it changed in the
//! ledger (created outputs with where their bytes are, consumed outputs with the spending
//! transaction, rich-list balance changes) and the milestone's identity. A restart applies it
//! up to its checkpoint instead of walking every block again (layout in `engine/FORMAT.md`,
//! "Milestone journal").
//!
//! Appended with `pwrite` when a milestone is confirmed; made durable (`fdatasync`) before a
//! checkpoint names an index. Each entry is framed with its length and a CRC-32; the first
//! frame that is cut short or fails its checksum ends the journal (the entries after a
//! checkpoint's index are made again anyway).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::tangle::BlockId;
use crate::utxo::{AddressBytes, NewOutput, OutputId};

use super::entry_offsets::{EntryOffsets, RangePositions};
use super::milestone_index::MilestoneIndex;
use super::{fsync_dir, Cursor, HistoryError};

/// Magic of the journal file.
pub(crate) const MAGIC: [u8; 8] = *b"\x89LJRNL\r\n";
/// Format version.
pub(crate) const VERSION: u16 = 1;
/// Header length; entries follow.
pub(crate) const HEADER_LEN: u64 = 32;
/// Frame header: CRC-32 of the body, then the body's length.
const FRAME_HEADER_LEN: usize = 8;
/// Bytes of an entry's head: index, timestamp, milestone id, milestone block id.
const HEAD_LEN: usize = 4 + 4 + 32 + 32;

/// One confirmed milestone as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JournalEntry {
    pub(crate) index: u32,
    pub(crate) timestamp: u32,
    pub(crate) milestone_id: [u8; 32],
    pub(crate) block_id: BlockId,
    /// Blocks the milestone referenced.
    pub(crate) referenced: u32,
    pub(crate) created: Vec<NewOutput>,
    pub(crate) consumed: Vec<(OutputId, [u8; 32])>,
    pub(crate) balance_changes: Vec<(AddressBytes, i128)>,
}

fn len_u32(n: usize) -> [u8; 4] {
    u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes()
}

impl JournalEntry {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.index.to_le_bytes());
        out.extend_from_slice(&self.timestamp.to_le_bytes());
        out.extend_from_slice(&self.milestone_id);
        out.extend_from_slice(&self.block_id);
        out.extend_from_slice(&self.referenced.to_le_bytes());
        out.extend_from_slice(&len_u32(self.created.len()));
        for o in &self.created {
            out.extend_from_slice(&o.output_id);
            out.extend_from_slice(&o.block_id);
            out.extend_from_slice(&o.amount.to_le_bytes());
            match &o.owner {
                Some(a) => {
                    out.push(1);
                    out.extend_from_slice(a);
                }
                None => out.push(0),
            }
            out.extend_from_slice(&o.loc.record.to_le_bytes());
            out.extend_from_slice(&o.loc.offset.to_le_bytes());
            out.extend_from_slice(&o.loc.len.to_le_bytes());
        }
        out.extend_from_slice(&len_u32(self.consumed.len()));
        for (id, tx) in &self.consumed {
            out.extend_from_slice(id);
            out.extend_from_slice(tx);
        }
        out.extend_from_slice(&len_u32(self.balance_changes.len()));
        for (a, delta) in &self.balance_changes {
            out.extend_from_slice(a);
            out.extend_from_slice(&delta.to_le_bytes());
        }
    }

    fn decode(body: &[u8]) -> Result<Self, String> {
        let mut c = Cursor::new(body);
        let index = c.u32()?;
        let timestamp = c.u32()?;
        let milestone_id = c.array()?;
        let block_id = c.array()?;
        let referenced = c.u32()?;
        let n = c.u32()? as usize;
        // Each count is bounded by the bytes left, so a damaged count allocates nothing big.
        let mut created = Vec::with_capacity(n.min(body.len() / 100));
        for _ in 0..n {
            created.push(created_output(&mut c)?);
        }
        let n = c.u32()? as usize;
        let mut consumed = Vec::with_capacity(n.min(body.len() / 66));
        for _ in 0..n {
            consumed.push((c.array()?, c.array()?));
        }
        let balance_changes = balance_changes(&mut c, body.len())?;
        Ok(Self {
            index,
            timestamp,
            milestone_id,
            block_id,
            referenced,
            created,
            consumed,
            balance_changes,
        })
    }

    /// The entry, checked to be milestone `index`'s.
    fn decode_as(body: &[u8], index: u32) -> Result<Self, String> {
        let entry = Self::decode(body)?;
        if entry.index == index {
            Ok(entry)
        } else {
            Err(format!("is milestone {}, expected {index}", entry.index))
        }
    }

    /// The identity of the milestone of the entry (its first fields), checked to be `index`.
    fn decode_head(body: &[u8], index: u32) -> Result<EntryHead, String> {
        let mut c = Cursor::new(body);
        let got = c.u32()?;
        if got != index {
            return Err(format!("is milestone {got}, expected {index}"));
        }
        Ok(EntryHead {
            timestamp: c.u32()?,
            milestone_id: c.array()?,
            block_id: c.array()?,
        })
    }

    /// The balance changes of the entry of milestone `index` only (the rich list at an older
    /// index): the other sections are walked over, not collected.
    fn decode_balance_changes(body: &[u8], index: u32) -> Result<BalanceChanges, String> {
        let mut c = Cursor::new(body);
        let got = c.u32()?;
        if got != index {
            return Err(format!("is milestone {got}, expected {index}"));
        }
        // Timestamp, milestone id, block id, blocks referenced.
        c.take(4 + 32 + 32 + 4)?;
        for _ in 0..c.u32()? {
            created_output(&mut c)?;
        }
        let consumed = c.u32()? as usize;
        c.take(consumed.checked_mul(34 + 32).ok_or("consumed count")?)?;
        balance_changes(&mut c, body.len())
    }
}

/// The milestone an entry is about: what the node serves of a confirmed milestone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EntryHead {
    pub(crate) timestamp: u32,
    pub(crate) milestone_id: [u8; 32],
    pub(crate) block_id: BlockId,
}

/// Balance changes per address, as an entry holds them.
pub(crate) type BalanceChanges = Vec<(AddressBytes, i128)>;

/// One created output of an entry.
fn created_output(c: &mut Cursor<'_>) -> Result<NewOutput, String> {
    let output_id = c.array()?;
    let block_id = c.array()?;
    let amount = c.u64()?;
    let owner = match c.u8()? {
        0 => None,
        1 => Some(c.array()?),
        other => return Err(format!("owner flag {other}")),
    };
    let loc = c.bytes_loc()?;
    Ok(NewOutput {
        output_id,
        block_id,
        amount,
        owner,
        loc,
    })
}

/// The last section of an entry (of `body_len` bytes), which must end it.
fn balance_changes(c: &mut Cursor<'_>, body_len: usize) -> Result<BalanceChanges, String> {
    let n = c.u32()? as usize;
    let mut changes = Vec::with_capacity(n.min(body_len / 49));
    for _ in 0..n {
        changes.push((c.array()?, c.i128()?));
    }
    if !c.is_empty() {
        return Err("trailing bytes".into());
    }
    Ok(changes)
}

fn header(first_index: u32) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&first_index.to_le_bytes());
    let crc = crc32fast::hash(&h[0..28]);
    h[28..32].copy_from_slice(&crc.to_le_bytes());
    h
}

/// The journal file, open for appends.
#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
    file: File,
    /// Where the next entry goes.
    end: u64,
    /// The index the next entry must have.
    next_index: u32,
    /// The index of the first entry.
    first_index: u32,
    /// Where each entry starts and whose milestone it is: in the milestone index, the entries
    /// since its last commit in memory.
    offsets: EntryOffsets,
    buf: Vec<u8>,
}

/// A journal as [`Journal::open_upto`] opened it.
#[derive(Debug)]
pub(crate) struct OpenedJournal {
    pub(crate) journal: Journal,
    /// The head of milestone `upto`'s entry (`None` when `upto` is below `from`).
    pub(crate) last: Option<EntryHead>,
    /// How many entries were framed or read (those the milestone index did not cover).
    pub(crate) framed: u32,
}

impl Journal {
    /// Creates an empty journal whose first entry will be milestone `first_index`, replacing
    /// any file at `path` (crash-safely: temporary name, fsync, rename, fsync of the directory),
    /// and empties the milestone `index` of the journal it replaces.
    pub(crate) fn create(
        path: &Path,
        first_index: u32,
        index: Arc<MilestoneIndex>,
    ) -> Result<Self, HistoryError> {
        index.clear()?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let tmp = path.with_extension("journal.tmp");
        {
            let mut f = File::create(&tmp).map_err(|e| HistoryError::io("creating", &tmp, e))?;
            f.write_all(&header(first_index))
                .and_then(|()| f.sync_all())
                .map_err(|e| HistoryError::io("writing", &tmp, e))?;
        }
        std::fs::rename(&tmp, path).map_err(|e| HistoryError::io("renaming", &tmp, e))?;
        fsync_dir(dir)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| HistoryError::io("opening", path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            end: HEADER_LEN,
            next_index: first_index,
            first_index,
            offsets: EntryOffsets::new(index, 0, first_index),
            buf: Vec::new(),
        })
    }

    /// Opens the journal and checks its entries up to milestone `upto`, which must all be
    /// there, contiguous from `first_index`; the file is cut after them (later entries are
    /// made again by the confirmations that follow). The entries are read one at a time and
    /// not kept ([`Journal::replay`] reads them again to apply them): memory does not grow
    /// with the journal. Entries up to `heads_upto` (those a ledger checkpoint covers: never
    /// applied again) are only framed and their heads read, their bodies skipped (every later
    /// read of one checks its checksum); later ones are checked whole. Entries the milestone
    /// `index` already holds, up to `heads_upto`, are not even framed: the open starts after
    /// the last of them, once that row is checked against the entry it names (a row that does
    /// not match is logged, and the index emptied and filled again from the journal).
    ///
    /// # Errors
    /// I/O failures, or a journal that does not hold every entry up to `upto` intact
    /// ([`HistoryError::Damaged`], naming the file).
    pub(crate) fn open_upto(
        path: &Path,
        index: Arc<MilestoneIndex>,
        (from, heads_upto, upto): (u32, u32, u32),
    ) -> Result<OpenedJournal, HistoryError> {
        let damaged = |why: String| damaged(path, why);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| HistoryError::io("opening", path, e))?;
        let mut h = [0u8; HEADER_LEN as usize];
        match file.read_exact_at(&mut h, 0) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(damaged("shorter than its header".into()));
            }
            Err(e) => return Err(HistoryError::io("reading", path, e)),
        }
        // A journal may start before `from`: its rewrite after a new ledger base
        // (`Journal::begin_rewrite`) did not happen before a crash. Those entries are skipped.
        let first_index = h
            .get(12..16)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
            .filter(|&f| h == header(f))
            .ok_or_else(|| damaged("header (magic, version or checksum) does not match".into()))?;
        if first_index > from {
            return Err(damaged(format!(
                "starts at milestone {first_index}, but the ledger needs it from {from}"
            )));
        }
        let reading = file
            .try_clone()
            .map_err(|e| HistoryError::io("opening", path, e))?;
        let (mut offsets, start) =
            start_point(&file, path, index, first_index, (heads_upto, upto))?;
        let stored_through = offsets.tail_first().saturating_sub(1);
        let mut frames = FrameReader::new(reading, path, start.map_or(HEADER_LEN, |s| s.1));
        let mut last = None;
        let mut next = first_index;
        if let Some((skip_to, _)) = start {
            // The last entry that needs neither framing nor reading: its head, and the frames
            // after it.
            last = Some(frames.next_head(skip_to)?);
            next = skip_to + 1;
        }
        let mut framed = 0;
        while next <= upto {
            let at = frames.at;
            let head = if next <= heads_upto {
                frames.next_head(next)?
            } else {
                let e = frames.next_entry(next)?;
                EntryHead {
                    timestamp: e.timestamp,
                    milestone_id: e.milestone_id,
                    block_id: e.block_id,
                }
            };
            if next > stored_through {
                offsets.push(next, at, head.milestone_id);
            }
            last = Some(head);
            framed += 1;
            next += 1;
        }
        let last = last.filter(|_| upto >= from && upto >= first_index);
        let end = frames.at;
        // Skipped bodies were not read: the last one must still end inside the file.
        let len = file
            .metadata()
            .map_err(|e| HistoryError::io("reading", path, e))?
            .len();
        if end > len {
            return Err(damaged(format!(
                "ends at {len}, inside the entry of milestone {upto}"
            )));
        }
        file.set_len(end)
            .and_then(|()| file.sync_data())
            .map_err(|e| HistoryError::io("truncating", path, e))?;
        Ok(OpenedJournal {
            journal: Self {
                path: path.to_path_buf(),
                file,
                end,
                next_index: next,
                first_index,
                offsets,
                buf: Vec::new(),
            },
            last,
            framed,
        })
    }

    /// The entries of milestones `from` to the last, read again one at a time (buffered),
    /// each checked as [`Journal::open_upto`] checks it.
    ///
    /// # Errors
    /// The file handle could not be made, or the milestone index cannot be read.
    pub(crate) fn replay(&self, from: u32) -> Result<ReplayEntries, HistoryError> {
        let from = from.max(self.first_index);
        let at = self.position(from)?.unwrap_or(self.end);
        let file = self
            .file
            .try_clone()
            .map_err(|e| HistoryError::io("opening", &self.path, e))?;
        Ok(ReplayEntries {
            frames: FrameReader::new(file, &self.path, at),
            next: from,
            next_index: self.next_index,
        })
    }

    /// Begins replacing the journal by one that starts at milestone `first` (a new ledger
    /// base at `first` − 1 made the entries before it unneeded): [`Rewrite::copy`] copies the
    /// kept entries to a temporary file and fsyncs it without holding the journal, then
    /// [`Journal::finish_rewrite`] adds what was appended meanwhile and renames the file over
    /// the journal. A crash leaves the old journal or the new one, both usable
    /// ([`Journal::open_upto`] skips entries before the base).
    ///
    /// Returns what the rewrite copies, with a handle of its own on the journal file;
    /// `None` when the journal starts at `first` or later already.
    ///
    /// # Errors
    /// The handle could not be made, or the milestone index cannot be read.
    pub(crate) fn begin_rewrite(&self, first: u32) -> Result<Option<Rewrite>, HistoryError> {
        if first <= self.first_index {
            return Ok(None);
        }
        let start = self.position(first)?.unwrap_or(self.end);
        let source = self
            .file
            .try_clone()
            .map_err(|e| HistoryError::io("opening", &self.path, e))?;
        Ok(Some(Rewrite {
            first,
            from_first_index: self.first_index,
            start,
            copied_to: start,
            end: self.end,
            source,
            tmp_path: self.path.with_extension("journal.tmp"),
            tmp: None,
        }))
    }

    /// Ends `rewrite` (begun on this journal, its copy done): the entries appended since are
    /// copied too, the temporary file is fsynced and renamed over the journal, and the journal
    /// continues in it.
    ///
    /// # Errors
    /// I/O failures, or a rewrite begun on another state of the journal; the journal is then
    /// unchanged.
    pub(crate) fn finish_rewrite(&mut self, mut rewrite: Rewrite) -> Result<(), HistoryError> {
        if rewrite.from_first_index != self.first_index || rewrite.tmp.is_none() {
            return Err(HistoryError::io(
                "rewriting",
                &self.path,
                std::io::Error::other("the rewrite does not belong to this journal"),
            ));
        }
        rewrite.copy_upto(self.end)?;
        let Rewrite {
            first,
            start,
            tmp_path,
            tmp,
            ..
        } = rewrite;
        tmp.map(|f| f.sync_all())
            .transpose()
            .map_err(|e| HistoryError::io("writing", &tmp_path, e))?;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::rename(&tmp_path, &self.path)
            .map_err(|e| HistoryError::io("renaming", &tmp_path, e))?;
        fsync_dir(dir)?;
        self.file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(|e| HistoryError::io("opening", &self.path, e))?;
        let shift = start - HEADER_LEN;
        self.offsets.rewritten(shift);
        self.end -= shift;
        self.first_index = first;
        self.next_index = self.next_index.max(first);
        Ok(())
    }

    /// Appends the entry of the next milestone (`pwrite`; durable after [`Self::sync`]).
    ///
    /// # Errors
    /// An entry out of order, or a failed write.
    pub(crate) fn append(&mut self, e: &JournalEntry) -> Result<(), HistoryError> {
        if e.index != self.next_index {
            return Err(damaged(
                &self.path,
                format!(
                    "milestone {} appended where {} belongs",
                    e.index, self.next_index
                ),
            ));
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.extend_from_slice(&[0; FRAME_HEADER_LEN]);
        e.encode(&mut buf);
        let len = buf.len() - FRAME_HEADER_LEN;
        let crc = crc32fast::hash(&buf[FRAME_HEADER_LEN..]);
        buf[0..4].copy_from_slice(&crc.to_le_bytes());
        buf[4..8].copy_from_slice(&len_u32(len));
        if std::env::var_os("LEDGER_NODE_CRASH_AT").is_some() {
            // Half an entry reaches the file, then the process ends (when this point is armed).
            let half = buf.get(..buf.len() / 2).unwrap_or_default();
            if self.file.write_all_at(half, self.end).is_ok() {
                super::crash_point("journal-half-written");
            }
        }
        let written = self.file.write_all_at(&buf, self.end);
        let frame = buf.len() as u64;
        self.buf = buf;
        written.map_err(|e| HistoryError::io("writing", &self.path, e))?;
        self.offsets.push(e.index, self.end, e.milestone_id);
        self.end += frame;
        self.next_index += 1;
        Ok(())
    }

    /// The entry of milestone `index`, read back from the file; `None` for an index the
    /// journal does not hold.
    ///
    /// # Errors
    /// A failed read, or an entry that fails its checksum or does not decode (naming the file).
    pub(crate) fn read_entry(&self, index: u32) -> Result<Option<JournalEntry>, HistoryError> {
        self.entries().read(index)
    }

    /// The balance changes of milestone `index` (the rest of its entry walked over); `None`
    /// for an index the journal does not hold.
    ///
    /// # Errors
    /// As [`Journal::read_entry`].
    pub(crate) fn read_balance_changes(
        &self,
        index: u32,
    ) -> Result<Option<BalanceChanges>, HistoryError> {
        self.entries().balance_changes(index)
    }

    /// The identity of milestone `index` (its entry checked whole, the rest not decoded);
    /// `None` for an index the journal does not hold.
    ///
    /// # Errors
    /// As [`Journal::read_entry`].
    pub(crate) fn read_head(&self, index: u32) -> Result<Option<EntryHead>, HistoryError> {
        self.entries().head(index)
    }

    fn entries(&self) -> Entries<'_> {
        Entries {
            file: &self.file,
            path: &self.path,
            positions: Positions::Journal(&self.offsets, self.first_index),
            end: self.end,
        }
    }

    /// Where milestone `index`'s entry starts in the file; `None` when not held.
    fn position(&self, index: u32) -> Result<Option<u64>, HistoryError> {
        self.offsets.position(index, self.first_index)
    }

    /// The index and identity of the milestone whose id is `id` (the entry found through the
    /// milestone index; the caller compares the entry's id with `id`); `None` when not held.
    ///
    /// # Errors
    /// The milestone index cannot be read, or the entry fails its checks.
    pub(crate) fn head_by_id(
        &self,
        id: &[u8; 32],
    ) -> Result<Option<(u32, EntryHead)>, HistoryError> {
        let Some((index, at)) = self.offsets.find(id, self.first_index)? else {
            return Ok(None);
        };
        if !(self.first_index..self.next_index).contains(&index) {
            return Ok(None);
        }
        let head = read_frame(&self.file, &self.path, (at, self.end), index, |body| {
            JournalEntry::decode_head(body, index)
        })?;
        Ok(Some((index, head)))
    }

    /// The milestone index the entries' rows are stored in.
    pub(crate) fn milestone_index(&self) -> &Arc<MilestoneIndex> {
        self.offsets.store()
    }

    /// The rows held in memory of milestones at or below `through`, and the journal's first
    /// index (rows below it are no longer needed): what the next commit of the milestone
    /// index stores ([`MilestoneIndex::store`], outside the state lock), after which
    /// [`Journal::index_stored`] lets them go.
    pub(crate) fn index_rows(&self, through: u32) -> (Vec<super::IndexRow>, u32) {
        (self.offsets.rows_through(through), self.first_index)
    }

    /// How many milestones' rows are held in memory.
    pub(crate) fn index_rows_held(&self) -> usize {
        self.offsets.tail_len()
    }

    /// The rows of milestones at or below `through` are stored in the milestone index.
    pub(crate) fn index_stored(&mut self, through: u32) {
        self.offsets.stored_through(through);
    }

    /// A reader of the entries of milestones `from..=upto` (those the journal holds) that
    /// needs no access to the journal while it reads: entries once written never change,
    /// and a rewrite replaces the file by name while the reader keeps the one it opened.
    ///
    /// # Errors
    /// The file handle could not be made, or the milestone index cannot be read.
    pub(crate) fn reader(&self, from: u32, upto: u32) -> Result<EntryReader, HistoryError> {
        let from = from.max(self.first_index);
        let upto = upto.min(self.last_index());
        let positions = self.offsets.range(from, upto)?;
        let file = self
            .file
            .try_clone()
            .map_err(|e| HistoryError::io("opening", &self.path, e))?;
        Ok(EntryReader {
            path: self.path.clone(),
            file,
            positions,
            end: self.end,
        })
    }

    /// A handle that makes every entry appended so far durable when synced.
    pub(crate) fn file_to_sync(&self) -> Result<super::SyncHandle, HistoryError> {
        let file = self
            .file
            .try_clone()
            .map_err(|e| HistoryError::io("opening", &self.path, e))?;
        Ok(super::SyncHandle {
            path: self.path.clone(),
            file,
        })
    }

    /// The journal's length in bytes.
    pub(crate) fn len_bytes(&self) -> u64 {
        self.end
    }

    /// Where the entry after milestone `index`'s starts (the journal's length after it was
    /// appended); the start of the first entry for an index before it.
    ///
    /// # Errors
    /// The milestone index cannot be read.
    pub(crate) fn end_of(&self, index: u32) -> Result<u64, HistoryError> {
        let next = index.saturating_add(1).max(self.first_index);
        Ok(self.position(next)?.unwrap_or(self.end))
    }

    /// The index of the last entry (the one before the first entry's index when empty).
    pub(crate) fn last_index(&self) -> u32 {
        self.next_index.saturating_sub(1)
    }
}

/// Entries of a range of milestones, read without the journal (see [`Journal::reader`]).
#[derive(Debug)]
pub(crate) struct EntryReader {
    path: PathBuf,
    file: File,
    positions: RangePositions,
    end: u64,
}

impl EntryReader {
    /// The balance changes of milestone `index`; `None` for one outside the reader's range.
    ///
    /// # Errors
    /// As [`Journal::read_entry`].
    pub(crate) fn balance_changes(
        &self,
        index: u32,
    ) -> Result<Option<BalanceChanges>, HistoryError> {
        self.entries().balance_changes(index)
    }

    fn entries(&self) -> Entries<'_> {
        Entries {
            file: &self.file,
            path: &self.path,
            positions: Positions::Range(&self.positions),
            end: self.end,
        }
    }
}

/// Where entries start: the journal's (which starts at the index given), or a range's.
enum Positions<'a> {
    Journal(&'a EntryOffsets, u32),
    Range(&'a RangePositions),
}

impl Positions<'_> {
    fn of(&self, index: u32) -> Result<Option<u64>, HistoryError> {
        match self {
            Self::Journal(offsets, first) => offsets.position(index, *first),
            Self::Range(range) => range.position(index),
        }
    }
}

/// Where the entries start in `file` (which ends at `end`).
struct Entries<'a> {
    file: &'a File,
    path: &'a Path,
    positions: Positions<'a>,
    end: u64,
}

impl Entries<'_> {
    /// The entry of milestone `index` as `decode` makes it, `None` when not among them.
    fn decode<T>(
        &self,
        index: u32,
        decode: impl FnOnce(&[u8]) -> Result<T, String>,
    ) -> Result<Option<T>, HistoryError> {
        let at = self.positions.of(index)?;
        at.map(|at| read_frame(self.file, self.path, (at, self.end), index, decode))
            .transpose()
    }

    /// The entry of milestone `index`, `None` when not among them.
    fn read(&self, index: u32) -> Result<Option<JournalEntry>, HistoryError> {
        self.decode(index, |body| JournalEntry::decode_as(body, index))
    }

    /// The identity of milestone `index`, `None` when not among them.
    fn head(&self, index: u32) -> Result<Option<EntryHead>, HistoryError> {
        self.decode(index, |body| JournalEntry::decode_head(body, index))
    }

    /// The balance changes of milestone `index`, `None` when not among them.
    fn balance_changes(&self, index: u32) -> Result<Option<BalanceChanges>, HistoryError> {
        self.decode(index, |body| {
            JournalEntry::decode_balance_changes(body, index)
        })
    }
}

/// Where an open of the journal (whose first entry is `first_index`) up to `upto` starts, with
/// the entry offsets it continues. The milestone `index` holds rows up to S (at most `upto`;
/// rows above, which a resume makes again, are removed) when the rows of the first entry and
/// of S name the entries they point at; the open then starts after K, the lower of S and
/// `heads_upto` (entries after `heads_upto` are read whole whether stored or not), when K's
/// row names its entry too (K and its position are returned). Otherwise it starts at the
/// first entry, the index emptied (a row that does not match is logged, naming the index).
fn start_point(
    file: &File,
    path: &Path,
    index: Arc<MilestoneIndex>,
    first_index: u32,
    (heads_upto, upto): (u32, u32),
) -> Result<(EntryOffsets, Option<(u32, u64)>), HistoryError> {
    let last = index.last()?;
    match stored_start(file, path, &index, (first_index, last), (heads_upto, upto)) {
        Ok(Some(StoredStart { bias, stored, skip })) => {
            if last > Some(stored) {
                index.truncate_after(stored)?;
            }
            let offsets = EntryOffsets::new(index, bias, stored + 1);
            return Ok((offsets, skip));
        }
        Ok(None) => {}
        Err(e @ HistoryError::Damaged { .. }) => {
            tracing::warn!("{e}: it is emptied and filled again from the journal");
        }
        Err(e) => return Err(e),
    }
    if last.is_some() {
        index.clear()?;
    }
    Ok((EntryOffsets::new(index, 0, first_index), None))
}

/// Where the milestone index lets an open start (see [`start_point`]).
struct StoredStart {
    /// What the rows' offsets exceed the entries' positions by.
    bias: u64,
    /// S: the last milestone whose row is kept.
    stored: u32,
    /// K and the position of its entry, when the open skips to it.
    skip: Option<(u32, u64)>,
}

/// Where the index lets an open start; `None` when the index (whose last row is `last`) holds
/// no usable row.
fn stored_start(
    file: &File,
    path: &Path,
    index: &MilestoneIndex,
    (first_index, last): (u32, Option<u32>),
    (heads_upto, upto): (u32, u32),
) -> Result<Option<StoredStart>, HistoryError> {
    let Some(last) = last else {
        return Ok(None);
    };
    let stored = last.min(upto);
    if stored < first_index {
        return Ok(None);
    }
    // No row for the first entry: the journal was rewritten after the index's last commit.
    let Some(first) = index.get(first_index)? else {
        return Ok(None);
    };
    let damaged = |why: String| HistoryError::Damaged {
        path: index.path().to_path_buf(),
        why,
    };
    let row_of = |i: u32| {
        index
            .get(i)?
            .ok_or_else(|| damaged(format!("no row for milestone {i}")))
    };
    let row = row_of(stored)?;
    let skip_to = stored.min(heads_upto);
    let skip = (skip_to >= first_index)
        .then(|| row_of(skip_to))
        .transpose()?;
    let bias = first.offset.checked_sub(HEADER_LEN).ok_or_else(|| {
        damaged(format!(
            "the row of milestone {first_index} lies before the journal"
        ))
    })?;
    let len = file
        .metadata()
        .map_err(|e| HistoryError::io("reading", path, e))?
        .len();
    for r in [Some(first), Some(row), skip].into_iter().flatten() {
        let at = r.offset.saturating_sub(bias);
        let head = read_frame(file, path, (at, len), r.index, |body| {
            JournalEntry::decode_head(body, r.index)
        });
        if !head.is_ok_and(|h| h.milestone_id == r.milestone_id) {
            return Err(damaged(format!(
                "the row of milestone {} does not name its journal entry",
                r.index
            )));
        }
    }
    Ok(Some(StoredStart {
        bias,
        stored,
        skip: skip.map(|r| (r.index, r.offset - bias)),
    }))
}

/// Reads and checks the body of the entry of milestone `index` framed at offset `at` of
/// `file` (whose entries end at `end`), and decodes it with `decode`.
fn read_frame<T>(
    file: &File,
    path: &Path,
    (at, end): (u64, u64),
    index: u32,
    decode: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Result<T, HistoryError> {
    let mut frame = [0u8; FRAME_HEADER_LEN];
    file.read_exact_at(&mut frame, at)
        .map_err(|e| HistoryError::io("reading", path, e))?;
    let (crc, len) = frame_header(frame);
    if at + (FRAME_HEADER_LEN + len) as u64 > end {
        return Err(damaged(
            path,
            format!("entry of milestone {index} runs past the end"),
        ));
    }
    let mut body = vec![0u8; len];
    file.read_exact_at(&mut body, at + FRAME_HEADER_LEN as u64)
        .map_err(|e| HistoryError::io("reading", path, e))?;
    checked_body(path, (at, index), crc, &body, decode)
}

/// The checksum and length a frame header holds.
fn frame_header(frame: [u8; FRAME_HEADER_LEN]) -> (u32, usize) {
    let [c0, c1, c2, c3, l0, l1, l2, l3] = frame;
    (
        u32::from_le_bytes([c0, c1, c2, c3]),
        u32::from_le_bytes([l0, l1, l2, l3]) as usize,
    )
}

/// `body`, the entry of milestone `index` framed at offset `at`, decoded with `decode` once
/// it matches the frame's checksum `crc`.
fn checked_body<T>(
    path: &Path,
    (at, index): (u64, u32),
    crc: u32,
    body: &[u8],
    decode: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Result<T, HistoryError> {
    if crc32fast::hash(body) != crc {
        return Err(damaged(
            path,
            format!("entry of milestone {index} fails its checksum (offset {at})"),
        ));
    }
    decode(body).map_err(|why| damaged(path, format!("entry at offset {at}: {why}")))
}

fn damaged(path: &Path, why: String) -> HistoryError {
    HistoryError::Damaged {
        path: path.to_path_buf(),
        why,
    }
}

/// The entries of a range of milestones, in order (see [`Journal::replay`]).
#[derive(Debug)]
pub(crate) struct ReplayEntries {
    frames: FrameReader,
    next: u32,
    next_index: u32,
}

impl Iterator for ReplayEntries {
    type Item = Result<JournalEntry, HistoryError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.next_index {
            return None;
        }
        let entry = self.frames.next_entry(self.next);
        self.next += 1;
        Some(entry)
    }
}

/// Frames read one after the other from an offset of the journal, through a buffer.
#[derive(Debug)]
struct FrameReader {
    reader: std::io::BufReader<FileRead>,
    path: PathBuf,
    /// Where the next frame starts.
    at: u64,
}

/// Reads of a journal file from an offset on, by `pread` (the file's own position is not
/// used: appends write at their offset too).
#[derive(Debug)]
struct FileRead {
    file: File,
    at: u64,
}

impl std::io::Read for FileRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for FileRead {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        let to = match pos {
            std::io::SeekFrom::Start(n) => Some(n),
            std::io::SeekFrom::Current(d) => self.at.checked_add_signed(d),
            std::io::SeekFrom::End(_) => None,
        };
        self.at = to.ok_or_else(|| std::io::Error::other("seek outside the journal"))?;
        Ok(self.at)
    }
}

/// Bytes read ahead when entries are read one after the other.
const READ_AHEAD: usize = 1 << 20;

impl FrameReader {
    fn new(file: File, path: &Path, at: u64) -> Self {
        Self {
            reader: std::io::BufReader::with_capacity(READ_AHEAD, FileRead { file, at }),
            path: path.to_path_buf(),
            at,
        }
    }

    /// The frame header of the entry of milestone `index`, which must be next: its checksum
    /// and length.
    fn next_frame(&mut self, index: u32) -> Result<(u32, usize), HistoryError> {
        use std::io::Read;
        let at = self.at;
        let mut frame = [0u8; FRAME_HEADER_LEN];
        match self.reader.read_exact(&mut frame) {
            Ok(()) => Ok(frame_header(frame)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(damaged(
                &self.path,
                format!("ends before milestone {index} (offset {at})"),
            )),
            Err(e) => Err(HistoryError::io("reading", &self.path, e)),
        }
    }

    /// The head of the entry framed next, which must be milestone `index`'s; its body is
    /// skipped, its checksum not checked.
    fn next_head(&mut self, index: u32) -> Result<EntryHead, HistoryError> {
        use std::io::Read;
        let at = self.at;
        let (_, len) = self.next_frame(index)?;
        let mut head = [0u8; HEAD_LEN];
        if len < HEAD_LEN {
            return Err(damaged(
                &self.path,
                format!("entry of milestone {index} shorter than its head (offset {at})"),
            ));
        }
        self.reader.read_exact(&mut head).map_err(|_| {
            damaged(
                &self.path,
                format!("ends inside milestone {index} (offset {at})"),
            )
        })?;
        let skip = i64::try_from(len - HEAD_LEN).unwrap_or(i64::MAX);
        self.reader
            .seek_relative(skip)
            .map_err(|e| HistoryError::io("reading", &self.path, e))?;
        let decoded = JournalEntry::decode_head(&head, index)
            .map_err(|why| damaged(&self.path, format!("entry at offset {at}: {why}")))?;
        self.at += (FRAME_HEADER_LEN + len) as u64;
        Ok(decoded)
    }

    /// The entry framed next, which must be milestone `index`'s and intact.
    fn next_entry(&mut self, index: u32) -> Result<JournalEntry, HistoryError> {
        use std::io::Read;
        let at = self.at;
        let (crc, len) = self.next_frame(index)?;
        // A damaged length asks for no more than the file holds.
        let mut body = Vec::new();
        let got = (&mut self.reader)
            .take(len as u64)
            .read_to_end(&mut body)
            .map_err(|e| HistoryError::io("reading", &self.path, e))?;
        if got < len {
            return Err(damaged(
                &self.path,
                format!("entry of milestone {index} cut short (offset {at})"),
            ));
        }
        let entry = checked_body(&self.path, (at, index), crc, &body, |body| {
            JournalEntry::decode_as(body, index)
        })?;
        self.at += (FRAME_HEADER_LEN + len) as u64;
        Ok(entry)
    }
}

/// A journal rewrite in progress (see [`Journal::begin_rewrite`]).
#[derive(Debug)]
pub(crate) struct Rewrite {
    first: u32,
    // The journal's first index when the rewrite began (a rewrite ends on that journal only).
    from_first_index: u32,
    // Where the kept entries start in the journal file, and how far they are copied.
    start: u64,
    copied_to: u64,
    // Where the journal ended when the rewrite began.
    end: u64,
    source: File,
    tmp_path: PathBuf,
    tmp: Option<File>,
}

impl Rewrite {
    /// Copies the entries present when the rewrite began into the temporary file and fsyncs
    /// it: the long part, done without holding the journal (entries are only ever appended,
    /// so the bytes copied do not change).
    ///
    /// # Errors
    /// I/O failures.
    pub(crate) fn copy(&mut self) -> Result<(), HistoryError> {
        let mut f = File::create(&self.tmp_path)
            .map_err(|e| HistoryError::io("creating", &self.tmp_path, e))?;
        f.write_all(&header(self.first))
            .map_err(|e| HistoryError::io("writing", &self.tmp_path, e))?;
        self.tmp = Some(f);
        self.copy_upto(self.end)?;
        if let Some(f) = &self.tmp {
            f.sync_all()
                .map_err(|e| HistoryError::io("writing", &self.tmp_path, e))?;
        }
        Ok(())
    }

    /// Appends the journal's bytes from where the copy stopped to `end`.
    fn copy_upto(&mut self, end: u64) -> Result<(), HistoryError> {
        let Some(tmp) = self.tmp.as_mut() else {
            return Ok(());
        };
        if end <= self.copied_to {
            return Ok(());
        }
        let mut bytes = vec![0u8; usize::try_from(end - self.copied_to).unwrap_or(0)];
        self.source
            .read_exact_at(&mut bytes, self.copied_to)
            .map_err(|e| HistoryError::io("reading", &self.tmp_path, e))?;
        tmp.write_all(&bytes)
            .map_err(|e| HistoryError::io("writing", &self.tmp_path, e))?;
        self.copied_to = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::IndexRow;
    use crate::utxo::BytesLoc;

    /// The journal opened up to `upto`, and its entries from `from` read back as a restart
    /// applies them.
    fn open_entries(
        path: &Path,
        from: u32,
        upto: u32,
    ) -> Result<(Journal, Vec<JournalEntry>), HistoryError> {
        let opened = Journal::open_upto(path, index_of(path), (from, 0, upto))?;
        let entries = opened
            .journal
            .replay(from)?
            .collect::<Result<Vec<_>, _>>()?;
        assert_eq!(
            opened.last.map(|h| h.block_id),
            entries.last().map(|e| e.block_id)
        );
        Ok((opened.journal, entries))
    }

    /// The milestone index beside the journal at `path`.
    fn index_of(path: &Path) -> Arc<MilestoneIndex> {
        Arc::new(MilestoneIndex::open(&path.with_extension("redb"), 1 << 20).unwrap())
    }

    /// Stores the rows `j` holds up to `through` in its milestone index, as a checkpoint does.
    fn store_rows(j: &mut Journal, through: u32) {
        let (rows, first) = j.index_rows(through);
        j.milestone_index().store(&rows, first).unwrap();
        j.index_stored(through);
    }

    fn entry(index: u32) -> JournalEntry {
        JournalEntry {
            index,
            timestamp: 1000 + index,
            milestone_id: [index as u8; 32],
            block_id: [2; 32],
            referenced: 7,
            created: vec![NewOutput {
                output_id: [3; 34],
                block_id: [4; 32],
                amount: 55,
                owner: Some([5; 33]),
                loc: BytesLoc {
                    record: 9,
                    offset: 10,
                    len: 11,
                },
            }],
            consumed: vec![([6; 34], [7; 32])],
            balance_changes: vec![([8; 33], -12), ([index as u8; 33], i128::from(index))],
        }
    }

    #[test]
    fn the_balance_changes_alone_read_as_in_the_whole_entry() {
        let mut e = entry(3);
        e.created.push(NewOutput {
            owner: None,
            ..e.created[0].clone()
        });
        e.consumed.push(([9; 34], [1; 32]));
        let mut body = Vec::new();
        e.encode(&mut body);
        assert_eq!(JournalEntry::decode(&body).unwrap(), e);
        assert_eq!(
            JournalEntry::decode_balance_changes(&body, 3).unwrap(),
            e.balance_changes
        );
        assert!(JournalEntry::decode_balance_changes(&body, 4).is_err());
        let head = JournalEntry::decode_head(&body, 3).unwrap();
        assert_eq!(
            (head.timestamp, head.milestone_id, head.block_id),
            (e.timestamp, e.milestone_id, e.block_id)
        );
        assert!(JournalEntry::decode_head(&body, 2).is_err());
        body.push(0);
        assert!(JournalEntry::decode_balance_changes(&body, 3).is_err());
        assert!(JournalEntry::decode(&body).is_err());
    }

    #[test]
    fn entries_larger_than_the_read_ahead_and_many_small_ones_come_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("milestones.journal");
        let mut big = entry(2);
        big.balance_changes = (0..30_000u32)
            .map(|k| {
                let mut a = [0u8; 33];
                a[..4].copy_from_slice(&k.to_le_bytes());
                (a, i128::from(k))
            })
            .collect();
        let want: Vec<JournalEntry> = std::iter::once(entry(1))
            .chain(std::iter::once(big))
            .chain((3..=2_000).map(entry))
            .collect();
        let mut j = Journal::create(&path, 1, index_of(&path)).unwrap();
        for e in &want {
            j.append(e).unwrap();
        }
        drop(j);
        assert!(std::fs::metadata(&path).unwrap().len() > READ_AHEAD as u64);
        let (j, got) = open_entries(&path, 1, 2_000).unwrap();
        assert!(got == want, "entries differ");
        // Replayed from a later milestone: from its entry on.
        let tail: Vec<_> = j.replay(1_990).unwrap().map(Result::unwrap).collect();
        assert!(tail == want[1_989..], "tail differs");
        // A byte flipped inside the large entry: named, with the milestone.
        drop(j);
        let mut bytes = std::fs::read(&path).unwrap();
        let inside = HEADER_LEN as usize + 300_000;
        bytes[inside] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let err = Journal::open_upto(&path, index_of(&path), (1, 0, 2_000))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("milestones.journal") && err.contains("milestone 2 fails its checksum"),
            "{err}"
        );
        // Entries up to 1 000 only framed (a ledger checkpoint covers them): the damage in the
        // large entry's body is not met at the open, every other entry is found where it
        // starts, and reading the damaged one names it.
        let opened = Journal::open_upto(&path, index_of(&path), (1, 1_000, 2_000)).unwrap();
        assert_eq!(opened.framed, 2_000);
        let j = opened.journal;
        for e in want.iter().filter(|e| e.index != 2) {
            let head = j.read_head(e.index).unwrap().unwrap();
            assert_eq!(head.milestone_id, e.milestone_id, "milestone {}", e.index);
        }
        let err = j.read_entry(2).unwrap_err().to_string();
        assert!(err.contains("milestone 2 fails its checksum"), "{err}");
        assert_eq!(j.read_entry(3).unwrap(), Some(want[2].clone()));
        // A file cut inside a framed-only entry is still found short.
        drop(j);
        let cut = bytes.len() - 10;
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let err = Journal::open_upto(&path, index_of(&path), (1, 2_000, 2_000))
            .unwrap_err()
            .to_string();
        assert!(err.contains("inside the entry of milestone 2000"), "{err}");
    }

    #[test]
    fn entries_come_back_and_later_ones_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("milestones.journal");
        let mut j = Journal::create(&path, 1, index_of(&path)).unwrap();
        for i in 1..=5 {
            j.append(&entry(i)).unwrap();
        }
        assert!(j.append(&entry(9)).is_err());
        drop(j);
        let (mut j, got) = open_entries(&path, 1, 3).unwrap();
        assert_eq!(got, (1..=3).map(entry).collect::<Vec<_>>());
        assert_eq!(j.read_entry(2).unwrap(), Some(entry(2)));
        assert_eq!(
            j.read_entry(4).unwrap(),
            None,
            "cut after the checkpoint's index"
        );
        j.append(&entry(4)).unwrap();
        assert_eq!(j.read_entry(4).unwrap(), Some(entry(4)));
        assert_eq!(j.read_entry(0).unwrap(), None);
        drop(j);
        let (_, got) = open_entries(&path, 1, 4).unwrap();
        assert_eq!(got.len(), 4);
        assert!(matches!(
            open_entries(&path, 1, 5),
            Err(HistoryError::Damaged { .. })
        ));
    }

    #[test]
    fn a_rewrite_keeps_the_entries_after_a_new_base_and_an_old_journal_still_opens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("milestones.journal");
        let mut j = Journal::create(&path, 1, index_of(&path)).unwrap();
        for i in 1..=6 {
            j.append(&entry(i)).unwrap();
        }
        let old = std::fs::read(&path).unwrap();
        let mut rewrite = j.begin_rewrite(4).unwrap().expect("entries to drop");
        rewrite.copy().unwrap();
        j.finish_rewrite(rewrite).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() < old.len() as u64);
        assert_eq!(j.read_entry(3).unwrap(), None);
        assert_eq!(j.read_entry(5).unwrap(), Some(entry(5)));
        j.append(&entry(7)).unwrap();
        assert_eq!(j.read_entry(7).unwrap(), Some(entry(7)));
        drop(j);
        let (j, got) = open_entries(&path, 4, 7).unwrap();
        assert_eq!(got, (4..=7).map(entry).collect::<Vec<_>>());
        assert_eq!(j.read_entry(6).unwrap(), Some(entry(6)));
        drop(j);
        // A journal that starts after the base is refused, naming both indexes.
        let err = open_entries(&path, 2, 7).unwrap_err().to_string();
        assert!(
            err.contains("starts at milestone 4") && err.contains("from 2"),
            "{err}"
        );
        // The journal as it was before the rewrite (a crash in between): entries before the
        // base are skipped.
        std::fs::write(&path, &old).unwrap();
        let (_, got) = open_entries(&path, 4, 6).unwrap();
        assert_eq!(got, (4..=6).map(entry).collect::<Vec<_>>());
    }

    #[test]
    fn a_reader_reads_its_range_while_the_journal_goes_on_and_is_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("milestones.journal");
        let mut j = Journal::create(&path, 1, index_of(&path)).unwrap();
        for i in 1..=6 {
            j.append(&entry(i)).unwrap();
        }
        let reader = j.reader(2, 5).unwrap();
        // Appends and a rewrite that drops milestones 1..=3 from the file by name.
        j.append(&entry(7)).unwrap();
        let mut rewrite = j.begin_rewrite(4).unwrap().expect("entries to drop");
        rewrite.copy().unwrap();
        j.finish_rewrite(rewrite).unwrap();
        assert_eq!(j.read_entry(2).unwrap(), None);
        for i in 2..=5 {
            assert_eq!(
                reader.balance_changes(i).unwrap(),
                Some(entry(i).balance_changes),
                "milestone {i}"
            );
        }
        assert_eq!(reader.balance_changes(1).unwrap(), None, "before its range");
        assert_eq!(reader.balance_changes(6).unwrap(), None, "after its range");
        // A range starting before the journal's first entry starts at it.
        let reader = j.reader(1, 9).unwrap();
        assert_eq!(reader.balance_changes(3).unwrap(), None);
        assert_eq!(
            reader.balance_changes(4).unwrap(),
            Some(entry(4).balance_changes)
        );
        assert_eq!(
            reader.balance_changes(7).unwrap(),
            Some(entry(7).balance_changes)
        );
        assert_eq!(reader.balance_changes(8).unwrap(), None);
    }

    #[test]
    fn a_rewrite_keeps_what_is_appended_while_it_copies() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("milestones.journal");
        let mut j = Journal::create(&path, 1, index_of(&path)).unwrap();
        for i in 1..=6 {
            j.append(&entry(i)).unwrap();
        }
        let mut rewrite = j.begin_rewrite(4).unwrap().expect("entries to drop");
        rewrite.copy().unwrap();
        // Confirmations go on while the copy runs.
        j.append(&entry(7)).unwrap();
        j.append(&entry(8)).unwrap();
        assert_eq!(
            j.read_entry(2).unwrap(),
            Some(entry(2)),
            "unchanged until the end"
        );
        j.finish_rewrite(rewrite).unwrap();
        assert_eq!(j.read_entry(3).unwrap(), None);
        for i in 4..=8 {
            assert_eq!(j.read_entry(i).unwrap(), Some(entry(i)));
        }
        j.append(&entry(9)).unwrap();
        drop(j);
        let (_, got) = open_entries(&path, 4, 9).unwrap();
        assert_eq!(got, (4..=9).map(entry).collect::<Vec<_>>());
        assert!(!dir.path().join("milestones.journal.tmp").exists());
        // Nothing to drop: no rewrite.
        let (j, _) = open_entries(&path, 4, 9).unwrap();
        assert!(j.begin_rewrite(4).unwrap().is_none());
    }

    #[test]
    fn a_flipped_byte_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("milestones.journal");
        let mut j = Journal::create(&path, 1, index_of(&path)).unwrap();
        for i in 1..=3 {
            j.append(&entry(i)).unwrap();
        }
        drop(j);
        let clean = std::fs::read(&path).unwrap();
        for at in [3, 40, clean.len() / 2, clean.len() - 1] {
            let mut bytes = clean.clone();
            bytes[at] ^= 0x10;
            std::fs::write(&path, &bytes).unwrap();
            let err = open_entries(&path, 1, 3).unwrap_err();
            assert!(err.to_string().contains("milestones.journal"), "{err}");
        }
    }

    #[test]
    fn an_open_frames_only_the_entries_after_the_stored_rows_even_after_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("milestones.journal");
        let mut j = Journal::create(&path, 1, index_of(&path)).unwrap();
        for i in 1..=50 {
            j.append(&entry(i)).unwrap();
        }
        store_rows(&mut j, 40);
        assert_eq!(j.index_rows_held(), 10);
        let found = |j: &Journal, i: u32| j.head_by_id(&[i as u8; 32]).unwrap().map(|(i, _)| i);
        assert_eq!(found(&j, 7), Some(7), "stored");
        assert_eq!(found(&j, 45), Some(45), "held");
        drop(j);
        // Up to 50 covered by a ledger checkpoint: only 41..=50 are framed.
        let opened = Journal::open_upto(&path, index_of(&path), (1, 50, 50)).unwrap();
        assert_eq!(opened.framed, 10);
        assert_eq!(opened.last.map(|h| h.milestone_id), Some([50; 32]));
        let mut j = opened.journal;
        for i in 1..=50 {
            assert_eq!(j.read_entry(i).unwrap(), Some(entry(i)), "milestone {i}");
        }
        // Without a ledger checkpoint every entry is read again; the rows are kept.
        store_rows(&mut j, 50);
        drop(j);
        let opened = Journal::open_upto(&path, index_of(&path), (1, 0, 50)).unwrap();
        assert_eq!(opened.framed, 50);
        let mut j = opened.journal;
        assert_eq!(
            j.index_rows_held(),
            0,
            "the stored rows are used, not held again"
        );
        assert_eq!(j.read_entry(33).unwrap(), Some(entry(33)));
        // A rewrite drops 1..=19 from the file: stored offsets still find every entry, and
        // the next commit forgets the rows before the new first entry.
        let mut rewrite = j.begin_rewrite(20).unwrap().expect("entries to drop");
        rewrite.copy().unwrap();
        j.finish_rewrite(rewrite).unwrap();
        j.append(&entry(51)).unwrap();
        // Rows held in memory below the new first entry are not served either.
        let mut held = Journal::create(&dir.path().join("other.journal"), 1, {
            Arc::new(MilestoneIndex::open(&dir.path().join("other.redb"), 1 << 20).unwrap())
        })
        .unwrap();
        for i in 1..=6 {
            held.append(&entry(i)).unwrap();
        }
        let mut rewrite = held.begin_rewrite(4).unwrap().expect("entries to drop");
        rewrite.copy().unwrap();
        held.finish_rewrite(rewrite).unwrap();
        assert_eq!(held.index_rows_held(), 6);
        assert_eq!(found(&held, 2), None, "held, before the journal");
        assert_eq!(held.read_head(2).unwrap(), None);
        assert_eq!(found(&held, 5), Some(5));
        assert_eq!(held.read_entry(5).unwrap(), Some(entry(5)));
        for i in 20..=51 {
            assert_eq!(j.read_entry(i).unwrap(), Some(entry(i)), "milestone {i}");
        }
        assert_eq!(found(&j, 7), None, "before the journal");
        assert_eq!(found(&j, 33), Some(33));
        store_rows(&mut j, 51);
        assert_eq!(j.milestone_index().get(19).unwrap(), None);
        drop(j);
        let opened = Journal::open_upto(&path, index_of(&path), (20, 51, 51)).unwrap();
        assert_eq!(opened.framed, 0);
        let j = opened.journal;
        for i in 20..=51 {
            assert_eq!(j.read_head(i).unwrap().unwrap().milestone_id, [i as u8; 32]);
        }
        let reader = j.reader(20, 51).unwrap();
        assert_eq!(
            reader.balance_changes(33).unwrap(),
            Some(entry(33).balance_changes)
        );
    }

    #[test]
    fn rows_that_do_not_name_their_entries_are_refilled_from_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("milestones.journal");
        let mut j = Journal::create(&path, 1, index_of(&path)).unwrap();
        for i in 1..=30 {
            j.append(&entry(i)).unwrap();
        }
        store_rows(&mut j, 30);
        let index = Arc::clone(j.milestone_index());
        let row = index.get(25).unwrap().unwrap();
        drop(j);
        // The row of 25 points at 24's entry.
        let wrong = IndexRow {
            offset: index.get(24).unwrap().unwrap().offset,
            ..row
        };
        index.store(&[wrong], 0).unwrap();
        drop(index);
        let opened = Journal::open_upto(&path, index_of(&path), (1, 25, 30)).unwrap();
        assert_eq!(opened.framed, 30, "every entry framed again");
        let mut j = opened.journal;
        assert_eq!(j.read_entry(25).unwrap(), Some(entry(25)));
        store_rows(&mut j, 30);
        assert_eq!(j.milestone_index().get(25).unwrap(), Some(row), "refilled");
        // Rows past the entries a resume keeps are removed: they are made again.
        drop(j);
        let opened = Journal::open_upto(&path, index_of(&path), (1, 20, 20)).unwrap();
        assert_eq!(opened.framed, 0);
        assert_eq!(opened.journal.milestone_index().last().unwrap(), Some(20));
        assert_eq!(opened.journal.read_entry(21).unwrap(), None);
    }
}
