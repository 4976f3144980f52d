//! Segment files: a `File` kept beside its read-only `Mmap` (and, once sealed, its mapped
//! index file), and the table that owns them.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use memmap2::Mmap;

use super::error::LogError;
use super::format;
use super::idx_file::{IdxState, SealedIndex};

/// One segment file, mapped whole.
#[derive(Debug)]
pub(crate) struct Segment {
    pub(crate) number: u32,
    pub(crate) path: PathBuf,
    /// Written with `pwrite`; open until the segment is retired (`retire.rs`), so that a
    /// long-running node does not keep a descriptor per retired segment.
    file: parking_lot::RwLock<Option<File>>,
    /// The whole file, `size` bytes.
    pub(crate) map: Mmap,
    /// The segment's index file, set once the segment is sealed and the file is durable (or
    /// found valid in O(1) at open).
    sealed: OnceLock<SealedIndex>,
    /// Whether `sealed` is verified (its sections read), set once; see [`IdxState`].
    idx_state: OnceLock<IdxState>,
}

impl Segment {
    /// The file name of segment `number`.
    pub(crate) fn file_name(number: u32) -> String {
        format!("{number:08}.seg")
    }

    /// Parses a segment file name.
    pub(crate) fn parse_name(name: &str) -> Option<u32> {
        parse_numbered(name, ".seg")
    }

    /// The index installed for this sealed segment, verified or not: for its header fields
    /// (checked against the segment at open), never for lookups (see
    /// [`Segment::checked_index`]).
    pub(crate) fn installed_index(&self) -> Option<&SealedIndex> {
        self.sealed.get()
    }

    /// Whether the segment is sealed (an index is installed).
    pub(crate) fn is_sealed(&self) -> bool {
        self.sealed.get().is_some()
    }

    /// Whether the segment's installed index has not been verified yet.
    pub(crate) fn is_unverified(&self) -> bool {
        self.is_sealed() && self.idx_state.get().is_none()
    }

    /// Attaches the (durable) index file of this sealed segment; a second one is dropped.
    /// `verified`: written by this process from frames it verified (at a roll or a rebuild),
    /// so its sections need no check; otherwise it is unverified until
    /// [`Segment::checked_index`] runs.
    pub(crate) fn install_index(&self, index: SealedIndex, verified: bool) {
        if self.sealed.set(index).is_ok() && verified {
            let _ = self.idx_state.set(IdxState::Verified);
        }
    }

    /// The index to look this sealed segment's records up in: the installed one once its
    /// sections are verified, the rebuilt one if it was damaged, none if the segment is not
    /// sealed or could not be indexed. An unverified index is checked by `check` first,
    /// once: a concurrent caller waits for that check instead of repeating it.
    pub(crate) fn checked_index(
        &self,
        check: impl FnOnce(&SealedIndex) -> IdxState,
    ) -> Option<&SealedIndex> {
        let installed = self.sealed.get()?;
        match self.idx_state.get_or_init(|| check(installed)) {
            IdxState::Verified => Some(installed),
            IdxState::Rebuilt(rebuilt) => Some(rebuilt),
            IdxState::Unusable => None,
        }
    }

