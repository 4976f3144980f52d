//! Block metadata store: the mmap'd per-segment files (`history::BlockMetaFiles`, the
//! engine's choice) against an embedded store (`redb`), for the two things the node does
//! with it (see `engine/FORMAT.md`, "Block metadata files"):
//!
//! - confirm a milestone: write the metadata of 30 000 blocks (random ids, increasing log
//!   locations), then make it durable (files: `Archive::write` into the shared map, then
//!   `sync_data` of every handle `take_unsynced` returns; redb: one write transaction, commit);
//! - look up: 10 000 random blocks among 300 000 stored, page cache warm (files: the slot
//!   read alone with the known location, and `locate` (log id index) + read; redb: a read
//!   transaction per lookup, and one per batch).
//!
//! Run: `cargo bench -p ledger-benches --bench history_store -- --warm-up-time 1
//! --measurement-time 3`; figures in `benches/results/history_store.md`. After criterion it
//! prints the split of a milestone (write / durability) and the disk bytes per entry.

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use ledger_engine::internals::history::BlockMetaFiles;
use ledger_engine::internals::log::{Durability as LogDurability, Log, LogConfig};
use ledger_engine::internals::tangle::{Archive, Archived, BlockId, Inclusion};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use redb::{Database, Durability, ReadableDatabase, TableDefinition};

/// Blocks stored (and entries after the last milestone).
const BLOCKS: usize = 300_000;
/// Entries written per milestone.
const PER_MILESTONE: usize = 30_000;
/// Milestones to fill the store.
const MILESTONES: usize = BLOCKS / PER_MILESTONE;
/// Lookups per batch.
const LOOKUPS: usize = 10_000;

/// block id → referenced_by u32 LE ‖ white-flag index u32 LE ‖ inclusion u8 ‖ reason u8.
const TABLE: TableDefinition<'_, [u8; 32], [u8; 10]> = TableDefinition::new("block_meta");

/// The blocks of the log, in log order.
struct Blocks {
    _dir: tempfile::TempDir,
    log: Arc<Log>,
    ids: Vec<BlockId>,
    records: Vec<u64>,
}

/// A log of `BLOCKS` v2-like records of 100..400 random bytes (mean 250), ids BLAKE2b-256.
fn blocks() -> Blocks {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config =
        LogConfig::default().with_durability(LogDurability::Deferred { interval_ms: 1000 });
    let log = Arc::new(Log::open(dir.path(), config).expect("the log opens"));
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut body = Vec::new();
    let mut ids = Vec::with_capacity(BLOCKS);
    let mut records = Vec::with_capacity(BLOCKS);
    for _ in 0..BLOCKS {
        body.clear();
        body.extend((0..rng.gen_range(100..400)).map(|_| rng.gen::<u8>()));
        let appended = log.append_v2(&body).expect("append");
        assert!(appended.inserted);
        ids.push(ledger_codec::hash::blake2b256(&body));
        records.push(appended.location.to_u64());
    }
    log.sync().expect("sync");
    Blocks {
        _dir: dir,
        log,
        ids,
        records,
    }
}

/// The metadata milestone `m` fixes for its `i`-th block.
fn meta(m: usize, i: usize) -> Archived {
    Archived {
        referenced_by: m as u32 + 1,
        white_flag_index: i as u32,
        inclusion: if i.is_multiple_of(4) {
            Inclusion::Included
        } else if i.is_multiple_of(97) {
            Inclusion::Conflicting(1)
        } else {
            Inclusion::NoTransaction
        },
    }
}

fn value(m: &Archived) -> [u8; 10] {
    let mut v = [0u8; 10];
    v[0..4].copy_from_slice(&m.referenced_by.to_le_bytes());
    v[4..8].copy_from_slice(&m.white_flag_index.to_le_bytes());
    let (code, reason) = match m.inclusion {
        Inclusion::Pending => (0, 0),
        Inclusion::NoTransaction => (1, 0),
        Inclusion::Included => (2, 0),
        Inclusion::Conflicting(r) => (3, r),
    };
    v[8] = code;
    v[9] = reason;
    v
}

/// The stores compared.
#[derive(Clone, Copy)]
enum Kind {
    /// `BlockMetaFiles`: write through the map, `sync_data` of the dirty files.
    Files,
    /// redb, one write transaction per milestone, default durability (`Immediate`).
    RedbImmediate,
    /// redb, the milestone's writes committed with `Durability::None`, then an empty
    /// transaction committed `Immediate` (the durable point, as the files' sync).
    RedbNoneThenImmediate,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Files => "mmap_files",
            Kind::RedbImmediate => "redb_immediate",
            Kind::RedbNoneThenImmediate => "redb_none+immediate",
        }
    }
}

