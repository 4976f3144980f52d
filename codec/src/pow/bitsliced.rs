//! Bit-sliced Curl-P-81: `64·N` independent sponges per pass.
//!
//! Every trit position holds two bit planes (`lo`, `hi`), one bit per lane:
//! −1 = (1, 0), 0 = (1, 1), 1 = (0, 1). In this encoding the S-box is four
//! bitwise operations (`lo' = a.hi ^ (a.lo & !b.lo)`, `hi' = a.lo ^ (b.hi & lo')`,
//! found by an exhaustive search over encodings and small circuits), which
//! AVX-512 turns into two `vpternlog`s.
//!
//! Two rounds are fused: round-1 value `r1[P(i+1)]` is computed once, kept in
//! registers for the next step, and only round-2 values are stored. This
//! halves the stores. `P(j) = 364·j mod 729` is the index walk of the
//! reference transform.
//!
//! The fused double round runs **in place** on one buffer (half the memory of
//! ping-pong buffers, so twice the lanes fit in L1/L2): each step writes its
//! outputs into the slots of the inputs it has just read for the last time.
//! The layout is then permuted: logical trit `j` lives in slot `a·j mod 729`,
//! with `a` multiplied by 547 (= 1/4 mod 729) every double round.
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
        let lo = a.hi[k] ^ (a.lo[k] & !b.lo[k]);
        out.lo[k] = lo;
        out.hi[k] = a.lo[k] ^ (b.hi[k] & lo);
    }
    out
}

/// `P(j) = 364·j mod 729`: in round step `j`, `prev = P(j)` and `next = P(j+1)`.
const fn walk(j: usize) -> usize {
    (364 * j) % STATE_LEN
}

/// `x + a mod 729` for `x, a < 729`.
#[inline(always)]
fn add_mod(x: usize, a: usize) -> usize {
    let y = x + a;
    if y >= STATE_LEN {
        y - STATE_LEN
    } else {
        y
    }
}

/// Two rounds in place. On entry logical trit `j` is in slot `a·j mod 729`;
/// on exit logical trit `i` of the result is in slot `547·a·i mod 729`.
///
/// Fused step `i` needs `r1[P(i+1)]`, whose sources are `P(P(i+1)) =
/// 547·(i+1) mod 729` and that `+ 364`. Since `547 ≡ −182` and `729 = 4·182 + 1`,
/// steps `4m..4m+4` read the logical sources `(547+m, 182+m)`, `(365+m, m)`,
/// `(183+m, 547+m)`, `(1+m, 365+m)`; step 728 reads `(0, 364)` (computed
/// first). After step group `m` the logical cells `m`, `365+m`, `547+m` are
/// read for the last time, and `183+m` after group `m+1`; outputs `4m+k` go to
/// the slots of logical `547·(4m+k) ≡ m + {0, 547, 365, 183}[k]`, the last one
/// a group later, and output 728 to the slot of logical 182. So the new layout
/// is `i ↦ a·547·i` and no slot is written before its last read.
#[inline(always)]
fn double_round<const N: usize>(s: &mut [Cell<N>; BUF], a: usize) {
    let first = sbox(&s[0], &s[(364 * a % STATE_LEN) & MASK]);
    let mut prev = first;
    let mut p0 = 0;
    let mut p182 = 182 * a % STATE_LEN;
    let mut p365 = 365 * a % STATE_LEN;
    let mut p547 = 547 * a % STATE_LEN;
    // The output deferred by one group; the first one goes to the unused slot 729.
    let mut pending = first;
    let mut pending_at = STATE_LEN;
    for _ in 0..182 {
        // Keeps the loop vectorizer from turning groups into gathers; the
        // words of a cell are vectorized instead.
        std::hint::black_box(());
        let p1 = add_mod(p0, a);
        let p183 = add_mod(p182, a);
        let x0 = s[p0 & MASK];
        let x1 = s[p1 & MASK];
        let x182 = s[p182 & MASK];
        let x183 = s[p183 & MASK];
        let x365 = s[p365 & MASK];
        let x547 = s[p547 & MASK];
        let c0 = sbox(&x547, &x182);
        let c1 = sbox(&x365, &x0);
        let c2 = sbox(&x183, &x547);
        let c3 = sbox(&x1, &x365);
        s[pending_at & MASK] = pending;
        s[p0 & MASK] = sbox(&prev, &c0);
        s[p547 & MASK] = sbox(&c0, &c1);
        s[p365 & MASK] = sbox(&c1, &c2);
        pending = sbox(&c2, &c3);
        pending_at = p183;
        prev = c3;
        p0 = p1;
        p182 = p183;
        p365 = add_mod(p365, a);
        p547 = add_mod(p547, a);
    }
    s[pending_at & MASK] = pending;
    s[(182 * a % STATE_LEN) & MASK] = sbox(&prev, &first);
}

