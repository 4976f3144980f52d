//! Disk space: how much a directory tree takes (the dashboard's data-directory figure and the
//! size rule of pruning use the same measure), and reserving a file's blocks before they are
//! written through a shared map.

use std::path::Path;

/// Bytes allocated on disk for every file under `dir` (symbolic links are not followed).
///
/// # Errors
/// `dir` cannot be read; entries that vanish or cannot be read while walking are skipped.
pub fn disk_usage(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0u64;
    let mut pending = vec![dir.to_path_buf()];
    let mut first = true;
    while let Some(d) = pending.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(entries) => entries,
            Err(e) if first => return Err(e),
            Err(_) => continue,
        };
        first = false;
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                pending.push(entry.path());
            } else {
                // st_blocks counts 512-byte units whatever the file system's block size.
                total = total.saturating_add(meta.blocks().saturating_mul(512));
            }
        }
    }
    Ok(total)
}

/// Allocates bytes `[start, start + len)` of `file` without changing its length, so that a
/// later write through a shared map cannot meet a hole on a full file system (which ends the
/// process with SIGBUS) and a full disk is an error here instead. A file system that cannot
/// preallocate gives `Ok` (writes then go into holes).
///
/// # Errors
/// The allocation fails (a full disk, among others).
pub(crate) fn preallocate(file: &std::fs::File, start: u64, len: u64) -> std::io::Result<()> {
    match rustix::fs::fallocate(file, rustix::fs::FallocateFlags::KEEP_SIZE, start, len) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::OPNOTSUPP => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_usage_sums_the_files_of_nested_directories() {
        let dir = tempfile::tempdir().expect("tempdir");
        let empty = disk_usage(dir.path()).expect("readable");
        assert_eq!(empty, 0);
        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        std::fs::write(dir.path().join("a"), vec![1u8; 10_000]).expect("write");
        std::fs::write(dir.path().join("sub/b"), vec![2u8; 50_000]).expect("write");
        let used = disk_usage(dir.path()).expect("readable");
        // Allocation rounds up to blocks; compression or tail packing may round down a little.
        assert!((40_000..=200_000).contains(&used), "{used}");
        assert!(disk_usage(&dir.path().join("missing")).is_err());
    }
}
