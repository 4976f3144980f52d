//! Indexer benchmarks (a timing harness, `harness = false`): 1 000 000 basic outputs over
//! 100 000 addresses booked in 1 000 milestones, then the heap bytes per indexed output,
//! the time to index one milestone, and query latency (`unlockableByAddress`, first and
//! cursor pages of an unfiltered query). HTTP-level figures come from the load tool
//! (`ledger-node tools bench-api --scenario indexer-address`, see BENCHMARKS.md).
//!
//! `cargo bench -p ledger-benches --bench indexer`

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ledger_codec::stardust::Address;
use ledger_codec::types::Hash32;
use ledger_engine::internals::indexer::{Filter, IndexEntry, Indexer, OutputKind, Query};

/// The system allocator, counting live heap bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` with the same arguments; the counter is only
// arithmetic on the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const OUTPUTS: u64 = 1_000_000;
const ADDRESSES: u64 = 100_000;
const PER_MILESTONE: u64 = 1_000;

fn address(i: u64) -> [u8; 33] {
    let mut key_hash = [0u8; 32];
    key_hash[..8].copy_from_slice(&i.to_le_bytes());
    Address::Ed25519(Hash32::owned(key_hash)).to_array()
}

fn entry(i: u64) -> IndexEntry {
    let mut id = [0u8; 34];
    id[..8].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes());
    IndexEntry {
        address: Some(address(i % ADDRESSES)),
        ..IndexEntry::new(id, OutputKind::Basic, 0)
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn latency(label: &str, mut runs: Vec<Duration>) {
    runs.sort_unstable();
    println!(
        "indexer_1M: {label}: p50 {:.1?} p99 {:.1?} max {:.1?} ({} queries)",
        percentile(&runs, 0.5),
        percentile(&runs, 0.99),
        runs[runs.len() - 1],
        runs.len()
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("benchmark harness: run it with `cargo bench`");
        return;
    }
    let before = LIVE.load(Ordering::Relaxed);
    let mut ix = Indexer::new(0);
    let mut apply = Vec::new();
    for m in 0..OUTPUTS / PER_MILESTONE {
        let entries: Vec<IndexEntry> = (m * PER_MILESTONE..(m + 1) * PER_MILESTONE)
            .map(entry)
            .collect();
        let t = Instant::now();
        ix.apply(
            u32::try_from(m + 1).expect("milestone index fits u32"),
            u32::try_from(m + 1).expect("milestone index fits u32"),
            &entries,
            &[],
        );
        apply.push(t.elapsed());
    }
    let bytes = LIVE.load(Ordering::Relaxed) - before;
    println!(
        "indexer_1M: {} outputs over {ADDRESSES} addresses: {:.0} MiB heap, {:.0} bytes per indexed output",
        ix.len(),
        bytes as f64 / (1 << 20) as f64,
        bytes as f64 / OUTPUTS as f64
    );
    latency("index one milestone of 1000 outputs", apply);

    // A busy milestone: 10 000 transactions, each spending one output and creating one.
    let mut churn = Vec::new();
    for round in 0..20u64 {
        let spent: Vec<[u8; 34]> = (round * 10_000..(round + 1) * 10_000)
            .map(|i| entry(i).output_id)
            .collect();
        let created: Vec<IndexEntry> = (OUTPUTS + round * 10_000..OUTPUTS + (round + 1) * 10_000)
            .map(entry)
            .collect();
        let index = u32::try_from(OUTPUTS / PER_MILESTONE + round + 1).expect("fits u32");
        let t = Instant::now();
        ix.apply(index, index, &created, &spent);
        churn.push(t.elapsed());
    }
    latency(
        "index a milestone of 10 000 spends and 10 000 new outputs",
        churn,
    );

    let query = |filter: Filter, cursor| Query {
        kinds: OutputKind::ALL.to_vec(),
        filter,
        page_size: 1000,
        cursor,
    };
    let by_address: Vec<Duration> = (0..20_000u64)
        .map(|k| {
            let q = query(
                Filter {
                    unlockable_by_address: Some(address(k.wrapping_mul(7_919) % ADDRESSES)),
                    ..Filter::default()
                },
                None,
            );
            let t = Instant::now();
            let page = ix.query(&q);
            let e = t.elapsed();
            assert_eq!(page.items.len(), (OUTPUTS / ADDRESSES) as usize);
            e
        })
        .collect();
    latency("outputs?unlockableByAddress (10 items)", by_address);
    let mut cursor = None;
    let pages: Vec<Duration> = (0..200)
        .map(|_| {
            let q = query(Filter::default(), cursor);
            let t = Instant::now();
            let page = ix.query(&q);
            let e = t.elapsed();
            assert_eq!(page.items.len(), 1000);
            cursor = page.next;
            e
        })
        .collect();
    latency("outputs, unfiltered, pages of 1000 by cursor", pages);
}
