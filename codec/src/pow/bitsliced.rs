//! Bit-sliced Curl-P-81: `64·N` independent sponges per pass.
//!
//! Every trit position holds two bit planes (`lo`, `hi`), one bit per lane:
//! −1 = (1, 0), 0 = (1, 1), 1 = (0, 1). In this encoding the S-box is four
//! bitwise operations (`lo' = a.hi ^ (a.lo & !b.lo)`, `hi' = a.lo ^ (b.hi & lo')`,
//! found by an exhaustive search over encodings and small circuits), which
//! AVX-512 turns into two `vpternlog`s.
//!
//! Rounds are **streamed in batches, in place**. With `P(j) = 364·j mod 729`
//! the index walk of the reference transform and `364 ≡ −1/2 (mod 729)`, the
//! state after `k` rounds read along the walk satisfies a recurrence with lags
//! `1, −2, 4, −8`: so a batch of `k` rounds reads each input cell once, keeps
//! a small window of intermediate cells in registers, and writes output `i`
//! into the slot of the cell it has just read. One load and one store per
//! cell per batch (instead of per round or per two rounds), one buffer. The
//! layout changes affinely: logical trit `j` lives in slot `(a·j + b) mod 729`
//! ([`Layout`]). A transform is one three-round batch, 18 four-round batches
//! (the window of 15 cells fits AVX-512's 32 registers) and, for the full
//! permutation, two more three-round batches.
//!
//! A PoW pass reads its block from a separate [`PowBlock`] in the first batch
//! (the 486 zero capacity cells are a constant, not a memory write per pass),
//! runs 75 rounds in full and the last six only for the cells the checked hash
//! tail depends on (`zeros`, `zeros + 1`, `zeros + 3`, …, `zeros + 31` cells).
//!
//! One word per plane (64 lanes, the single-block `pow_score` path) keeps the
//! two-buffer fused double round, which LLVM vectorizes across cells there.
//!
//! Nothing is allocated after construction.

use super::curl::{HASH_LEN, ROUNDS, STATE_LEN};
use super::ternary::Trit;

/// Buffer length: a power of two so that `& MASK` proves every index in bounds.
const BUF: usize = 1024;
const MASK: usize = BUF - 1;

/// The state buffer, aligned so that no cell straddles a cache line
/// (for `N` a power of two).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Buf<const N: usize>([Cell<N>; BUF]);

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

    /// Clears in `hit` the lanes that do not hold 0.
    #[inline(always)]
    fn keep_zero_lanes(&self, hit: &mut [u64; N]) {
        for (h, z) in hit.iter_mut().zip(self.zero_lanes()) {
            *h &= z;
        }
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

/// `364³ mod 729`: logical stride of the sequence a three-round batch reads.
const G0: usize = 91;
/// How far (in steps) a batch's loads run ahead of its stores.
const AHEAD: usize = 5;
/// Rounds per batch.
const BATCH: usize = 3;
/// Steps per loop iteration.
const STEPS: usize = 8;
const _: () = assert!(STATE_LEN % STEPS == 1);
/// Three-round batches after the four-round ones in a full transform
/// (3 + 18·4 + 2·3 = 81 rounds).
const MORE_81: usize = 2;
const _: () = assert!(BATCH + BATCHES4 * 4 + MORE_81 * BATCH == ROUNDS);

/// Where the state lives in the buffer: logical trit `j` is in slot
/// `(a·j + b) mod 729`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    a: usize,
    b: usize,
}

impl Layout {
    /// Logical order.
    const IDENTITY: Self = Self { a: 1, b: 0 };

    /// The slot of logical trit `j` (any `j`, taken mod 729).
    #[inline(always)]
    fn slot(self, j: usize) -> usize {
        ((self.a * (j % STATE_LEN) + self.b) % STATE_LEN) & MASK
    }

    /// The layout after a batch reading stride `g` (`G0` for [`batch`], `G4`
    /// for [`batch4`]): output `i` goes to the slot of input `g·(i + 5)`.
    const fn after_batch(self, g: usize) -> Self {
        Self {
            a: self.a * g % STATE_LEN,
            b: (self.a * (g * AHEAD % STATE_LEN) + self.b) % STATE_LEN,
        }
    }

