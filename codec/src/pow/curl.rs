//! Curl-P-81, the plain scalar reference: one trit per `i8`, easy to read,
//! used by the tests and as the judge of the bit-sliced kernel.

use super::ternary::Trit;
use crate::error::{Error, Result};

/// Trits absorbed or squeezed per block.
pub const HASH_LEN: usize = 243;
/// Trits of sponge state.
pub const STATE_LEN: usize = 3 * HASH_LEN;
/// Rounds of one transform.
pub const ROUNDS: usize = 81;

/// The S-box: `T[a + 4·b + 5]` for `a = state[prev]`, `b = state[next]`.
const TRUTH_TABLE: [Trit; 11] = [1, 0, -1, 2, 1, -1, 0, 2, -1, 1, 0];

/// The Curl-P-81 sponge (state of 729 trits, rate 243).
#[derive(Clone)]
pub struct CurlP81 {
    state: [Trit; STATE_LEN],
    /// Whether a squeeze has happened since the last absorb (the next one transforms first).
    squeezed: bool,
}

impl Default for CurlP81 {
    fn default() -> Self {
        Self::new()
    }
}

impl CurlP81 {
    /// A sponge with an all-zero state.
    pub fn new() -> Self {
        Self {
            state: [0; STATE_LEN],
            squeezed: false,
        }
    }

    /// Back to the all-zero state.
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// Absorbs trits: a multiple of 243, each −1, 0 or 1. Each block overwrites
    /// `state[0..243]` and transforms.
    pub fn absorb(&mut self, trits: &[Trit]) -> Result<()> {
        if !trits.len().is_multiple_of(HASH_LEN) {
            return Err(Error::invalid("Curl input is not a multiple of 243 trits"));
        }
        if trits.iter().any(|t| !(-1..=1).contains(t)) {
            return Err(Error::invalid("Curl input holds an invalid trit"));
        }
        for chunk in trits.chunks_exact(HASH_LEN) {
            self.state[..HASH_LEN].copy_from_slice(chunk);
            self.transform();
        }
        self.squeezed = false;
        Ok(())
    }

    /// Squeezes a multiple of 243 trits into `out`; the state is transformed
    /// before every block but the first after an absorb.
    pub fn squeeze(&mut self, out: &mut [Trit]) -> Result<()> {
        if !out.len().is_multiple_of(HASH_LEN) {
            return Err(Error::invalid("Curl output is not a multiple of 243 trits"));
        }
        for chunk in out.chunks_exact_mut(HASH_LEN) {
            if self.squeezed {
                self.transform();
            }
            chunk.copy_from_slice(&self.state[..HASH_LEN]);
            self.squeezed = true;
        }
        Ok(())
    }

    /// The 81-round permutation of the state.
    pub fn transform(&mut self) {
        let mut copy = [0; STATE_LEN];
        for _ in 0..ROUNDS {
            copy.copy_from_slice(&self.state);
            let mut idx = 0usize;
            for cell in self.state.iter_mut() {
                let prev = idx;
                idx = if idx < 365 { idx + 364 } else { idx - 365 };
                let a = copy[prev];
                let b = copy[idx];
                // a, b ∈ −1..=1, so the index is in 0..=10.
                *cell = TRUTH_TABLE[(a + 4 * b + 5) as usize];
            }
        }
    }
}

/// Curl-P-81 hash (243 trits) of a trit string whose length is a multiple of 243.
pub fn hash(trits: &[Trit]) -> Result<[Trit; HASH_LEN]> {
    let mut c = CurlP81::new();
    c.absorb(trits)?;
    let mut out = [0; HASH_LEN];
    c.squeeze(&mut out)?;
    Ok(out)
}