/// Two rounds from `src` into `dst` in logical order (the same fused steps as
/// [`double_round`]); faster than the in-place walk for one word per plane,
/// where two buffers still fit in L1.
#[inline(always)]
fn double_round_pp<const N: usize>(src: &[Cell<N>; BUF], dst: &mut [Cell<N>; BUF]) {
    let first = sbox(&src[0], &src[364]);
    let mut prev = first;
    for (m, out) in dst.chunks_exact_mut(4).take(182).enumerate() {
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

/// `547^40 mod 729`: the layout multiplier after [`rounds_80`].
const LAYOUT_80: usize = {
    let mut a = 1;
    let mut i = 0;
    while i < (ROUNDS - 1) / 2 {
        a = a * 547 % STATE_LEN;
        i += 1;
    }
    a
};

/// Slot of logical trit `j` in layout `a` (from [`rounds_80`]).
#[inline(always)]
fn slot(a: usize, j: usize) -> usize {
    (a * j % STATE_LEN) & MASK
}

/// The last round from `src` in layout `a` into `dst` in logical order.
#[inline(always)]
fn last_round<const N: usize>(src: &[Cell<N>; BUF], dst: &mut [Cell<N>; BUF], a: usize) {
    for (i, out) in dst.iter_mut().take(STATE_LEN).enumerate() {
        *out = sbox(&src[slot(a, walk(i))], &src[slot(a, walk(i + 1))]);
    }
}

/// 80 rounds (40 fused pairs) leaving the result in `s`, and its layout
/// multiplier (see [`slot`]). One word per plane ping-pongs through
/// `scratch` (both fit in L1); wider cells run in place.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn rounds_80<const N: usize>(s: &mut [Cell<N>; BUF], scratch: &mut [Cell<N>; BUF]) -> usize {
    if N == 1 {
        for _ in 0..(ROUNDS - 1) / 4 {
            double_round_pp(s, scratch);
            double_round_pp(scratch, s);
        }
        return 1;
    }
    let mut a = 1;
    for _ in 0..(ROUNDS - 1) / 2 {
        double_round(s, a);
        a = a * 547 % STATE_LEN;
    }
    debug_assert_eq!(a, LAYOUT_80);
    a
}

/// Bits of the lanes whose hash (the last round's outputs `243−zeros..243`
/// read from the state in layout `a` after [`rounds_80`]) ends in at least `zeros` zero trits.
#[inline(always)]
fn tail_zero_lanes<const N: usize>(s: &[Cell<N>; BUF], a: usize, zeros: usize) -> [u64; N] {
    let mut hit = [!0u64; N];
    for i in HASH_LEN.saturating_sub(zeros)..HASH_LEN {
        let c = sbox(&s[slot(a, walk(i))], &s[slot(a, walk(i + 1))]);
        for (h, z) in hit.iter_mut().zip(c.zero_lanes()) {
            *h &= z;
        }
    }
    hit
}

/// Trailing zero trits of the Curl-P-81 hash of one 243-trit block (the
/// first transform of a fresh sponge), on the bit-sliced kernel with the block
/// in every lane of a 64-lane state on the stack (2 × 16 KiB): no allocation,
/// several times faster than the scalar reference.
pub fn hash_trailing_zeros(block: &[Trit; HASH_LEN]) -> usize {
    let mut s = [Cell::<1>::ZERO_TRIT; BUF];
    let mut scratch = [Cell::<1>::ZERO_TRIT; BUF];
    for (c, t) in s.iter_mut().zip(block) {
        *c = Cell::splat(*t);
    }
    let a = rounds_80(&mut s, &mut scratch);
    (0..HASH_LEN)
        .rev()
        .take_while(|&i| {
            let c = sbox(&s[slot(a, walk(i))], &s[slot(a, walk(i + 1))]);
            c.zero_lanes()[0] & 1 == 1
        })
        .count()
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
        let a = rounds_80(&mut self.state, &mut self.scratch);
        last_round(&self.state, &mut self.scratch, a);
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
    /// (positions 0..243 set, the rest zero). Runs 80 rounds in place, then
    /// only the last round's outputs `243−zeros..243`, and returns the lanes
    /// whose hash ends in at least `zeros` zero trits. Afterwards the state
    /// is scrambled: load the next block into every cell (as
    /// [`Self::cells_mut`] users do) or [`Self::reset`] before reuse.
    pub fn pow_pass(&mut self, zeros: usize) -> [u64; N] {
        let a = rounds_80(&mut self.state, &mut self.scratch);
        tail_zero_lanes(&self.state, a, zeros)
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