    /// The layout after one [`batch`].
    const fn next(self) -> Self {
        self.after_batch(G0)
    }

    /// The layout after one [`batch4`].
    const fn next4(self) -> Self {
        self.after_batch(G4)
    }

    /// The layout after [`batches`] with `more` final three-round batches.
    const fn after(more: usize) -> Self {
        let mut l = Self::IDENTITY.next();
        let mut i = 0;
        while i < BATCHES4 {
            l = l.next4();
            i += 1;
        }
        i = 0;
        while i < more {
            l = l.next();
            i += 1;
        }
        l
    }
}

/// The carried values of a batch before step `i`:
/// `w = x0(i+1..i+5)`, `v = x1(i-1..i+1)`, `u = x2(i)`.
struct Window<const N: usize> {
    w: [Cell<N>; 4],
    v: [Cell<N>; 2],
    u: Cell<N>,
}

/// Runs `$step(p)` on the 729 slots `$start, $start + $stride, …` (mod 729)
/// in order: the streaming loop of every batch. A macro, not a function
/// taking a closure: LLVM leaves such a closure out of line, where it runs
/// without the AVX-512 features of the multiversioned caller (20× slower).
macro_rules! stream {
    ($start:expr, $stride:expr, |$p:ident| $step:expr) => {{
        let stride = $stride;
        let mut $p = $start;
        macro_rules! one {
            () => {
                $step;
                $p += stride;
                if $p >= STATE_LEN {
                    $p -= STATE_LEN;
                }
            };
        }
        for _ in 0..STATE_LEN / STEPS {
            // Keeps the loop vectorizer from turning steps into gathers; the
            // words of a cell are vectorized instead.
            std::hint::black_box(());
            // Written out: LLVM does not unroll eight wide steps by itself,
            // and the rolled loop pays register moves for the window.
            one!();
            one!();
            one!();
            one!();
            one!();
            one!();
            one!();
            one!();
        }
        // 729 = 8·91 + 1.
        $step;
    }};
}

/// Step `i` of a batch: loads `x0(i+5)` from slot `p`, computes `x1(i+1)`,
/// `x2(i+1)`, the output `x3(i)`, and stores it into slot `p` (just read for
/// the only time).
#[inline(always)]
fn step<const N: usize, L: Fn(&[Cell<N>; BUF], usize) -> Cell<N>>(
    s: &mut [Cell<N>; BUF],
    load: &L,
    p: usize,
    win: &mut Window<N>,
) {
    let c = load(s, p);
    let x1 = sbox(&win.w[0], &c);
    let x2 = sbox(&x1, &win.v[0]);
    s[p & MASK] = sbox(&win.u, &x2);
    win.w = [win.w[1], win.w[2], win.w[3], c];
    win.v = [win.v[1], x1];
    win.u = x2;
}

/// Three rounds in place, streaming. With `P(j) = 364·j` the walk of the
/// reference transform and `x_r(m) = r_r[364^(3−r)·m]` (the state after
/// round `r` of the batch, read along that walk):
/// `x3(i) = S(x2(i), x2(i+1))`, `x2(m) = S(x1(m), x1(m−2))`,
/// `x1(m) = S(x0(m), x0(m+4))`, `x0(m) = r0[91·m]` (all indices mod 729;
/// `364 ≡ −1/2`, so the lags are `1, −2, 4`). Step `i` reads one input cell,
/// `x0(i+5)`, which no later step needs (the window keeps it), and writes
/// output `i` into its slot. So each cell is loaded and stored once per
/// three rounds, and the layout becomes [`Layout::next`]. The first steps'
/// window (`x0(−2..5)`) is read before anything is written. `load(s, slot)`
/// reads an input cell: from `s` itself, or for the first batch of a PoW pass
/// from the block (see [`PowBlock`]).
#[inline(always)]
fn batch<const N: usize, L: Fn(&[Cell<N>; BUF], usize) -> Cell<N>>(
    s: &mut [Cell<N>; BUF],
    lay: Layout,
    load: L,
) {
    let x0 = |s: &[Cell<N>; BUF], m: usize| load(s, lay.slot(G0 * (m % STATE_LEN)));
    let (m1, m2) = (STATE_LEN - 1, STATE_LEN - 2);
    let x1_0 = sbox(&x0(s, 0), &x0(s, 4));
    let x1_m2 = sbox(&x0(s, m2), &x0(s, 2));
    let mut win = Window {
        w: [x0(s, 1), x0(s, 2), x0(s, 3), x0(s, 4)],
        v: [sbox(&x0(s, m1), &x0(s, 3)), x1_0],
        u: sbox(&x1_0, &x1_m2),
    };
    stream!(lay.slot(G0 * AHEAD), lay.a * G0 % STATE_LEN, |p| step(
        s, &load, p, &mut win
    ));
}

