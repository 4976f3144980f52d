//! TIP-12 proof of work: b1t6, Curl-P-81, scores and nonce search.
//!
//! A block's PoW: `d = BLAKE2b-256(block without its last 8 bytes)`, the
//! Curl-P-81 input is `b1t6(d) ‖ b1t6(nonce as 8 LE bytes) ‖ [0, 0, 0]`
//! (243 trits), `z` = trailing zero trits of the hash and
//! `score = 3^z / len(block)`.
//!
//! - [`ternary`]: trits and trytes; [`b1t6`]: bytes ↔ trits.
//! - [`curl`]: the plain scalar Curl-P-81 (the reference).
//! - [`bitsliced`]: the fast kernel, `64·N` hashes per pass.
//! - [`pow_score`], [`meets_score`], [`mine`], [`search_nonce`].

pub mod b1t6;
pub mod bitsliced;
pub mod curl;
pub mod ternary;

use std::sync::atomic::{AtomicBool, Ordering};

use bitsliced::{BctCurl, Cell, PowBlock};
use curl::HASH_LEN;
use ternary::Trit;

use crate::hash::blake2b256;

/// Bytes of the nonce, the last field of every block.
pub const NONCE_LEN: usize = 8;
/// Trits of the digest part of the Curl input (`b1t6` of 32 bytes).
const DIGEST_TRITS: usize = 32 * b1t6::TRITS_PER_BYTE;
/// Trits of the nonce part of the Curl input.
const NONCE_TRITS: usize = NONCE_LEN * b1t6::TRITS_PER_BYTE;

/// `u64` words per lane vector in the search kernel (`64·LANE_WORDS` nonces per pass).
pub const LANE_WORDS: usize = 8;
/// Nonces hashed per pass of the search kernel.
pub const LANES: usize = 64 * LANE_WORDS;

/// What the nonce is searched for: all but the last 8 bytes; `None` if the block is shorter
/// than 8 bytes.
pub fn pow_body(block: &[u8]) -> Option<&[u8]> {
    let body_len = block.len().checked_sub(NONCE_LEN)?;
    block.get(..body_len)
}

/// The PoW digest: BLAKE2b-256 of [`pow_body`]; `None` if the block is shorter than 8 bytes.
pub fn pow_digest(block: &[u8]) -> Option<[u8; 32]> {
    pow_body(block).map(blake2b256)
}

