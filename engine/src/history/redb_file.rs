//! One `redb` database of the history directory with its path, and the one mapping of `redb`'s
//! failures to [`HistoryError`] the stores share: a file `redb` cannot read is
//! [`HistoryError::Damaged`] (the owner removes it and rebuilds it from the journal), every
//! other failure is I/O on the named file. Commits are durable (`fsync`) when they return.

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
        let db = Database::builder()
            .set_cache_size(cache_bytes)
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

    /// A write transaction whose commit is durable when it returns.
    pub(super) fn begin_write(&self) -> Result<redb::WriteTransaction, HistoryError> {
        let mut tx = self.db.begin_write().map_err(|e| self.err(e))?;
        tx.set_durability(Durability::Immediate)
            .map_err(|e| self.err(e))?;
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