/// `364⁴ mod 729`: logical stride of the sequence a four-round batch reads.
const G4: usize = 319;
/// Four-round batches in the middle of every transform.
const BATCHES4: usize = 18;

/// The carried values of a four-round batch before step `i`:
/// `x0(i−3..i+5)`, `x1(i+1..i+5)`, `x2(i−1..i+1)`, `x3(i)`.
struct Window4<const N: usize> {
    w0: [Cell<N>; 8],
    w1: [Cell<N>; 4],
    w2: [Cell<N>; 2],
    w3: Cell<N>,
}

/// Step `i` of a four-round batch: loads `x0(i+5)` from slot `p`, computes
/// `x1(i+5)`, `x2(i+1)`, `x3(i+1)` and the output `x4(i)` into slot `p`.
#[inline(always)]
fn step4<const N: usize>(s: &mut [Cell<N>; BUF], p: usize, win: &mut Window4<N>) {
    let c = s[p & MASK];
    let x1 = sbox(&c, &win.w0[0]);
    let x2 = sbox(&win.w1[0], &x1);
    let x3 = sbox(&x2, &win.w2[0]);
    s[p & MASK] = sbox(&win.w3, &x3);
    let w = &win.w0;
    win.w0 = [w[1], w[2], w[3], w[4], w[5], w[6], w[7], c];
    win.w1 = [win.w1[1], win.w1[2], win.w1[3], x1];
    win.w2 = [win.w2[1], x2];
    win.w3 = x3;
}

/// Four rounds in place, streaming like [`batch`]:
/// `x4(i) = S(x3(i), x3(i+1))`, `x3(m) = S(x2(m), x2(m−2))`,
/// `x2(m) = S(x1(m), x1(m+4))`, `x1(m) = S(x0(m), x0(m−8))`,
/// `x0(m) = r0[319·m]`. One load and one store per cell per four rounds; the
/// window (15 cells) mostly stays in registers with AVX-512's 32 vector
/// registers. The layout becomes [`Layout::next4`].
#[inline(always)]
fn batch4<const N: usize>(s: &mut [Cell<N>; BUF], lay: Layout) {
    // `m` is taken mod 729 (the prologue reaches back to `x0(−10)`). Plain
    // functions, not closures: LLVM leaves nested closures out of line,
    // where they run without the AVX-512 target features (~4 % of a pass).
    #[inline(always)]
    fn x0<const N: usize>(s: &[Cell<N>; BUF], lay: Layout, m: usize) -> Cell<N> {
        s[lay.slot(G4 * (m % STATE_LEN))]
    }
    #[inline(always)]
    fn x1<const N: usize>(s: &[Cell<N>; BUF], lay: Layout, m: usize) -> Cell<N> {
        sbox(&x0(s, lay, m), &x0(s, lay, m + STATE_LEN - 8))
    }
    #[inline(always)]
    fn x2<const N: usize>(s: &[Cell<N>; BUF], lay: Layout, m: usize) -> Cell<N> {
        sbox(&x1(s, lay, m), &x1(s, lay, m + 4))
    }
    #[inline(always)]
    fn x3<const N: usize>(s: &[Cell<N>; BUF], lay: Layout, m: usize) -> Cell<N> {
        sbox(&x2(s, lay, m), &x2(s, lay, m + STATE_LEN - 2))
    }
    let m3 = STATE_LEN - 3;
    let mut win = Window4 {
        w0: [
            x0(s, lay, m3),
            x0(s, lay, m3 + 1),
            x0(s, lay, m3 + 2),
            x0(s, lay, m3 + 3),
            x0(s, lay, m3 + 4),
            x0(s, lay, m3 + 5),
            x0(s, lay, m3 + 6),
            x0(s, lay, m3 + 7),
        ],
        w1: [x1(s, lay, 1), x1(s, lay, 2), x1(s, lay, 3), x1(s, lay, 4)],
        w2: [x2(s, lay, STATE_LEN - 1), x2(s, lay, 0)],
        w3: x3(s, lay, STATE_LEN),
    };
    stream!(lay.slot(G4 * AHEAD), lay.a * G4 % STATE_LEN, |p| step4(
        s, p, &mut win
    ));
}