/// The nonce: the last 8 bytes, little endian; `None` if the block is shorter.
pub fn block_nonce(block: &[u8]) -> Option<u64> {
    let start = block.len().checked_sub(NONCE_LEN)?;
    let bytes: [u8; 8] = block.get(start..)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// The 243-trit Curl input for a digest and a nonce.
pub fn curl_input(digest: &[u8; 32], nonce: u64) -> [Trit; HASH_LEN] {
    let mut t = [0; HASH_LEN];
    for (i, b) in digest.iter().chain(nonce.to_le_bytes().iter()).enumerate() {
        let six = b1t6::byte_trits(*b);
        if let Some(dst) = t.get_mut(i * 6..i * 6 + 6) {
            dst.copy_from_slice(&six);
        }
    }
    t
}

/// The Curl-P-81 PoW hash of a digest and a nonce (scalar reference path).
pub fn pow_hash(digest: &[u8; 32], nonce: u64) -> [Trit; HASH_LEN] {
    let mut c = curl::CurlP81::new();
    let mut out = [0; HASH_LEN];
    // Both calls only fail on lengths that are not multiples of 243 or on bad trits.
    if c.absorb(&curl_input(digest, nonce)).is_ok() {
        let _ = c.squeeze(&mut out);
    }
    out
}

/// Trailing zero trits (counted from the last trit backwards).
pub fn trailing_zeros(trits: &[Trit]) -> usize {
    trits.iter().rev().take_while(|t| **t == 0).count()
}

/// Trailing zero trits of a block's PoW hash; `None` if it is shorter than 8 bytes.
/// Runs the bit-sliced kernel (the tests check it against [`pow_hash`]).
pub fn block_trailing_zeros(block: &[u8]) -> Option<usize> {
    let digest = pow_digest(block)?;
    let nonce = block_nonce(block)?;
    Some(bitsliced::hash_trailing_zeros(&curl_input(&digest, nonce)))
}

/// The TIP-12 score `3^z / len(block)`; 0 for a block shorter than 8 bytes.
pub fn pow_score(block: &[u8]) -> f64 {
    match block_trailing_zeros(block) {
        Some(z) if !block.is_empty() => 3f64.powi(z as i32) / block.len() as f64,
        _ => 0.0,
    }
}

/// Whether `3^z ≥ min_score · len(block)`, in integers (no float rounding).
/// A block shorter than 8 bytes only meets a minimum of 0.
pub fn meets_score(block: &[u8], min_score: u32) -> bool {
    if min_score == 0 {
        return true;
    }
    match block_trailing_zeros(block) {
        Some(z) => pow3_at_least(z, u128::from(min_score) * block.len() as u128),
        None => false,
    }
}

/// `3^z ≥ x` without overflow.
fn pow3_at_least(z: usize, x: u128) -> bool {
    match u32::try_from(z).ok().and_then(|z| 3u128.checked_pow(z)) {
        Some(p) => p >= x,
        None => true, // 3^z beyond u128 exceeds any x
    }
}

/// The fewest trailing zero trits that reach `min_score` for a block of
/// `len` bytes: the smallest `z` with `3^z ≥ min_score · len`.
pub fn target_zeros(len: usize, min_score: u32) -> usize {
    let x = u128::from(min_score) * len as u128;
    (0..).find(|&z| pow3_at_least(z, x)).unwrap_or(0)
}

/// Lane masks for the six trits of nonce byte 0 over one 64-lane word, by
/// the byte's top two bits (the low six bits are the lane index).
type LowByteTable = [[(u64, u64); 6]; 4];

fn low_byte_table() -> LowByteTable {
    let mut t = [[(0u64, 0u64); 6]; 4];
    for (top, row) in t.iter_mut().enumerate() {
        for lane in 0..64u64 {
            let trits = b1t6::byte_trits(((top as u64) << 6 | lane) as u8);
            for (cell, trit) in row.iter_mut().zip(trits) {
                let c = Cell::<1>::splat(trit);
                cell.0 |= c.lo[0] & (1 << lane);
                cell.1 |= c.hi[0] & (1 << lane);
            }
        }
    }
    t
}

/// A reusable nonce searcher over the bit-sliced kernel (allocates once).
pub struct Searcher {
    curl: BctCurl<LANE_WORDS>,
    block: Box<PowBlock<LANE_WORDS>>,
    low: LowByteTable,
    /// Per 64-lane word, the nonce (of its first lane) whose trits the block
    /// holds; `None` before the first load. Consecutive passes change only
    /// the low bytes, so only those are rebuilt.
    loaded: [Option<u64>; LANE_WORDS],
}

impl Default for Searcher {
    fn default() -> Self {
        Self::new()
    }
}

impl Searcher {
    /// A searcher with its buffers allocated.
    pub fn new() -> Self {
        Self {
            curl: BctCurl::new(),
            block: Box::default(),
            low: low_byte_table(),
            loaded: [None; LANE_WORDS],
        }
    }

    /// Loads the nonce trits of nonces `base..base+LANES` (`base` a multiple
    /// of 64) into the block; the digest part is set by [`Self::set_digest`].
    fn load(&mut self, base: u64) {
        let low = &self.low;
        let cells = self.block.cells_mut();
        let (_, rest) = cells.split_at_mut(DIGEST_TRITS);
        let (nonce, _) = rest.split_at_mut(NONCE_TRITS);
        for (w, loaded) in self.loaded.iter_mut().enumerate() {
            let word_base = base.wrapping_add(64 * w as u64);
            let top = ((word_base >> 6) & 3) as usize;
            let bytes = word_base.to_le_bytes();
            // Bits that differ from the nonce the block holds (all at first).
            let changed = loaded.replace(word_base).map_or(!0, |b| b ^ word_base);
            for (byte_index, byte) in bytes.iter().enumerate() {
                // Unchanged bytes keep their trits (byte 0's are its top two
                // bits' lane patterns, so equal bytes give equal cells too).
                if (changed >> (8 * byte_index)) & 0xff == 0 {
                    continue;
                }
                let trits = b1t6::byte_trits(*byte);
                for (k, trit) in trits.iter().enumerate() {
                    let Some(cell) = nonce.get_mut(byte_index * 6 + k) else {
                        continue;
                    };
                    let (lo, hi) = if byte_index == 0 {
                        low.get(top)
                            .and_then(|r| r.get(k))
                            .copied()
                            .unwrap_or((!0, !0))
                    } else {
                        let c = Cell::<1>::splat(*trit);
                        (c.lo[0], c.hi[0])
                    };
                    cell.lo[w] = lo;
                    cell.hi[w] = hi;
                }
            }
        }
    }

    /// Hashes the `LANES` nonces from `base` (a multiple of 64) and returns the
    /// lane bits whose hash ends in at least `zeros` zero trits.
    pub fn pass(&mut self, digest: &[u8; 32], base: u64, zeros: usize) -> [u64; LANE_WORDS] {
        self.set_digest(digest);
        self.load(base & !63);
        self.curl.pow_pass_block(&self.block, zeros)
    }

    fn set_digest(&mut self, digest: &[u8; 32]) {
        for (i, b) in digest.iter().enumerate() {
            for (k, t) in b1t6::byte_trits(*b).iter().enumerate() {
                if let Some(c) = self.block.cells_mut().get_mut(i * 6 + k) {
                    *c = Cell::splat(*t);
                }
            }
        }
    }

    /// The smallest nonce in `start..start+count` whose PoW hash for `digest`
    /// ends in at least `zeros` zero trits; `None` if there is none or a flag in `stop` is set.
    pub fn search(
        &mut self,
        digest: &[u8; 32],
        zeros: usize,
        start: u64,
        count: u64,
        stop: &[&AtomicBool],
    ) -> Option<u64> {
        if zeros > HASH_LEN || count == 0 {
            return None;
        }
        self.set_digest(digest);
        let mut base = start & !63;
        // Lanes below `start` in the first pass are skipped; passes stop after the range.
        let span = u128::from(start - base) + u128::from(count);
        let passes = span.div_ceil(LANES as u128);
        for _ in 0..passes {
            if stop.iter().any(|f| f.load(Ordering::Relaxed)) {
                return None;
            }
            self.load(base);
            let hit = self.curl.pow_pass_block(&self.block, zeros);
            for (w, bits) in hit.iter().enumerate() {
                let mut bits = *bits;
                while bits != 0 {
                    let lane = u64::from(bits.trailing_zeros());
                    bits &= bits - 1;
                    let nonce = base.wrapping_add(64 * w as u64 + lane);
                    if nonce.wrapping_sub(start) < count {
                        return Some(nonce);
                    }
                }
            }
            base = base.wrapping_add(LANES as u64);
        }
        None
    }
}

/// The smallest nonce in `start..start+count` whose PoW hash for `digest`
/// has at least `zeros` trailing zero trits (one thread; `stop` cancels).
pub fn search_nonce(
    digest: &[u8; 32],
    zeros: usize,
    start: u64,
    count: u64,
    stop: &AtomicBool,
) -> Option<u64> {
    Searcher::new().search(digest, zeros, start, count, &[stop])
}

/// Finds a nonce giving the block `body ‖ nonce` (8 LE bytes) a score of at
/// least `min_score`. Runs `workers` threads (0 = one per core), each over its
/// own nonce range with the bit-sliced kernel; all stop as soon as one finds a
/// nonce. Returns `None` if `cancel` is set before that. A minimum of 0
/// returns nonce 0 at once.
pub fn mine(body: &[u8], min_score: u32, workers: usize, cancel: &AtomicBool) -> Option<u64> {
    if min_score == 0 {
        return Some(0);
    }
    let len = body.len().checked_add(NONCE_LEN)?;
    let zeros = target_zeros(len, min_score);
    let digest = blake2b256(body);
    let workers = match workers {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let found = AtomicBool::new(false);
    let chunk = u64::MAX / workers as u64;
    let run = |w: usize| {
        let start = chunk.saturating_mul(w as u64);
        let count = if w + 1 == workers {
            u64::MAX - start
        } else {
            chunk
        };
        let r = Searcher::new().search(&digest, zeros, start, count, &[cancel, &found]);
        if r.is_some() {
            found.store(true, Ordering::Relaxed);
        }
        r
    };
    if workers == 1 {
        return run(0);
    }
    match rayon::ThreadPoolBuilder::new().num_threads(workers).build() {
        Ok(pool) => pool
            .broadcast(|ctx| run(ctx.index()))
            .into_iter()
            .flatten()
            .min(),
        Err(_) => run(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_and_the_nonce_split_the_block() {
        let block: Vec<u8> = (1..=12).collect();
        assert_eq!(pow_body(&block), Some(&block[..4]));
        assert_eq!(
            block_nonce(&block),
            Some(u64::from_le_bytes([5, 6, 7, 8, 9, 10, 11, 12]))
        );
        assert_eq!(pow_digest(&block), Some(blake2b256(&block[..4])));
        assert_eq!(pow_body(&block[..8]), Some(&[][..]));
        for short in 0..8 {
            assert_eq!(pow_body(&block[..short]), None);
            assert_eq!(block_nonce(&block[..short]), None);
            assert_eq!(pow_digest(&block[..short]), None);
        }
    }
}
