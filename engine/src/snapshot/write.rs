//! Streaming writers of full and delta snapshot files (docs/snapshots-pruning.md §1.2-1.3):
//! the header first with counts of zero, the records as they are pushed, then the counts (and
//! a delta's SEP offset) patched in place, and the file put in place whole (`atomic.rs`).
//! Diffs go in the order the readers demand: descending in a full file (the caller chooses
//! which, e.g. Hornet's 30 extra diffs below the target), ascending in a delta.

use std::path::{Path, PathBuf};

use super::{
    atomic::AtomicFile,
    format::{
        DeltaHeader, FullHeader, MilestoneDiff, SnapshotOutput, DELTA_SEP_OFFSET_AT, MAX_OBJECT_LEN,
    },
    read::DeltaReader,
    SnapshotError,
};

/// The part of the file the next record goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Outputs,
    Diffs,
    Seps,
}

/// Counts and order shared by both writers.
struct Records {
    file: AtomicFile,
    part: Part,
    diffs: u32,
    seps: u16,
    last_diff: Option<u32>,
    descending: bool,
}

/// Refuses what the readers would refuse as too long (`MAX_OBJECT_LEN`).
fn check_len(file: &AtomicFile, len: usize, what: &str) -> Result<(), SnapshotError> {
    if len > MAX_OBJECT_LEN as usize {
        return Err(file.fail(format!(
            "{what} of {len} bytes: readers accept at most {MAX_OBJECT_LEN}"
        )));
    }
    Ok(())
}

impl Records {
    fn enter(&mut self, part: Part, what: &str) -> Result<(), SnapshotError> {
        if part < self.part {
            return Err(self.file.fail(format!(
                "{what} pushed after a later section was started (outputs, then diffs, then \
                 solid entry points)"
            )));
        }
        self.part = part;
        Ok(())
    }

    fn diff(&mut self, diff: &MilestoneDiff) -> Result<(), SnapshotError> {
        self.enter(Part::Diffs, "a milestone diff")?;
        let index = diff
            .index()
            .map_err(|e| self.file.fail(format!("milestone payload: {e}")))?;
        if let Some(prev) = self.last_diff {
            let in_order = if self.descending {
                index < prev
            } else {
                index > prev
            };
            if !in_order {
                return Err(self.file.fail(format!(
                    "milestone diff {index} after {prev}: diffs go strictly {}",
                    if self.descending {
                        "descending"
                    } else {
                        "ascending"
                    }
                )));
            }
        }
        let has_receipt = diff
            .new_treasury()
            .map_err(|e| self.file.fail(format!("milestone payload: {e}")))?
            .is_some();
        if has_receipt != diff.treasury_input.is_some() {
            return Err(self.file.fail(format!(
                "milestone diff {index}: a treasury input goes with a receipt, and only with one"
            )));
        }
        check_len(
            &self.file,
            diff.milestone_payload.len(),
            "a milestone payload",
        )?;
        let consumed = diff.consumed.iter().map(|s| &s.output);
        for o in diff.created.iter().chain(consumed) {
            check_len(&self.file, o.output.len(), "an output")?;
        }
        let bytes = diff.to_bytes().map_err(|e| self.file.fail(e))?;
        self.diffs = self
            .diffs
            .checked_add(1)
            .ok_or_else(|| self.file.fail("more than u32::MAX milestone diffs"))?;
        self.last_diff = Some(index);
        self.file.write(&bytes)
    }

    fn sep(&mut self, sep: &[u8; 32]) -> Result<(), SnapshotError> {
        self.enter(Part::Seps, "a solid entry point")?;
        self.seps = self.seps.checked_add(1).ok_or_else(|| {
            self.file
                .fail("more than 65 535 solid entry points (the count is a u16)")
        })?;
        self.file.write(sep)
    }
}

/// Writes a full snapshot file.
pub struct FullWriter {
    records: Records,
    counts_at: u64,
    outputs: u64,
}

impl FullWriter {
    /// Starts `<path>_tmp` with `header`; its three counts are ignored and patched by
    /// [`FullWriter::finish`].
    ///
    /// # Errors
    /// The file cannot be created or written, or the parameters are too long.
    pub fn create(path: &Path, header: &FullHeader) -> Result<Self, SnapshotError> {
        let mut file = AtomicFile::create(path)?;
        let bytes = header.to_bytes().map_err(|e| file.fail(e))?;
        file.write(&bytes)?;
        Ok(Self {
            records: Records {
                file,
                part: Part::Outputs,
                diffs: 0,
                seps: 0,
                last_diff: None,
                descending: true,
            },
            counts_at: header.counts_offset(),
            outputs: 0,
        })
    }

    /// Appends an unspent output.
    ///
    /// # Errors
    /// After a diff or SEP, or a write failure.
    pub fn push_output(&mut self, output: &SnapshotOutput) -> Result<(), SnapshotError> {
        self.records.enter(Part::Outputs, "an output")?;
        check_len(&self.records.file, output.output.len(), "an output")?;
        let mut bytes = Vec::with_capacity(output.record_len() as usize);
        output.encode(&mut bytes);
        self.outputs += 1;
        self.records.file.write(&bytes)
    }

