//! One `redb` database of the history directory with its path, and the one mapping of `redb`'s
//! failures to [`HistoryError`] the stores share: a file `redb` cannot read is
//! [`HistoryError::Damaged`] (the owner removes it and rebuilds it from the journal), every
//! other failure is I/O on the named file. Commits are durable (`fsync`) when they return, and
//! each saves redb's allocator state ("quick repair"): an open after a crash loads it instead of
//! walking and checksumming the whole file, which would make the restart after a `kill -9` grow
//! with the history the stores hold. A full repair, when redb still needs one, is logged.

use std::path::{Path, PathBuf};

use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};

use super::HistoryError;

/// `version` → the format version of the database's tables (the stores keep other keys here
/// too).
pub(super) const META: TableDefinition<'_, &str, u32> = TableDefinition::new("meta");

/// A `redb` database and the file it lives in.
pub(super) struct RedbFile {
    db: Database,
    path: PathBuf,
}

impl std::fmt::Debug for RedbFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl RedbFile {
    /// Opens (or creates) the database at `path` with a page cache of at most `cache_bytes`
    /// of heap, and checks that its tables are of format `version` (a new file is given it,
    /// with `init` run in the same commit to create the tables).
    ///
    /// # Errors
    /// I/O failures, or a file `redb` cannot read or of another version
    /// ([`HistoryError::Damaged`]).
    pub(super) fn open(
        path: &Path,
        cache_bytes: usize,
        version: u32,
        init: impl FnOnce(&Self, &redb::WriteTransaction) -> Result<(), HistoryError>,
    ) -> Result<Self, HistoryError> {
        let shown = path.display().to_string();
        // redb runs its repair on a file it creates, too: only an existing one is worth a word.
        let existed = path.exists();
        let db = Database::builder()
            .set_cache_size(cache_bytes)
            .set_repair_callback(move |session| {
                if !existed {
                    return;
                }
                tracing::warn!(
                    "{shown} was not closed cleanly: redb checks and repairs the whole file \
                     ({:.0} %)",
                    session.progress() * 100.0
                );
            })
            .create(path)
            .map_err(|e| failure(path, redb::Error::from(e)))?;
        let file = Self {
            db,
            path: path.to_path_buf(),
        };
        let tx = file.begin_write()?;
        let found = {
            let mut meta = tx.open_table(META).map_err(|e| file.err(e))?;
            let found = meta
                .get("version")
                .map_err(|e| file.err(e))?
                .map(|v| v.value());
            if found.is_none() {
                meta.insert("version", version).map_err(|e| file.err(e))?;
            }
            found
        };
        if let Some(v) = found.filter(|v| *v != version) {
            return Err(file.damaged(format!("format version {v}, this node reads {version}")));
        }
        init(&file, &tx)?;
        tx.commit().map_err(|e| file.err(e))?;
        Ok(file)
    }

    /// The file's path.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// `e` as a failure of this file.
    pub(super) fn err(&self, e: impl Into<redb::Error>) -> HistoryError {
        failure(&self.path, e.into())
    }

    /// This file is damaged: `why`.
    pub(super) fn damaged(&self, why: String) -> HistoryError {
        HistoryError::Damaged {
            path: self.path.clone(),
            why,
        }
    }

    /// A write transaction whose commit is durable when it returns, and saves the allocator
    /// state (quick repair).
    pub(super) fn begin_write(&self) -> Result<redb::WriteTransaction, HistoryError> {
        let mut tx = self.db.begin_write().map_err(|e| self.err(e))?;
        tx.set_durability(Durability::Immediate)
            .map_err(|e| self.err(e))?;
        tx.set_quick_repair(true);
        Ok(tx)
    }

    /// A read transaction: a consistent view that later commits do not change.
    pub(super) fn begin_read(&self) -> Result<redb::ReadTransaction, HistoryError> {
        self.db.begin_read().map_err(|e| self.err(e))
    }
}

/// `e`, met using the file at `path`, as a [`HistoryError`].
pub(super) fn failure(path: &Path, e: redb::Error) -> HistoryError {
    match e {
        // redb reads a file that is not one of its own as invalid data.
        redb::Error::Io(source)
            if matches!(
                source.kind(),
                std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof
            ) =>
        {
            HistoryError::Damaged {
                path: path.to_path_buf(),
                why: source.to_string(),
            }
        }
        redb::Error::Io(source) => HistoryError::io("using", path, source),
        redb::Error::DatabaseAlreadyOpen => HistoryError::io(
            "opening",
            path,
            std::io::Error::new(std::io::ErrorKind::WouldBlock, "open in another process"),
        ),
        other => HistoryError::Damaged {
            path: path.to_path_buf(),
            why: other.to_string(),
        },
    }
}

/// Opens a store of the history directory with `open`; one that is damaged is removed (a
/// warning names it and says how it is `refilled`) and created empty.
///
/// # Errors
/// I/O failures.
pub(crate) fn open_or_empty<T>(
    path: &Path,
    refilled: &str,
    open: impl Fn(&Path) -> Result<T, HistoryError>,
) -> Result<T, HistoryError> {
    match open(path) {
        Err(e @ HistoryError::Damaged { .. }) => {
            tracing::warn!("{e}: it is removed and {refilled}");
            std::fs::remove_file(path).map_err(|e| HistoryError::io("removing", path, e))?;
            open(path)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: TableDefinition<'_, u32, u64> = TableDefinition::new("t");

    /// Whether redb runs a full repair when it opens `path`.
    fn repairs(path: &Path) -> bool {
        let repaired = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = std::sync::Arc::clone(&repaired);
        let db = Database::builder()
            .set_repair_callback(move |_| seen.store(true, std::sync::atomic::Ordering::SeqCst))
            .create(path)
            .unwrap();
        let tx = db.begin_read().unwrap();
        assert_eq!(
            tx.open_table(T).unwrap().get(2).unwrap().unwrap().value(),
            2
        );
        repaired.load(std::sync::atomic::Ordering::SeqCst)
    }

    #[test]
    fn an_open_after_a_crash_needs_no_full_repair() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.redb");
        let file = RedbFile::open(&path, 1 << 20, 1, |_, _| Ok(())).unwrap();
        for i in 0..3u32 {
            let tx = file.begin_write().unwrap();
            tx.open_table(T).unwrap().insert(i, u64::from(i)).unwrap();
            tx.commit().unwrap();
        }
        // The file as a crash leaves it: copied while the database is open (every commit
        // durable, the file not closed).
        let crashed = dir.path().join("crashed.redb");
        std::fs::copy(&path, &crashed).unwrap();
        drop(file);
        assert!(
            !repairs(&crashed),
            "a full repair after quick-repair commits"
        );
        assert!(!repairs(&path), "a full repair after a clean close");
    }
}