    /// Opens an existing segment file for reading and writing and maps it.
    pub(crate) fn open(dir: &Path, number: u32) -> Result<Self, LogError> {
        let path = dir.join(Self::file_name(number));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| LogError::io("open", &path, e))?;
        Self::mapped(number, path, file)
    }

    /// Creates segment `number` of `size` bytes: header, zero-filled rest, fsynced, then
    /// renamed into place and the directory fsynced. A crash leaves either no segment or a
    /// complete one (plus a `.tmp` file that the next open deletes).
    pub(crate) fn create(dir: &Path, number: u32, size: u32) -> Result<Self, LogError> {
        let path = dir.join(Self::file_name(number));
        let tmp = dir.join(format!("{}.tmp", Self::file_name(number)));
        let mut file = create_tmp(&tmp)?;
        file.write_all(&format::encode_header(number, size))
            .map_err(|e| LogError::io("write", &tmp, e))?;
        file.set_len(u64::from(size))
            .map_err(|e| LogError::io("extend", &tmp, e))?;
        file.sync_all()
            .map_err(|e| LogError::io("fsync", &tmp, e))?;
        fs::rename(&tmp, &path).map_err(|e| LogError::io("rename", &tmp, e))?;
        sync_dir(dir)?;
        Self::mapped(number, path, file)
    }

    /// Segment `number`, its open `file` at `path` mapped whole.
    fn mapped(number: u32, path: PathBuf, file: File) -> Result<Self, LogError> {
        let map = map(&file, &path)?;
        Ok(Self {
            number,
            path,
            file: parking_lot::RwLock::new(Some(file)),
            map,
            sealed: OnceLock::new(),
            idx_state: OnceLock::new(),
        })
    }

    /// Runs `f` on the segment's open file; fails once the segment is retired.
    pub(crate) fn with_file<R>(
        &self,
        f: impl FnOnce(&File) -> std::io::Result<R>,
    ) -> std::io::Result<R> {
        match &*self.file.read() {
            Some(file) => f(file),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the segment is retired",
            )),
        }
    }

    /// Closes the segment's file (retired: never written again; the map stays).
    pub(crate) fn close_file(&self) {
        self.file.write().take();
    }

    /// The mapped bytes of the whole segment.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The segment's bytes up to the end of its allocated data after `from` (see
    /// [`Segment::allocated_end`]).
    pub(crate) fn allocated(&self, from: usize) -> &[u8] {
        let end = usize::try_from(self.allocated_end(from as u64)).unwrap_or(usize::MAX);
        self.map.get(..end).unwrap_or(&self.map)
    }

    /// The end of the file's last allocated extent at or after `from` (`SEEK_DATA` /
    /// `SEEK_HOLE`): beyond it the pre-sized file is a hole and reads as zeros. Lets a scan
    /// for written data skip the hole instead of faulting in its pages (on tmpfs a read
    /// fault allocates memory, and fails with SIGBUS when the file system is full). A file
    /// system without hole reporting gives the file length.
    pub(crate) fn allocated_end(&self, from: u64) -> u64 {
        use rustix::fs::{seek, SeekFrom};
        let len = self.map.len() as u64;
        let mut pos = from.min(len);
        loop {
            let Ok(hole) = self.with_file(|f| Ok(seek(f, SeekFrom::Hole(pos))?)) else {
                return len;
            };
            match self.with_file(|f| Ok(seek(f, SeekFrom::Data(hole))?)) {
                Ok(data) if data > hole && data < len => pos = data,
                _ => return hole.min(len),
            }
        }
    }

    /// Cuts the segment at `end` and zero-fills it back to `size` bytes, then remaps it.
    ///
    /// Everything after `end` is dropped, so a later scan cannot mistake stale bytes for
    /// records. Used on the active segment at open, before anyone can borrow the map.
    pub(crate) fn truncate_tail(self, end: u64, size: u32) -> Result<Self, LogError> {
        let Self {
            number,
            path,
            file,
            map,
            sealed,
            idx_state,
        } = self;
        // The map must be gone before the file shrinks: pages past the new end would fault.
        drop(map);
        let file = file.into_inner().ok_or_else(|| {
            LogError::io(
                "truncate",
                &path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "the segment is retired"),
            )
        })?;
        file.set_len(end)
            .map_err(|e| LogError::io("truncate", &path, e))?;
        file.set_len(u64::from(size))
            .map_err(|e| LogError::io("extend", &path, e))?;
        file.sync_all()
            .map_err(|e| LogError::io("fsync", &path, e))?;
        let map = self::map(&file, &path)?;
        Ok(Self {
            number,
            path,
            file: parking_lot::RwLock::new(Some(file)),
            map,
            sealed,
            idx_state,
        })
    }
}

/// Parses `NNNNNNNN<suffix>` (8 decimal digits).
pub(crate) fn parse_numbered(name: &str, suffix: &str) -> Option<u32> {
    let digits = name.strip_suffix(suffix)?;
    if digits.len() != 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Creates (or truncates) the temporary file `tmp`, open for reading and writing, that a
/// new file is written to before it is renamed into place.
pub(crate) fn create_tmp(tmp: &Path) -> Result<File, LogError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(tmp)
        .map_err(|e| LogError::io("create", tmp, e))
}