enum Store {
    Files(BlockMetaFiles),
    Redb(Database),
}

/// A fresh, empty store in `dir`.
fn open(kind: Kind, dir: &Path, blocks: &Blocks) -> Store {
    match kind {
        Kind::Files => Store::Files(
            BlockMetaFiles::open(dir.join("blockmeta"), Arc::clone(&blocks.log))
                .expect("the metadata files open"),
        ),
        Kind::RedbImmediate | Kind::RedbNoneThenImmediate => {
            let db = Database::create(dir.join("meta.redb")).expect("redb opens");
            let tx = db.begin_write().expect("a write transaction");
            tx.open_table(TABLE).expect("the table");
            tx.commit().expect("commit");
            Store::Redb(db)
        }
    }
}

/// Confirms milestone `m` (blocks `m * PER_MILESTONE ..`): the time of the writes and of
/// the durability step.
fn milestone(kind: Kind, store: &mut Store, blocks: &Blocks, m: usize) -> (Duration, Duration) {
    let range = m * PER_MILESTONE..(m + 1) * PER_MILESTONE;
    let start = Instant::now();
    match store {
        Store::Files(files) => {
            for (i, at) in range.enumerate() {
                files
                    .write(&blocks.ids[at], blocks.records[at], &meta(m, i))
                    .expect("slot written");
            }
            let written = start.elapsed();
            for (_, f) in files.take_unsynced().expect("handles") {
                f.sync_data().expect("sync_data");
            }
            (written, start.elapsed() - written)
        }
        Store::Redb(db) => {
            let mut tx = db.begin_write().expect("a write transaction");
            if matches!(kind, Kind::RedbNoneThenImmediate) {
                tx.set_durability(Durability::None).expect("durability");
            }
            {
                let mut table = tx.open_table(TABLE).expect("the table");
                for (i, at) in range.enumerate() {
                    table
                        .insert(blocks.ids[at], value(&meta(m, i)))
                        .expect("insert");
                }
            }
            if matches!(kind, Kind::RedbImmediate) {
                let written = start.elapsed();
                tx.commit().expect("commit");
                return (written, start.elapsed() - written);
            }
            tx.commit().expect("commit");
            let written = start.elapsed();
            let durable = db.begin_write().expect("a write transaction");
            durable.commit().expect("durable commit");
            (written, start.elapsed() - written)
        }
    }
}

/// Split of the milestone writes measured by criterion, per kind.
#[derive(Default, Clone, Copy)]
struct Split {
    n: u32,
    write: Duration,
    durable: Duration,
}

const KINDS: [Kind; 3] = [
    Kind::Files,
    Kind::RedbImmediate,
    Kind::RedbNoneThenImmediate,
];

fn milestones(c: &mut Criterion, blocks: &Blocks, splits: &mut [Split; 3]) {
    let mut g = c.benchmark_group("milestone_write_30k");
    g.sample_size(10);
    g.throughput(Throughput::Elements(PER_MILESTONE as u64));
    for (k, kind) in KINDS.into_iter().enumerate() {
        // Each iteration confirms the next milestone of a growing store; after the tenth
        // (300 000 entries) a fresh store starts (not timed).
        let mut dir = tempfile::tempdir().expect("a temporary directory");
        let mut store = Some(open(kind, dir.path(), blocks));
        let mut next = 0usize;
        let split = &mut splits[k];
        g.bench_function(BenchmarkId::from_parameter(kind.name()), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    if next == MILESTONES {
                        store = None;
                        dir = tempfile::tempdir().expect("a temporary directory");
                        store = Some(open(kind, dir.path(), blocks));
                        next = 0;
                    }
                    let s = store.as_mut().expect("a store");
                    let (w, d) = milestone(kind, s, blocks, next);
                    next += 1;
                    split.n += 1;
                    split.write += w;
                    split.durable += d;
                    total += w + d;
                }
                total
            });
        });
    }
    g.finish();
}

/// Disk use of the regular files under `dir`: (apparent bytes, allocated bytes).
fn disk(dir: &Path) -> (u64, u64) {
    let mut out = (0, 0);
    for e in std::fs::read_dir(dir).expect("the directory lists") {
        let e = e.expect("an entry");
        let md = e.metadata().expect("metadata");
        if md.is_dir() {
            let (a, b) = disk(&e.path());
            out.0 += a;
            out.1 += b;
        } else {
            out.0 += md.len();
            out.1 += md.blocks() * 512;
        }
    }
    out
}