/// One three-round batch (reading the block if given), the 18 four-round
/// batches (75 rounds in all), then `more` three-round batches, in place from
/// logical order; returns the layout.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn batches<const N: usize>(
    s: &mut [Cell<N>; BUF],
    block: Option<&PowBlock<N>>,
    more: usize,
) -> Layout {
    let mut lay = Layout::IDENTITY;
    match block {
        // Identity layout: the slot is the position; positions ≥ 243 read the zero cell.
        Some(b) => batch(s, lay, |_, p| b.cells[p.min(HASH_LEN)]),
        None => batch(s, lay, |s, p| s[p & MASK]),
    }
    lay = lay.next();
    for _ in 0..BATCHES4 {
        batch4(s, lay);
        lay = lay.next4();
    }
    for _ in 0..more {
        batch(s, lay, |s, p| s[p & MASK]);
        lay = lay.next();
    }
    lay
}

/// The Curl input of `64·N` PoW candidates (243 cells), kept apart from the
/// state so that a pass does not have to write the 486 zero cells of the
/// capacity: the first batch reads them as a constant.
#[derive(Clone, Debug)]
#[repr(C, align(64))] // no cell straddles a cache line (N a power of two)
pub struct PowBlock<const N: usize> {
    /// Positions 0..243, then one all-zero cell.
    cells: [Cell<N>; HASH_LEN + 1],
}

impl<const N: usize> Default for PowBlock<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> PowBlock<N> {
    /// All lanes 0.
    pub fn new() -> Self {
        Self {
            cells: [Cell::ZERO_TRIT; HASH_LEN + 1],
        }
    }

    /// The 243 input cells.
    pub fn cells_mut(&mut self) -> &mut [Cell<N>] {
        &mut self.cells[..HASH_LEN]
    }
}

/// Two rounds from `src` into `dst` in logical order, fusing the steps in
/// groups of four (round-1 value `r1[P(i+1)]` is kept for step `i+1`). For one
/// word per plane this is faster than the streaming [`batch`]: both buffers
/// fit in L1 and LLVM vectorizes across groups.
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

/// `P(j) = 364·j mod 729`: in round step `j`, `prev = P(j)` and `next = P(j+1)`.
const fn walk(j: usize) -> usize {
    (364 * j) % STATE_LEN
}

/// 80 rounds through two buffers (ending in `s`), for one word per plane.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn rounds_80_pp<const N: usize>(s: &mut [Cell<N>; BUF], scratch: &mut [Cell<N>; BUF]) {
    for _ in 0..(ROUNDS - 1) / 4 {
        double_round_pp(s, scratch);
        double_round_pp(scratch, s);
    }
}

/// Output `i` of the last round from the state after [`rounds_80_pp`].
#[inline(always)]
fn last_round_cell<const N: usize>(s: &[Cell<N>; BUF], i: usize) -> Cell<N> {
    sbox(&s[walk(i) & MASK], &s[walk(i + 1) & MASK])
}

/// The layout after a whole transform.
const LAYOUT_81: Layout = Layout::after(MORE_81);

/// Bits of the lanes whose hash (trits `243−zeros..243` of the state in
/// layout `lay`) ends in at least `zeros` zero trits.
#[inline(always)]
fn tail_zero_lanes<const N: usize>(s: &[Cell<N>; BUF], lay: Layout, zeros: usize) -> [u64; N] {
    let mut hit = [!0u64; N];
    for i in HASH_LEN.saturating_sub(zeros)..HASH_LEN {
        s[lay.slot(i)].keep_zero_lanes(&mut hit);
    }
    hit
}