    /// Appends a milestone diff; indexes must descend strictly.
    ///
    /// # Errors
    /// Out of order, after a SEP, a treasury input without a receipt (or the reverse), or a
    /// write failure.
    pub fn push_diff(&mut self, diff: &MilestoneDiff) -> Result<(), SnapshotError> {
        self.records.diff(diff)
    }

    /// Appends a solid entry point.
    ///
    /// # Errors
    /// More than 65 535, or a write failure.
    pub fn push_sep(&mut self, sep: &[u8; 32]) -> Result<(), SnapshotError> {
        self.records.sep(sep)
    }

    /// Patches the counts and puts the file in place; returns its path.
    ///
    /// # Errors
    /// A write, fsync or rename failure (the temporary file is then removed).
    pub fn finish(self) -> Result<PathBuf, SnapshotError> {
        let mut r = self.records;
        let mut counts = Vec::with_capacity(14);
        counts.extend_from_slice(&self.outputs.to_le_bytes());
        counts.extend_from_slice(&r.diffs.to_le_bytes());
        counts.extend_from_slice(&r.seps.to_le_bytes());
        r.file.patch(self.counts_at, &counts)?;
        r.file.commit()
    }
}

/// Writes a delta snapshot file.
pub struct DeltaWriter {
    records: Records,
    sep_offset: Option<u64>,
}

impl DeltaWriter {
    /// Starts `<path>_tmp` with `header`; its SEP offset and counts are ignored and patched by
    /// [`DeltaWriter::finish`].
    ///
    /// # Errors
    /// The file cannot be created or written.
    pub fn create(path: &Path, header: &DeltaHeader) -> Result<Self, SnapshotError> {
        let mut file = AtomicFile::create(path)?;
        file.write(&header.to_bytes())?;
        Ok(Self {
            records: Records {
                file,
                part: Part::Diffs,
                diffs: 0,
                seps: 0,
                last_diff: None,
                descending: false,
            },
            sep_offset: None,
        })
    }

    /// A writer for a new version of the delta at `path` that reaches `target_milestone_index`:
    /// the existing file's diffs are copied (read and checked one at a time), the caller pushes
    /// the diffs after them and the new SEPs, and [`DeltaWriter::finish`] replaces the file.
    /// This is TIP-35's "updating an existing delta snapshot file" (docs/snapshots-pruning.md
    /// §1.8) without Hornet's in-place truncation, so a crash leaves the old file whole. The
    /// old file must be a delta on `full_snapshot_target_milestone_id`.
    ///
    /// # Errors
    /// The old file cannot be read, is malformed, or continues another full file.
    pub fn extend(
        path: &Path,
        full_snapshot_target_milestone_id: [u8; 32],
        target_milestone_index: u32,
        target_milestone_timestamp: u32,
    ) -> Result<Self, SnapshotError> {
        let old = std::fs::File::open(path).map_err(|source| SnapshotError::File {
            path: path.to_owned(),
            source,
        })?;
        let mut reader = DeltaReader::new(std::io::BufReader::with_capacity(1 << 20, old))?;
        let link = reader.header().full_snapshot_target_milestone_id;
        if link != full_snapshot_target_milestone_id {
            return Err(SnapshotError::NotMergeable {
                delta: link,
                full: full_snapshot_target_milestone_id,
            });
        }
        let header = DeltaHeader {
            target_milestone_index,
            target_milestone_timestamp,
            full_snapshot_target_milestone_id,
            sep_file_offset: 0,
            diff_count: 0,
            sep_count: 0,
        };
        let mut writer = Self::create(path, &header)?;
        while let Some(diff) = reader.next_diff()? {
            writer.push_diff(&diff)?;
        }
        // The old file's SEPs are replaced, but it must still be whole.
        reader.finish()?;
        Ok(writer)
    }

    /// Appends a milestone diff; indexes must ascend strictly.
    ///
    /// # Errors
    /// As [`FullWriter::push_diff`].
    pub fn push_diff(&mut self, diff: &MilestoneDiff) -> Result<(), SnapshotError> {
        self.records.diff(diff)
    }

    /// Appends a solid entry point.
    ///
    /// # Errors
    /// As [`FullWriter::push_sep`].
    pub fn push_sep(&mut self, sep: &[u8; 32]) -> Result<(), SnapshotError> {
        if self.sep_offset.is_none() {
            self.sep_offset = Some(self.records.file.position());
        }
        self.records.sep(sep)
    }

    /// Patches the SEP offset and the counts and puts the file in place; returns its path.
    ///
    /// # Errors
    /// As [`FullWriter::finish`].
    pub fn finish(self) -> Result<PathBuf, SnapshotError> {
        let mut r = self.records;
        let sep_offset = self.sep_offset.unwrap_or_else(|| r.file.position());
        let sep_offset = i64::try_from(sep_offset)
            .map_err(|_| r.file.fail("the file is longer than i64::MAX bytes"))?;
        let mut patch = Vec::with_capacity(14);
        patch.extend_from_slice(&sep_offset.to_le_bytes());
        patch.extend_from_slice(&r.diffs.to_le_bytes());
        patch.extend_from_slice(&r.seps.to_le_bytes());
        r.file.patch(DELTA_SEP_OFFSET_AT, &patch)?;
        r.file.commit()
    }
}