fn lookups(c: &mut Criterion, blocks: &Blocks, sizes: &mut Vec<String>) {
    // Full stores of 300 000 entries, ten milestones each.
    let files_dir = tempfile::tempdir().expect("a temporary directory");
    let redb_dir = tempfile::tempdir().expect("a temporary directory");
    let mut files = open(Kind::Files, files_dir.path(), blocks);
    let mut db = open(Kind::RedbImmediate, redb_dir.path(), blocks);
    for m in 0..MILESTONES {
        milestone(Kind::Files, &mut files, blocks, m);
        milestone(Kind::RedbImmediate, &mut db, blocks, m);
    }
    let (Store::Files(files), Store::Redb(mut db)) = (files, db) else {
        unreachable!("opened as such")
    };
    let n = BLOCKS as f64;
    let (fa, fd) = disk(files_dir.path());
    sizes.push(format!(
        "| mmap files (sparse; bodies 100..400 B) | {:.1} | {:.1} |",
        fa as f64 / n,
        fd as f64 / n
    ));
    let (ra, rd) = disk(redb_dir.path());
    sizes.push(format!(
        "| redb, after 10 milestone commits | {:.1} | {:.1} |",
        ra as f64 / n,
        rd as f64 / n
    ));

    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut picks: Vec<usize> = (0..BLOCKS).collect();
    picks.shuffle(&mut rng);
    picks.truncate(LOOKUPS);
    let want = |at: usize| meta(at / PER_MILESTONE, at % PER_MILESTONE);
    // Every store answers every pick correctly before anything is timed.
    {
        let tx = db.begin_read().expect("a read transaction");
        let table = tx.open_table(TABLE).expect("the table");
        for &at in &picks {
            let id = &blocks.ids[at];
            let got = files.read(id, files.locate(id).expect("stored"));
            assert_eq!(got, Ok(Some(want(at))));
            let v = table.get(id).expect("get").expect("present").value();
            assert_eq!(v, value(&want(at)));
        }
    }

    let mut g = c.benchmark_group("lookup_10k_of_300k");
    g.sample_size(20);
    g.throughput(Throughput::Elements(LOOKUPS as u64));
    g.bench_function("mmap_files/read_known_location", |b| {
        b.iter(|| {
            for &at in &picks {
                black_box(files.read(&blocks.ids[at], blocks.records[at]).ok());
            }
        });
    });
    g.bench_function("mmap_files/locate+read", |b| {
        b.iter(|| {
            for &at in &picks {
                let id = &blocks.ids[at];
                let record = files.locate(id).expect("stored");
                black_box(files.read(id, record).ok());
            }
        });
    });
    g.bench_function("redb/txn_per_lookup", |b| {
        b.iter(|| {
            for &at in &picks {
                let tx = db.begin_read().expect("a read transaction");
                let table = tx.open_table(TABLE).expect("the table");
                black_box(table.get(&blocks.ids[at]).expect("get").map(|v| v.value()));
            }
        });
    });
    g.bench_function("redb/txn_per_batch", |b| {
        b.iter(|| {
            let tx = db.begin_read().expect("a read transaction");
            let table = tx.open_table(TABLE).expect("the table");
            for &at in &picks {
                black_box(table.get(&blocks.ids[at]).expect("get").map(|v| v.value()));
            }
        });
    });
    g.finish();

    db.compact().expect("compaction");
    drop(db);
    let (ra, rd) = disk(redb_dir.path());
    sizes.push(format!(
        "| redb, after `compact()` | {:.1} | {:.1} |",
        ra as f64 / n,
        rd as f64 / n
    ));
}

fn main() {
    // `cargo test --all-targets` runs bench binaries without `--bench`: nothing to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("benchmark harness: run it with `cargo bench`");
        return;
    }
    let start = Instant::now();
    let blocks = blocks();
    println!(
        "log of {BLOCKS} blocks written in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let mut c = Criterion::default().configure_from_args();
    let mut splits = [Split::default(); 3];
    let mut sizes = Vec::new();
    milestones(&mut c, &blocks, &mut splits);
    lookups(&mut c, &blocks, &mut sizes);
    c.final_summary();

    println!();
    println!("| store | milestones timed | write (mean) | durability (mean) |");
    println!("|---|---:|---:|---:|");
    for (kind, s) in KINDS.iter().zip(splits) {
        let n = f64::from(s.n.max(1));
        println!(
            "| {} | {} | {:.2} ms | {:.2} ms |",
            kind.name(),
            s.n,
            s.write.as_secs_f64() * 1e3 / n,
            s.durable.as_secs_f64() * 1e3 / n
        );
    }
    println!();
    println!(
        "| store ({BLOCKS} entries) | apparent bytes/entry | allocated bytes/entry (st_blocks) |"
    );
    println!("|---|---:|---:|");
    for s in sizes {
        println!("{s}");
    }
}