/// Rounds at the end of a PoW pass computed only for the cells that the
/// checked hash tail depends on: the last round needs `zeros` cells, the one
/// before `zeros + 1`, then `zeros + 3`, `zeros + 7`, ... (at most 274 for
/// six rounds and 243 zeros). Nine tail rounds (up to `zeros + 255` cells)
/// measured slower: an indexed cell costs several streamed ones.
const TAIL_ROUNDS: usize = 6;
/// Most cells per tail round (a larger tail would run the full batches).
const TAIL_CAP: usize = 512;
const _: () = assert!(BATCH + BATCHES4 * 4 + TAIL_ROUNDS == ROUNDS);
/// The layout after the 75 full rounds before the tail rounds.
const LAYOUT_HEAD: Layout = Layout::after(0);

/// Which cells the tail rounds compute, for one `zeros`.
struct TailPlan {
    /// The `zeros` this plan is for; `None` before the first build or when
    /// the tail is too large for [`TAIL_CAP`].
    zeros: Option<usize>,
    /// Cells computed per tail round.
    len: [usize; TAIL_ROUNDS],
    /// Per tail round, the inputs of each computed cell: state slots (in
    /// [`LAYOUT_HEAD`]) for the first round, indices into the previous
    /// round's cells after that.
    inputs: [[(u16, u16); TAIL_CAP]; TAIL_ROUNDS],
}

impl TailPlan {
    fn new() -> Self {
        Self {
            zeros: None,
            len: [0; TAIL_ROUNDS],
            inputs: [[(0, 0); TAIL_CAP]; TAIL_ROUNDS],
        }
    }

    /// Builds the plan for `zeros` trailing trits; false if it does not fit.
    fn build(&mut self, zeros: usize) -> bool {
        self.zeros = None;
        let mut cur = [0u16; STATE_LEN];
        let mut cur_len = 0;
        for (c, q) in cur.iter_mut().zip(HASH_LEN.saturating_sub(zeros)..HASH_LEN) {
            *c = q as u16;
            cur_len += 1;
        }
        for t in (0..TAIL_ROUNDS).rev() {
            if cur_len > TAIL_CAP {
                return false;
            }
            // Cells of the round before that the current cells read.
            let mut index = [u16::MAX; STATE_LEN];
            for &q in cur.iter().take(cur_len) {
                for j in [walk(usize::from(q)), walk(usize::from(q) + 1)] {
                    if let Some(x) = index.get_mut(j) {
                        *x = 0;
                    }
                }
            }
            let mut prev = [0u16; STATE_LEN];
            let mut prev_len = 0;
            for (j, x) in index.iter_mut().enumerate() {
                if *x == 0 {
                    *x = prev_len as u16;
                    if let Some(p) = prev.get_mut(prev_len) {
                        *p = j as u16;
                    }
                    prev_len += 1;
                }
            }
            let (Some(len), Some(inputs)) = (self.len.get_mut(t), self.inputs.get_mut(t)) else {
                return false;
            };
            *len = cur_len;
            for (io, &q) in inputs.iter_mut().zip(cur.iter().take(cur_len)) {
                let (a, b) = (walk(usize::from(q)), walk(usize::from(q) + 1));
                *io = if t == 0 {
                    (LAYOUT_HEAD.slot(a) as u16, LAYOUT_HEAD.slot(b) as u16)
                } else {
                    (
                        index.get(a).copied().unwrap_or(0),
                        index.get(b).copied().unwrap_or(0),
                    )
                };
            }
            cur = prev;
            cur_len = prev_len;
        }
        self.zeros = Some(zeros);
        true
    }
}

/// Runs the tail rounds of `plan` on the state after 75 rounds (cells
/// kept in `scratch`, its two halves used in turn) and returns the lanes
/// whose last `zeros` hash trits are all zero.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn run_tail<const N: usize>(
    plan: &TailPlan,
    s: &[Cell<N>; BUF],
    scratch: &mut [Cell<N>; BUF],
) -> [u64; N] {
    let mut hit = [!0u64; N];
    let mut src = 0;
    for (t, (inputs, &len)) in plan.inputs.iter().zip(&plan.len).enumerate() {
        let dst = TAIL_CAP - src;
        for (k, &(a, b)) in inputs.iter().take(len).enumerate() {
            let (a, b) = (usize::from(a), usize::from(b));
            let c = if t == 0 {
                sbox(&s[a & MASK], &s[b & MASK])
            } else {
                sbox(&scratch[(src + a) & MASK], &scratch[(src + b) & MASK])
            };
            if t + 1 == TAIL_ROUNDS {
                c.keep_zero_lanes(&mut hit);
            } else {
                scratch[(dst + k) & MASK] = c;
            }
        }
        src = dst;
    }
    hit
}

