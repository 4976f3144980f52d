//! A file written under a temporary name and put in place whole: `<path>_tmp` (Hornet's
//! temporary name), fsynced, renamed over `path`, then the directory fsynced, so a crash
//! leaves either the old file or the new one, never a part (docs/snapshots-pruning.md §5, last
//! row). A writer dropped before [`AtomicFile::commit`] removes its temporary file.

use std::{
    fs::{self, File},
    io::{BufWriter, Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};

use super::SnapshotError;

/// The temporary name of `path`: its file name with `_tmp` appended.
pub fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push("_tmp");
    path.with_file_name(name)
}

pub(crate) struct AtomicFile {
    out: Option<BufWriter<File>>,
    path: PathBuf,
    tmp: PathBuf,
    written: u64,
}

impl AtomicFile {
    pub(crate) fn create(path: &Path) -> Result<Self, SnapshotError> {
        let tmp = temporary_path(path);
        let file = File::create(&tmp).map_err(|source| SnapshotError::File {
            path: tmp.clone(),
            source,
        })?;
        Ok(Self {
            out: Some(BufWriter::with_capacity(1 << 20, file)),
            path: path.to_owned(),
            tmp,
            written: 0,
        })
    }

    pub(crate) fn fail(&self, reason: impl Into<String>) -> SnapshotError {
        SnapshotError::Write {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    /// Bytes written so far (the offset of the next byte).
    pub(crate) fn position(&self) -> u64 {
        self.written
    }

    fn out(&mut self) -> Result<&mut BufWriter<File>, SnapshotError> {
        let fail = self.fail("the file is already closed");
        self.out.as_mut().ok_or(fail)
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<(), SnapshotError> {
        let out = self.out()?;
        if let Err(e) = out.write_all(bytes) {
            return Err(self.fail(e.to_string()));
        }
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Overwrites bytes at `offset` (counts patched after the data), then returns to the end.
    pub(crate) fn patch(&mut self, offset: u64, bytes: &[u8]) -> Result<(), SnapshotError> {
        let end = self.written;
        let out = self.out()?;
        let result = out
            .seek(SeekFrom::Start(offset))
            .and_then(|_| out.write_all(bytes))
            .and_then(|()| out.seek(SeekFrom::Start(end)))
            .map(|_| ());
        result.map_err(|e| self.fail(format!("patching byte {offset}: {e}")))
    }

    /// Flushes, fsyncs, renames the temporary file over the path and fsyncs the directory.
    pub(crate) fn commit(mut self) -> Result<PathBuf, SnapshotError> {
        let out = self.out.take().ok_or_else(|| self.fail("already closed"))?;
        let file = out
            .into_inner()
            .map_err(|e| self.fail(format!("flush: {}", e.error())))?;
        file.sync_all()
            .map_err(|e| self.fail(format!("fsync: {e}")))?;
        drop(file);
        fs::rename(&self.tmp, &self.path)
            .map_err(|e| self.fail(format!("rename from {}: {e}", self.tmp.display())))?;
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => PathBuf::from("."),
        };
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| self.fail(format!("fsync of {}: {e}", dir.display())))?;
        Ok(self.path.clone())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            // Not committed: the temporary file is not a snapshot; a failure to remove it
            // leaves only a `_tmp` file, which no reader takes for a snapshot.
            let _ = fs::remove_file(&self.tmp);
        }
    }
}
