//! A Bloom filter of 64-bit keys whose bits live in a file mapping, not on the heap: the
//! filter over every sealed segment's keys grows with the history a node keeps (≈ 1.2–2.4 B
//! per block), and in a shared file mapping those bytes are page cache the kernel may write
//! back and reclaim, not anonymous memory (issue 24: "what moves to disk, mapped or read on
//! demand: the id → record index of the log").
//!
//! The file is unnamed (`O_TMPFILE` in the log directory, `tempfile::tempfile_in`): it is
//! never read back, a crash or a stop leaves nothing behind, and every open builds the filter
//! again from the index files (`sealed_keys.rs`). It is allocated whole before it is mapped
//! (`disk::preallocate`: a full disk is an error here, not a SIGBUS at a later write).
//!
//! Why not `fastbloom` (which this filter replaced): its bits are a `Vec` it allocates itself.
//! The keys are already uniform (the first 8 bytes of a BLAKE2b-256 id), so the filter needs
//! no hasher: a key picks one 64-byte block (one cache line) and sets one bit in each of the
//! block's eight words ("split block" Bloom filter, as Parquet's). At 9.6 bits per key that
//! passes ≈ 1 % of absent keys when full, ≈ 0.03 % at half capacity.

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::MmapMut;

/// Bits of filter per key of capacity.
const BITS_PER_KEY: usize = 10;
/// Words (and bits set per key) in one block.
const WORDS_PER_BLOCK: usize = 8;
/// Bytes of one block: one cache line.
const BLOCK_BYTES: usize = WORDS_PER_BLOCK * 8;

/// A Bloom filter over 64-bit keys in an unnamed, preallocated file mapping. Inserts and
/// probes may run at once from any threads (the bits are atomics).
#[derive(Debug)]
pub(super) struct KeyFilter {
    map: MmapMut,
    blocks: u64,
}

impl KeyFilter {
    /// An empty filter with room for `capacity` keys, its file created in `dir`.
    ///
    /// # Errors
    /// The file cannot be created, allocated (a full disk) or mapped.
    pub(super) fn create_in(dir: &Path, capacity: usize) -> io::Result<Self> {
        let blocks = (capacity.max(1) * BITS_PER_KEY).div_ceil(BLOCK_BYTES * 8);
        let len = (blocks * BLOCK_BYTES) as u64;
        let file = tempfile::tempfile_in(dir)?;
        file.set_len(len)?;
        crate::disk::preallocate(&file, 0, len)?;
        let map = Self::map(&file)?;
        Ok(Self {
            map,
            blocks: blocks as u64,
        })
    }

    #[expect(
        unsafe_code,
        reason = "mapping a file is unsafe in memmap2; the SAFETY comment says why it is sound here"
    )]
    fn map(file: &File) -> io::Result<MmapMut> {
        // SAFETY: the file is unnamed (no other process can open it) and this process never
        // resizes it; the map owns its own reference to the file, so it stays valid until the
        // map is dropped with the filter.
        unsafe { MmapMut::map_mut(file) }
    }

    /// The map's bits as atomic words.
    #[expect(
        unsafe_code,
        reason = "viewing the mapped bytes as atomics; the SAFETY comment says why it is sound here"
    )]
    fn words(&self) -> &[AtomicU64] {
        let len = self.map.len() / 8;
        // SAFETY: the map is page-aligned (so 8-aligned) and `len * 8` bytes long; it lives as
        // long as `self` and is never borrowed as bytes elsewhere, so every access to its
        // bytes goes through these atomics; `AtomicU64` has the size and alignment of `u64`
        // and any bit pattern is a valid value.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<AtomicU64>(), len) }
    }

    /// The words of `key`'s block and the bit each of them gets.
    fn place(&self, key: u64) -> (&[AtomicU64], [u64; WORDS_PER_BLOCK]) {
        // The block from the key's high bits (multiply-shift range reduction: always below
        // `blocks`), the bits from a mix of the whole key, six bits per word.
        let block = ((u128::from(key) * u128::from(self.blocks)) >> 64) as usize;
        let first = block * WORDS_PER_BLOCK;
        let words = self
            .words()
            .get(first..first + WORDS_PER_BLOCK)
            .unwrap_or_default();
        let mut mixed = (key ^ (key >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut bits = [0u64; WORDS_PER_BLOCK];
        for bit in &mut bits {
            *bit = 1 << (mixed & 63);
            mixed >>= 6;
        }
        (words, bits)
    }

    /// Adds `key`.
    pub(super) fn insert(&self, key: u64) {
        let (words, bits) = self.place(key);
        for (word, bit) in words.iter().zip(bits) {
            word.fetch_or(bit, Ordering::Relaxed);
        }
    }

    /// False when `key` was never added (sure); true when it may have been.
    pub(super) fn may_contain(&self, key: u64) -> bool {
        let (words, bits) = self.place(key);
        // (No words, which cannot happen, answers "may": the filter never hides a key.)
        words
            .iter()
            .zip(bits)
            .all(|(word, bit)| word.load(Ordering::Relaxed) & bit != 0)
    }

    /// Bytes of the filter's file.
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u64) -> u64 {
        let id = ledger_codec::hash::blake2b256(&i.to_le_bytes());
        super::super::idx_format::key_of(&id)
    }

    #[test]
    fn added_keys_are_always_found_and_few_absent_ones_pass() {
        let dir = tempfile::tempdir().unwrap();
        let capacity = 100_000;
        let filter = KeyFilter::create_in(dir.path(), capacity).unwrap();
        assert!(filter.len() >= capacity * 10 / 8, "{} bytes", filter.len());
        for i in 0..capacity as u64 {
            filter.insert(key(i));
        }
        assert!((0..capacity as u64).all(|i| filter.may_contain(key(i))));
        // Full to capacity: about 1 % of absent keys pass.
        let passed = (1_000_000..1_100_000)
            .filter(|i| filter.may_contain(key(*i)))
            .count();
        assert!(passed < 2_000, "{passed} of 100 000 absent keys passed");
        assert!(passed > 0, "a full filter passes some absent keys");
    }

    #[test]
    fn a_half_full_filter_passes_almost_no_absent_key() {
        let dir = tempfile::tempdir().unwrap();
        let filter = KeyFilter::create_in(dir.path(), 200_000).unwrap();
        for i in 0..100_000 {
            filter.insert(key(i));
        }
        let passed = (1_000_000..1_100_000)
            .filter(|i| filter.may_contain(key(*i)))
            .count();
        assert!(passed < 200, "{passed} of 100 000 absent keys passed");
    }

    #[test]
    fn the_file_is_unnamed_and_leaves_nothing_in_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let filter = KeyFilter::create_in(dir.path(), 10_000).unwrap();
        filter.insert(7);
        assert!(filter.may_contain(7));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        drop(filter);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
