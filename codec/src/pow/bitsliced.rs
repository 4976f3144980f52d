//! Bit-sliced Curl-P-81: `64·N` independent sponges per pass.
//!
//! Every trit position holds two bit planes (`lo`, `hi`), one bit per lane:
//! −1 = (1, 0), 0 = (1, 1), 1 = (0, 1). The S-box is then five bitwise
//! operations on whole words, so a pass costs the same for all lanes.
//!
//! Two rounds are fused: round-1 value `r1[P(i+1)]` is computed once, kept in
//! registers for the next step, and only round-2 values are stored. This
//! halves the stores, which bound the plain loop. `P(j) = 364·j mod 729` is
//! the index walk of the reference transform.
//!
//! Nothing is allocated after construction.

use super::curl::{HASH_LEN, ROUNDS, STATE_LEN};
use super::ternary::Trit;

/// Buffer length: a power of two so that `& MASK` proves every index in bounds.
const BUF: usize = 1024;
const MASK: usize = BUF - 1;

/// One trit position across all lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Cell<const N: usize> {
    /// Low plane: set for −1 and 0.
    pub lo: [u64; N],
    /// High plane: set for 0 and 1.
    pub hi: [u64; N],
}

impl<const N: usize> Cell<N> {
    /// All lanes 0.
    pub const ZERO_TRIT: Self = Self {
        lo: [!0; N],
        hi: [!0; N],
    };

    /// All lanes holding `t` (−1, 0 or 1; anything else counts as 0).
    #[inline]
    pub fn splat(t: Trit) -> Self {
        let (l, h) = planes(t);
        Self {
            lo: [if l { !0 } else { 0 }; N],
            hi: [if h { !0 } else { 0 }; N],
        }
    }

    /// Bits of the lanes that hold 0.
    #[inline(always)]
    pub fn zero_lanes(&self) -> [u64; N] {
        std::array::from_fn(|k| self.lo[k] & self.hi[k])
    }
}

/// The planes of a trit.
#[inline]
fn planes(t: Trit) -> (bool, bool) {
    match t {
        -1 => (true, false),
        1 => (false, true),
        _ => (true, true),
    }
}

/// `T[a + 4·b + 5]` on every lane (checked against the table in the tests).
#[inline(always)]
fn sbox<const N: usize>(a: &Cell<N>, b: &Cell<N>) -> Cell<N> {
    let mut out = Cell {
        lo: [0; N],
        hi: [0; N],
    };
    for k in 0..N {
        let d = (a.lo[k] | !b.hi[k]) & (b.lo[k] ^ a.hi[k]);
        out.lo[k] = !d;
        out.hi[k] = (a.lo[k] ^ b.hi[k]) | d;
    }
    out
}

/// `P(j) = 364·j mod 729`: in round step `j`, `prev = P(j)` and `next = P(j+1)`.
const fn walk(j: usize) -> usize {
    (364 * j) % STATE_LEN
}

/// Two rounds from `src` into `dst`.
///
/// Fused step `i` needs `r1[P(i+1)]`, whose sources are `a = P(P(i+1)) =
/// 547·(i+1) mod 729` and `b = a + 364 mod 729`. Since `547 ≡ −182` and
/// `729 = 4·182 + 1`, `a` grows by exactly 1 every four steps: for steps
/// `4m..4m+4` the sources are `(547+m, 182+m)`, `(365+m, m)`, `(183+m, 547+m)`,
/// `(1+m, 365+m)` for `m < 182`, and step 728 reads `(0, 364)`. Constant
/// offsets from `m` make six sequential streams and no index arithmetic.
#[inline(always)]
fn double_round<const N: usize>(src: &[Cell<N>; BUF], dst: &mut [Cell<N>; BUF]) {
    let first = sbox(&src[0], &src[364]);
    let mut prev = first;
    for (m, out) in dst.chunks_exact_mut(4).take(182).enumerate() {
        // An opaque `m` keeps the loop vectorizer from turning the loop into
        // gathers across iterations; the words of a cell are vectorized instead.
        let m = std::hint::black_box(m);
        let c0 = sbox(&src[547 + m], &src[182 + m]);
        let c1 = sbox(&src[365 + m], &src[m]);
        let c2 = sbox(&src[183 + m], &src[547 + m]);
        let c3 = sbox(&src[1 + m], &src[365 + m]);
        out[0] = sbox(&prev, &c0);
        out[1] = sbox(&c0, &c1);
        out[2] = sbox(&c1, &c2);
        out[3] = sbox(&c2, &c3);
        prev = c3;
    }
    dst[STATE_LEN - 1] = sbox(&prev, &first);
}

/// One plain round from `src` into `dst`.
#[inline(always)]
fn single_round<const N: usize>(src: &[Cell<N>; BUF], dst: &mut [Cell<N>; BUF]) {
    for (i, out) in dst.iter_mut().take(STATE_LEN).enumerate() {
        *out = sbox(&src[walk(i) & MASK], &src[walk(i + 1) & MASK]);
    }
}