/// Maps a segment or index file of the log read-only, whole.
#[expect(
    unsafe_code,
    reason = "mapping a file is unsafe in memmap2; the SAFETY comment says why it is sound here"
)]
pub(crate) fn map(file: &File, path: &Path) -> Result<Mmap, LogError> {
    // SAFETY: the mapping is read-only and shared. The `File` is kept beside the `Mmap` for the
    // mapping's whole life. The log is the only writer of its directory (documented in
    // engine/FORMAT.md: one process at a time). In a segment it only ever writes bytes past the
    // published end of the active segment, never bytes a reader can hold a reference to; the
    // file is never shrunk while mapped (`truncate_tail` drops the map first). An index file is
    // written whole under a temporary name, fsynced and renamed before it is mapped, and never
    // written again; a rebuild writes a new file and renames it over the name, which leaves the
    // mapped (old) file untouched. Hence every `&[u8]` handed out of this map stays valid and
    // unchanged for its lifetime. A retired segment's files are deleted (`retire.rs`) while
    // readers may still hold its map: unlinking leaves the mapped file's bytes and length as
    // they were until the map is dropped, which happens only when the last `Arc<Segment>`
    // (held by readers and their records) goes.
    unsafe { Mmap::map(file) }.map_err(|e| LogError::io("mmap", path, e))
}

/// Fsyncs a directory so that created or renamed entries in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), LogError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| LogError::io("fsync directory", dir, e))
}

/// The segments one reader sees: an immutable list numbered from `base`, shared by every
/// reader that loaded it (see [`SegmentTable`]). Borrowed bytes of its segments stay mapped
/// as long as the list is held.
#[derive(Clone, Debug, Default)]
pub(crate) struct Segments {
    base: u32,
    list: Vec<Arc<Segment>>,
}

impl Segments {
    /// The segment `number`, if this list holds it.
    pub(crate) fn get(&self, number: u32) -> Option<&Segment> {
        self.get_arc(number).map(|seg| &**seg)
    }

    /// The number of the last segment in this list.
    pub(crate) fn last_number(&self) -> Option<u32> {
        let len = u32::try_from(self.list.len()).ok()?;
        self.base.checked_add(len.checked_sub(1)?)
    }

    /// The shared handle of segment `number`, to keep it mapped beyond this list.
    pub(crate) fn get_arc(&self, number: u32) -> Option<&Arc<Segment>> {
        let n = usize::try_from(number.checked_sub(self.base)?).ok()?;
        self.list.get(n)
    }
}

/// The log's segments, contiguous from the first one kept. Readers load the current list
/// (one `Arc` clone); a roll installs the next segment and a retirement removes the oldest,
/// each by replacing the list (copied only while a reader holds the old one). A segment is
/// unmapped when the last list or record holding it is dropped, so a retired segment's
/// mapping and its deleted file's blocks go as soon as no reader can see them.
pub(crate) struct SegmentTable {
    current: parking_lot::RwLock<Arc<Segments>>,
}

impl std::fmt::Debug for SegmentTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentTable").finish_non_exhaustive()
    }
}

impl SegmentTable {
    /// An empty table whose first segment will be `base`.
    pub(crate) fn new(base: u32) -> Self {
        Self {
            current: parking_lot::RwLock::new(Arc::new(Segments {
                base,
                list: Vec::new(),
            })),
        }
    }

    /// The segments as of now, kept mapped while the returned list is held.
    pub(crate) fn load(&self) -> Arc<Segments> {
        Arc::clone(&self.current.read())
    }

    /// Installs `seg`, which must be the segment after the last one.
    pub(crate) fn install(&self, seg: Segment) -> Result<Arc<Segment>, LogError> {
        let mut current = self.current.write();
        let next = u32::try_from(current.list.len())
            .ok()
            .and_then(|len| current.base.checked_add(len));
        if next != Some(seg.number) {
            return Err(LogError::Config("segment installed out of order"));
        }
        let seg = Arc::new(seg);
        Arc::make_mut(&mut current).list.push(Arc::clone(&seg));
        Ok(seg)
    }

    /// Removes the segments below `first` and returns them (the last handles the table had).
    pub(crate) fn remove_below(&self, first: u32) -> Vec<Arc<Segment>> {
        let mut current = self.current.write();
        let count = usize::try_from(first.saturating_sub(current.base))
            .unwrap_or(usize::MAX)
            .min(current.list.len());
        if count == 0 {
            return Vec::new();
        }
        let segments = Arc::make_mut(&mut current);
        let removed: Vec<_> = segments.list.drain(..count).collect();
        // `count` is at most the list's length, which numbers fit in u32.
        segments.base = segments
            .base
            .saturating_add(u32::try_from(count).unwrap_or(u32::MAX));
        removed
    }
}