/// Trailing zero trits of the Curl-P-81 hash of one 243-trit block (the
/// first transform of a fresh sponge), on the bit-sliced kernel with the block
/// in every lane of a 64-lane state on the stack (2 × 16 KiB): no allocation,
/// several times faster than the scalar reference.
pub fn hash_trailing_zeros(block: &[Trit; HASH_LEN]) -> usize {
    let mut s = Buf([Cell::<1>::ZERO_TRIT; BUF]);
    let mut scratch = Buf([Cell::<1>::ZERO_TRIT; BUF]);
    for (c, t) in s.0.iter_mut().zip(block) {
        *c = Cell::splat(*t);
    }
    rounds_80_pp(&mut s.0, &mut scratch.0);
    (0..HASH_LEN)
        .rev()
        .take_while(|&i| last_round_cell(&s.0, i).zero_lanes()[0] & 1 == 1)
        .count()
}

/// `64·N` Curl-P-81 sponges at once.
pub struct BctCurl<const N: usize> {
    state: Box<Buf<N>>,
    scratch: Box<Buf<N>>,
    tail: Box<TailPlan>,
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
            state: Box::new(Buf([Cell::ZERO_TRIT; BUF])),
            scratch: Box::new(Buf([Cell::ZERO_TRIT; BUF])),
            tail: Box::new(TailPlan::new()),
            squeezed: false,
        }
    }

    /// All lanes back to the all-zero state.
    pub fn reset(&mut self) {
        self.state.0.fill(Cell::ZERO_TRIT);
        self.squeezed = false;
    }

    /// Sets trit `pos` (< 729) of lane `lane` (< 64·N); out-of-range positions are ignored.
    pub fn set_trit(&mut self, pos: usize, lane: usize, t: Trit) {
        if pos >= STATE_LEN || lane >= Self::LANES {
            return;
        }
        let (l, h) = planes(t);
        let (w, bit) = (lane / 64, 1u64 << (lane % 64));
        let c = &mut self.state.0[pos & MASK];
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
        let c = &self.state.0[pos & MASK];
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
        &mut self.state.0[..STATE_LEN]
    }

    /// The state cells (positions 0..729).
    pub fn cells(&self) -> &[Cell<N>] {
        &self.state.0[..STATE_LEN]
    }

    /// The full 81-round permutation on every lane.
    pub fn transform(&mut self) {
        if N == 1 {
            rounds_80_pp(&mut self.state.0, &mut self.scratch.0);
            for (i, out) in self.scratch.0.iter_mut().take(STATE_LEN).enumerate() {
                *out = last_round_cell(&self.state.0, i);
            }
        } else {
            let lay = batches(&mut self.state.0, None, MORE_81);
            debug_assert_eq!(lay, LAYOUT_81);
            for (j, out) in self.scratch.0.iter_mut().take(STATE_LEN).enumerate() {
                *out = self.state.0[lay.slot(j)];
            }
        }
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
    /// (positions 0..243 set, the rest zero). Runs the rounds in place, the
    /// last ones only for the cells behind the hash trits `243−zeros..243`,
    /// and returns the lanes whose hash ends in at least `zeros` zero trits.
    /// [`Self::pow_pass_block`] does the same without loading the state
    /// first. Afterwards the state is scrambled: load the next block into
    /// every cell (as [`Self::cells_mut`] users do) or [`Self::reset`] before
    /// reuse.
    pub fn pow_pass(&mut self, zeros: usize) -> [u64; N] {
        if N == 1 {
            rounds_80_pp(&mut self.state.0, &mut self.scratch.0);
            let mut hit = [!0u64; N];
            for i in HASH_LEN.saturating_sub(zeros)..HASH_LEN {
                let c = last_round_cell(&self.state.0, i);
                c.keep_zero_lanes(&mut hit);
            }
            return hit;
        }
        self.pass(None, zeros)
    }

    /// [`Self::pow_pass`] on `block` (the state's previous content does not
    /// matter and is scrambled afterwards).
    pub fn pow_pass_block(&mut self, block: &PowBlock<N>, zeros: usize) -> [u64; N] {
        if N == 1 {
            self.state.0.fill(Cell::ZERO_TRIT);
            self.state.0[..HASH_LEN].copy_from_slice(&block.cells[..HASH_LEN]);
            return self.pow_pass(zeros);
        }
        self.pass(Some(block), zeros)
    }

    /// 75 rounds in full, then the tail rounds only for the cells the hash
    /// tail needs (all 81 in full if the tail were too long for that).
    fn pass(&mut self, block: Option<&PowBlock<N>>, zeros: usize) -> [u64; N] {
        if zeros == 0 {
            return [!0; N];
        }
        if self.tail.zeros == Some(zeros) || self.tail.build(zeros) {
            let lay = batches(&mut self.state.0, block, 0);
            debug_assert_eq!(lay, LAYOUT_HEAD);
            return run_tail(&self.tail, &self.state.0, &mut self.scratch.0);
        }
        let lay = batches(&mut self.state.0, block, MORE_81);
        tail_zero_lanes(&self.state.0, lay, zeros)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic trit per (lane, position).
    fn trit(lane: usize, pos: usize, seed: u64) -> Trit {
        let x = (lane as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (pos as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ seed;
        let x = x ^ (x >> 29);
        (x.wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 60) as Trit % 3 - 1
    }

    /// The PoW pass (tail rounds, or full batches for long tails, with and
    /// without a `PowBlock`) against the full transform, lane by lane.
    fn pass_matches_transform<const N: usize>(seed: u64) {
        let lanes = BctCurl::<N>::LANES;
        let mut full = BctCurl::<N>::new();
        let mut block = PowBlock::<N>::new();
        for lane in 0..lanes {
            for pos in 0..HASH_LEN {
                full.set_trit(pos, lane, trit(lane, pos, seed));
            }
        }
        block.cells_mut().copy_from_slice(&full.cells()[..HASH_LEN]);
        let mut pass = BctCurl::<N>::new();
        let mut from_state = BctCurl::<N>::new();
        full.transform();
        for zeros in [0, 1, 2, 3, 4, 12, 31, 32, 60, 243] {
            let got = pass.pow_pass_block(&block, zeros);
            from_state.reset();
            from_state.cells_mut()[..HASH_LEN].copy_from_slice(block.cells_mut());
            let got_state = from_state.pow_pass(zeros);
            for lane in 0..lanes {
                let want = full.trailing_zeros(lane) >= zeros;
                let bit = |m: &[u64; N]| m[lane / 64] >> (lane % 64) & 1 == 1;
                assert_eq!(bit(&got), want, "N {N} zeros {zeros} lane {lane}");
                assert_eq!(bit(&got_state), want, "N {N} zeros {zeros} lane {lane}");
            }
        }
    }

    #[test]
    fn pow_pass_equals_full_transform() {
        for seed in 0..3 {
            pass_matches_transform::<1>(seed);
            pass_matches_transform::<4>(seed);
            pass_matches_transform::<8>(seed);
        }
    }

    #[test]
    fn tail_rounds_grow_by_powers_of_two() {
        // Tail round `t` (of 6) needs `zeros + 2^(5−t) − 1` cells: the cells
        // read by a run of consecutive outputs form a run one longer, then
        // two, four, ... longer (the walk's lags are 1, −2, 4, ...).
        let mut plan = TailPlan::new();
        for zeros in 1..=HASH_LEN {
            assert!(plan.build(zeros), "zeros {zeros}");
            for (t, &len) in plan.len.iter().enumerate() {
                let want = zeros + (1 << (TAIL_ROUNDS - 1 - t)) - 1;
                assert_eq!(len, want, "zeros {zeros} round {t}");
            }
            assert_eq!(plan.zeros, Some(zeros));
        }
    }

    #[test]
    fn layouts_are_affine_permutations() {
        for l in [LAYOUT_HEAD, LAYOUT_81, Layout::after(1)] {
            let mut seen = [false; STATE_LEN];
            for j in 0..STATE_LEN {
                seen[l.slot(j)] = true;
            }
            assert!(seen.iter().all(|&x| x));
        }
    }
}