/// 80 rounds (40 fused pairs) leaving the result in `a`.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn rounds_80<const N: usize>(a: &mut [Cell<N>; BUF], b: &mut [Cell<N>; BUF]) {
    // Each iteration is four rounds: a → b → a.
    for _ in 0..(ROUNDS - 1) / 4 {
        double_round(a, b);
        double_round(b, a);
    }
}

/// `64·N` Curl-P-81 sponges at once.
pub struct BctCurl<const N: usize> {
    state: Box<[Cell<N>; BUF]>,
    scratch: Box<[Cell<N>; BUF]>,
    squeezed: bool,
}

impl<const N: usize> Default for BctCurl<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> BctCurl<N> {
    /// Lanes per pass.
    pub const LANES: usize = 64 * N;

    /// All lanes at the all-zero state.
    pub fn new() -> Self {
        Self {
            state: Box::new([Cell::ZERO_TRIT; BUF]),
            scratch: Box::new([Cell::ZERO_TRIT; BUF]),
            squeezed: false,
        }
    }

    /// All lanes back to the all-zero state.
    pub fn reset(&mut self) {
        self.state.fill(Cell::ZERO_TRIT);
        self.squeezed = false;
    }

    /// Sets trit `pos` (< 729) of lane `lane` (< 64·N); out-of-range positions are ignored.
    pub fn set_trit(&mut self, pos: usize, lane: usize, t: Trit) {
        if pos >= STATE_LEN || lane >= Self::LANES {
            return;
        }
        let (l, h) = planes(t);
        let (w, bit) = (lane / 64, 1u64 << (lane % 64));
        let c = &mut self.state[pos & MASK];
        if let (Some(lo), Some(hi)) = (c.lo.get_mut(w), c.hi.get_mut(w)) {
            *lo = if l { *lo | bit } else { *lo & !bit };
            *hi = if h { *hi | bit } else { *hi & !bit };
        }
    }

    /// Trit `pos` of lane `lane` (0 when out of range).
    pub fn trit(&self, pos: usize, lane: usize) -> Trit {
        if pos >= STATE_LEN || lane >= Self::LANES {
            return 0;
        }
        let (w, s) = (lane / 64, lane % 64);
        let c = &self.state[pos & MASK];
        let l = c.lo.get(w).is_some_and(|x| x >> s & 1 == 1);
        let h = c.hi.get(w).is_some_and(|x| x >> s & 1 == 1);
        match (l, h) {
            (true, false) => -1,
            (false, true) => 1,
            _ => 0,
        }
    }

    /// Mutable access to the state cells (positions 0..729).
    pub fn cells_mut(&mut self) -> &mut [Cell<N>] {
        &mut self.state[..STATE_LEN]
    }

    /// The state cells (positions 0..729).
    pub fn cells(&self) -> &[Cell<N>] {
        &self.state[..STATE_LEN]
    }

    /// The full 81-round permutation on every lane.
    pub fn transform(&mut self) {
        rounds_80(&mut self.state, &mut self.scratch);
        single_round(&self.state, &mut self.scratch);
        std::mem::swap(&mut self.state, &mut self.scratch);
    }

    /// Absorbs one 243-trit block per lane: `blocks[lane]` (missing lanes keep
    /// their rate trits), then transforms. Every block must be 243 trits.
    pub fn absorb_lanes(&mut self, blocks: &[&[Trit]]) {
        for (lane, block) in blocks.iter().enumerate().take(Self::LANES) {
            for (pos, t) in block.iter().enumerate().take(HASH_LEN) {
                self.set_trit(pos, lane, *t);
            }
        }
        self.transform();
        self.squeezed = false;
    }

    /// Squeezes the next 243 trits of lane `lane` into `out`.
    pub fn squeeze_lane(&mut self, lane: usize, out: &mut [Trit; HASH_LEN]) {
        if self.squeezed {
            self.transform();
        }
        for (pos, o) in out.iter_mut().enumerate() {
            *o = self.trit(pos, lane);
        }
        self.squeezed = true;
    }

    /// The proof-of-work pass: the state must hold the absorbed block
    /// (positions 0..243 set, the rest zero). Runs 80 rounds, then only the
    /// last round's outputs `243−zeros..243`, and returns the lanes whose
    /// hash ends in at least `zeros` zero trits.
    pub fn pow_pass(&mut self, zeros: usize) -> [u64; N] {
        rounds_80(&mut self.state, &mut self.scratch);
        let mut hit = [!0u64; N];
        for i in HASH_LEN.saturating_sub(zeros)..HASH_LEN {
            let c = sbox(&self.state[walk(i) & MASK], &self.state[walk(i + 1) & MASK]);
            for (h, z) in hit.iter_mut().zip(c.zero_lanes()) {
                *h &= z;
            }
        }
        hit
    }

    /// Trailing zero trits of lane `lane`'s hash after [`Self::transform`]
    /// (the squeezed 243 trits end at position 242).
    pub fn trailing_zeros(&self, lane: usize) -> usize {
        (0..HASH_LEN)
            .rev()
            .take_while(|&p| self.trit(p, lane) == 0)
            .count()
    }
}
