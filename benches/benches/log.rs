//! Block log harness: append throughput per durability mode, reopen time of a 1M-block log,
//! bytes on disk per block. `cargo bench -p ledger-benches --bench log` (add `-- --quick`
//! for 100k blocks in the reopen part). Prints a Markdown report.

#![forbid(unsafe_code)]

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ledger_engine::internals::log::{BlockId, Durability, Log, LogConfig};
use rand::{Rng, SeedableRng};

/// Random block bodies of 150..650 bytes (a typical v2 block is a few hundred bytes).
fn blocks(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let len = rng.gen_range(150..650);
            (0..len).map(|_| rng.gen()).collect()
        })
        .collect()
}

struct Run {
    blocks: usize,
    bytes: usize,
    elapsed: Duration,
}

/// Appends `blocks` from `threads` threads (round-robin split) into a fresh log.
fn append_run(durability: Durability, threads: usize, blocks: &[Vec<u8>]) -> Run {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = LogConfig::default().with_durability(durability);
    let log = Arc::new(Log::open(dir.path(), config).expect("the log opens"));
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let log = &log;
            s.spawn(move || {
                for b in blocks.iter().skip(t).step_by(threads) {
                    log.append_v2(b).expect("append");
                }
            });
        }
    });
    // Deferred mode: count the final fsync too, so all modes end durable.
    log.sync().expect("sync");
    let elapsed = start.elapsed();
    Run {
        blocks: blocks.len(),
        bytes: blocks.iter().map(Vec::len).sum(),
        elapsed,
    }
}

/// The duplicate check of every new block: looking up an id that is not stored, in a log of
/// `n` sealed segments (64 KiB each, so that many fit in little disk).
fn absent_lookups() {
    println!("| sealed segments | records | absent-id lookup | lookup of a record of the oldest segment |");
    println!("|---:|---:|---:|---:|");
    for n in [16u32, 256, 2048] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = LogConfig::default()
            .with_durability(Durability::Deferred { interval_ms: 1000 })
            .with_segment_size(64 << 10);
        let log = Log::open(dir.path(), config).expect("the log opens");
        let data = blocks(1_000, 3);
        let mut i = 0u64;
        let mut oldest = Vec::new();
        while log.active_segment() < n {
            let mut b = data[(i % 1_000) as usize].clone();
            b.extend_from_slice(&i.to_le_bytes());
            let id = log.append_v2(&b).expect("append");
            if id.location.segment() == 0 {
                oldest.push(BlockId::V2(ledger_codec::hash::blake2b256(&b)));
            }
            i += 1;
        }
        let lookups = 20_000u32;
        let ids: Vec<BlockId> = (0..lookups)
            .map(|k| BlockId::V2(ledger_codec::hash::blake2b256(&k.to_le_bytes())))
            .collect();
        let start = Instant::now();
        let found = ids.iter().filter(|id| log.contains(id)).count();
        let per = start.elapsed() / lookups;
        assert_eq!(found, 0);
        let start = Instant::now();
        let found = oldest.iter().filter(|id| log.contains(id)).count();
        let per_oldest = start.elapsed() / u32::try_from(oldest.len()).expect("count");
        assert_eq!(found, oldest.len());
        println!("| {n} | {i} | {per:.2?} | {per_oldest:.2?} |");
    }
    println!();
}

fn main() {
    // `cargo test --all-targets` runs bench binaries without `--bench`: nothing to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("benchmark harness: run it with `cargo bench`");
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    absent_lookups();
    let reopen_blocks = if quick { 100_000 } else { 1_000_000 };
    println!("| mode | threads | blocks | blocks/s | MB/s |");
    println!("|---|---:|---:|---:|---:|");
    let modes = [
        ("EveryAppend", Durability::EveryAppend, 2_000),
        (
            "Group { interval_ms: 2 }",
            Durability::Group { interval_ms: 2 },
            20_000,
        ),
        (
            "Group { interval_ms: 0 }",
            Durability::Group { interval_ms: 0 },
            20_000,
        ),
        (
            "Deferred { interval_ms: 100 }",
            Durability::Deferred { interval_ms: 100 },
            200_000,
        ),
    ];
    for (name, durability, n) in modes {
        let data = blocks(n, 1);
        for threads in [1, 4, 32] {
            let run = append_run(durability, threads, &data);
            let secs = run.elapsed.as_secs_f64();
            println!(
                "| {name} | {threads} | {} | {:.0} | {:.1} |",
                run.blocks,
                run.blocks as f64 / secs,
                run.bytes as f64 / secs / 1e6
            );
        }
    }

    // Reopen of a large log, and its size on disk.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = LogConfig::default().with_durability(Durability::Deferred { interval_ms: 1000 });
    let mut body_bytes = 0u64;
    {
        let log = Log::open(dir.path(), config).expect("the log opens");
        let mut rng = rand::rngs::StdRng::seed_from_u64(2);
        let mut b = Vec::new();
        for _ in 0..reopen_blocks {
            b.clear();
            b.extend((0..rng.gen_range(150..650)).map(|_| rng.gen::<u8>()));
            log.append_v2(&b).expect("append");
            body_bytes += b.len() as u64;
        }
        log.sync().expect("sync");
    }
    let mut times = Vec::new();
    let mut stats = None;
    for _ in 0..5 {
        let start = Instant::now();
        let log = Log::open(dir.path(), config).expect("the log opens");
        times.push(start.elapsed());
        assert_eq!(log.len(), reopen_blocks as u64);
        stats = Some(log.stats());
    }
    times.sort();
    let stats = stats.expect("at least one reopen");
    let allocated: u64 = std::fs::read_dir(dir.path())
        .expect("the log directory lists")
        .map(|e| {
            e.and_then(|e| e.metadata())
                .expect("a log file's metadata")
                .blocks()
                * 512
        })
        .sum();
    let n = reopen_blocks as f64;
    println!();
    println!("| measure | value |");
    println!("|---|---:|");
    println!("| blocks | {reopen_blocks} |");
    println!("| segments | {} |", stats.segments);
    println!(
        "| reopen, min of 5 (page cache warm) | {:.3} s |",
        times[0].as_secs_f64()
    );
    println!("| reopen, median of 5 | {:.3} s |", times[2].as_secs_f64());
    println!("| mean block body | {:.1} B |", body_bytes as f64 / n);
    println!(
        "| used bytes per block | {:.1} B |",
        stats.used_bytes as f64 / n
    );
    println!(
        "| overhead per block (used - body) | {:.1} B |",
        (stats.used_bytes - body_bytes) as f64 / n
    );
    println!(
        "| allocated on disk per block (st_blocks) | {:.1} B |",
        allocated as f64 / n
    );
}
