//! Ed25519 (ZIP-215): single verification vs parallel chunked batches, and the chunk-size sweep.
//!
//! Run: `cargo bench -p ledger-benches --bench ed25519`; figures in `benches/results/ed25519.md`.

#![forbid(unsafe_code)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ledger_codec::ed25519::{self, Item, SigningKey, CHUNK_SIZE};
use std::hint::black_box;

/// `n` distinct keys, each signing its own 32-byte message (as a transaction's unlocks do).
fn signed(n: usize) -> Vec<([u8; 32], Vec<u8>, [u8; 64])> {
    (0..n)
        .map(|i| {
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
            let key = SigningKey::from_seed(&seed);
            let msg = ledger_codec::hash::blake2b256(&seed).to_vec();
            let sig = key.sign(&msg);
            (key.public_key(), msg, sig)
        })
        .collect()
}

fn items(data: &[([u8; 32], Vec<u8>, [u8; 64])]) -> Vec<Item<'_>> {
    data.iter().map(|(pk, m, s)| Item::new(pk, m, s)).collect()
}

/// One signature, and 64 signatures one by one vs batched (parallel).
fn single_vs_batch(c: &mut Criterion) {
    let data = signed(64);
    let its = items(&data);
    let mut g = c.benchmark_group("ed25519");
    g.throughput(Throughput::Elements(1));
    g.bench_function("verify_single", |b| {
        let (pk, m, s) = &data[0];
        b.iter(|| ed25519::verify(black_box(pk), black_box(m), black_box(s)))
    });
    g.throughput(Throughput::Elements(64));
    g.bench_function("verify_64_one_by_one", |b| {
        b.iter(|| black_box(&its).iter().filter(|i| i.verify()).count())
    });
    g.bench_function("verify_batch_64", |b| {
        b.iter(|| ed25519::verify_batch(black_box(&its)))
    });
    g.bench_function("verify_all_64", |b| {
        b.iter(|| ed25519::verify_all(black_box(&its)))
    });
    // One bad signature: the failing chunk is re-checked one by one.
    let mut bad = data.clone();
    bad[17].2[0] ^= 1;
    let bad_items = items(&bad);
    g.bench_function("verify_batch_64_one_invalid", |b| {
        b.iter(|| ed25519::verify_batch(black_box(&bad_items)))
    });
    g.finish();
}

/// Batch sizes 4..256 with the default chunking (`verify_batch`).
fn batch_sizes(c: &mut Criterion) {
    let data = signed(256);
    let its = items(&data);
    let mut g = c.benchmark_group("ed25519_batch");
    for n in [4usize, 8, 16, 32, 64, 96, 128, 256] {
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("size", n), &its[..n], |b, its| {
            b.iter(|| ed25519::verify_batch(black_box(its)))
        });
    }
    g.finish();
}

/// The chunk-size knob: 256 signatures with fixed chunk lengths around `CHUNK_SIZE`
/// (chunk = 1 is one-by-one on the pool), plus an uneven count.
fn chunk_sweep(c: &mut Criterion) {
    let data = signed(1024);
    let its = items(&data);
    let mut g = c.benchmark_group("ed25519_chunk");
    for n in [256usize, 1024] {
        g.throughput(Throughput::Elements(n as u64));
        for chunk in [1usize, 4, 8, 16, 32, 48, 64, 96, 128, 256] {
            g.bench_with_input(
                BenchmarkId::new(format!("n={n}"), format!("chunk={chunk}")),
                &its[..n],
                |b, its| b.iter(|| ed25519::verify_batch_chunked(black_box(its), chunk)),
            );
        }
    }
    // Uneven: CHUNK_SIZE × 8 − 1 signatures with the default chunking.
    let uneven = CHUNK_SIZE * 8 - 1;
    g.throughput(Throughput::Elements(uneven as u64));
    g.bench_with_input(
        BenchmarkId::new("uneven", uneven),
        &its[..uneven],
        |b, its| b.iter(|| ed25519::verify_batch(black_box(its))),
    );
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = single_vs_batch, batch_sizes, chunk_sweep
}
criterion_main!(benches);
