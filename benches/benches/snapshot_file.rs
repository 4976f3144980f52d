//! TIP-35 snapshot files (`ledger_engine::snapshot`, engine/FORMAT-snapshot.md): time and size
//! of a full file of N unspent outputs, written with `FullWriter` (fsync and rename included),
//! read back with `FullReader`, loaded with `load` (Hornet's import rules: supply check,
//! sorted ledger) and hashed with `SnapHash`.
//!
//! Outputs are basic outputs with one Ed25519 address (46 bytes, a 124-byte record), like most
//! of a real ledger; 30 empty milestone diffs below the target (Hornet's extra diffs) and 20
//! solid entry points complete the file.
//!
//! Run: `cargo bench -p ledger-benches --bench snapshot_file` (default N = 100 000 and
//! 1 000 000; 1 000 under `cargo test`; `SNAPSHOT_BENCH_OUTPUTS=100000` for other sizes). It
//! prints one row per N for BENCHMARKS.md; it is a plain program (no criterion): each step runs
//! once on a fresh file.
//! `SNAPSHOT_BENCH_KEEP=DIR` keeps each file in DIR.

#![forbid(unsafe_code)]

use std::{borrow::Cow, time::Instant};

use ledger_codec::{
    stardust::{Ed25519Signature, Milestone, ProtocolParameters},
    types::{Bytes, Fixed},
    Codec,
};
use ledger_engine::snapshot::{
    load, FullHeader, FullReader, FullWriter, MilestoneDiff, ProtocolParametersOption, SnapHash,
    SnapshotOutput, Treasury,
};

const SUPPLY: u64 = 4_600_000_000_000_000;

fn params() -> ProtocolParameters {
    ProtocolParameters {
        network_name: "bench".into(),
        bech32_hrp: "smr".into(),
        min_pow_score: 0,
        token_supply: SUPPLY,
        ..ledger_test_support::ledger::testnet_params()
    }
}

fn output(i: u64, amount: u64) -> SnapshotOutput {
    let mut id = [0u8; 34];
    id[..8].copy_from_slice(&i.to_le_bytes());
    let mut address = [0u8; 32];
    address[..8].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes());
    let out = ledger_test_support::ledger::basic_to(amount, address);
    SnapshotOutput {
        output_id: id,
        block_id: [1; 32],
        booked_index: 1,
        booked_timestamp: 1,
        output: out.to_bytes().expect("a basic output encodes"),
    }
}

fn empty_diff(index: u32) -> MilestoneDiff {
    let payload = Milestone {
        index,
        timestamp: index,
        protocol_version: 2,
        previous_milestone_id: Fixed::owned([0; 32]),
        parents: Cow::Owned(vec![[7; 32]]),
        inclusion_merkle_root: Fixed::owned([0; 32]),
        applied_merkle_root: Fixed::owned([0; 32]),
        metadata: Bytes::from(Vec::new()),
        options: Vec::new(),
        signatures: Cow::Owned(vec![Ed25519Signature::new([3; 32], [4; 64])]),
    };
    MilestoneDiff {
        milestone_payload: payload.to_bytes().expect("a milestone encodes"),
        treasury_input: None,
        created: Vec::new(),
        consumed: Vec::new(),
    }
}

fn run(n: u64) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("full_snapshot.bin");
    let target = 1_000;
    let header = FullHeader {
        genesis_milestone_index: 0,
        target_milestone_index: target,
        target_milestone_timestamp: target,
        target_milestone_id: [9; 32],
        ledger_milestone_index: target,
        treasury: Treasury::default(),
        protocol_parameters: ProtocolParametersOption {
            activation_index: 0,
            protocol_version: 2,
            params: params().to_bytes().expect("parameters encode"),
        },
        output_count: 0,
        diff_count: 0,
        sep_count: 0,
    };
    let each = SUPPLY / n;
    let started = Instant::now();
    let mut w = FullWriter::create(&path, &header).expect("the file opens");
    for i in 0..n {
        let amount = if i == 0 {
            SUPPLY - each * (n - 1)
        } else {
            each
        };
        w.push_output(&output(i, amount))
            .expect("an output is written");
    }
    for index in (target - 29..=target).rev() {
        w.push_diff(&empty_diff(index)).expect("a diff is written");
    }
    for s in 0..20u8 {
        w.push_sep(&[s; 32]).expect("a SEP is written");
    }
    w.finish().expect("the file is put in place");
    let write = started.elapsed();
    let bytes = std::fs::metadata(&path).expect("the file exists").len();

    let started = Instant::now();
    let file = std::io::BufReader::with_capacity(
        1 << 20,
        std::fs::File::open(&path).expect("the file opens"),
    );
    let mut r = FullReader::new(file).expect("the header reads");
    let mut outputs = 0u64;
    while r.next_output().expect("an output reads").is_some() {
        outputs += 1;
    }
    r.finish().expect("the file reads to its end");
    let read = started.elapsed();
    assert_eq!(outputs, n);

    let started = Instant::now();
    let loaded = load(&path, None, Some("bench")).expect("the file loads");
    let load_time = started.elapsed();
    let started = Instant::now();
    let hash = SnapHash::of(&loaded);
    let hash_time = started.elapsed();
    assert_eq!(hash.ledger_token_supply, SUPPLY);
    // `SNAPSHOT_BENCH_KEEP=DIR` keeps the file as DIR/full_<N>.bin (to time a node's start
    // from it: `ledger-node run --snapshot-full DIR/full_<N>.bin`).
    if let Ok(dir) = std::env::var("SNAPSHOT_BENCH_KEEP") {
        let kept = std::path::Path::new(&dir).join(format!("full_{n}.bin"));
        std::fs::copy(&path, &kept).expect("the file is kept");
    }
    println!(
        "| {n} | {bytes} B ({:.1} MiB) | {:.0} ms | {:.0} ms | {:.0} ms | {:.0} ms |",
        bytes as f64 / (1024.0 * 1024.0),
        write.as_secs_f64() * 1e3,
        read.as_secs_f64() * 1e3,
        load_time.as_secs_f64() * 1e3,
        hash_time.as_secs_f64() * 1e3,
    );
}

fn main() {
    // `cargo test --all-targets` runs bench binaries without `--bench`: then one small file
    // checks that every step still works, and nothing is measured.
    let default = if std::env::args().any(|a| a == "--bench") {
        "100000,1000000"
    } else {
        "1000"
    };
    let sizes = std::env::var("SNAPSHOT_BENCH_OUTPUTS").unwrap_or_else(|_| default.into());
    println!("| outputs | file size | write (fsync, rename) | read (strict) | load | snap-hash |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in sizes
        .split(',')
        .filter_map(|s| s.trim().parse::<u64>().ok())
    {
        if n > 0 {
            run(n);
        }
    }
}
