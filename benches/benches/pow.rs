//! PoW (TIP-12): score of a block, Curl-P-81 hashes per second (scalar vs
//! bit-sliced at several widths, one core) and the nonce search on all cores.

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::sync::atomic::AtomicBool;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use ledger_codec::pow::bitsliced::BctCurl;
use ledger_codec::pow::curl::CurlP81;
use ledger_codec::pow::{self, Searcher, LANES};

/// A 200-byte block-like buffer (the last 8 bytes are the nonce).
fn block() -> Vec<u8> {
    (0..200u32).map(|i| (i * 37 + 11) as u8).collect()
}

fn score(c: &mut Criterion) {
    let b = block();
    let mut g = c.benchmark_group("pow/score");
    g.bench_function("pow_score_200B", |bench| {
        bench.iter(|| pow::pow_score(black_box(&b)))
    });
    g.bench_function("meets_score_200B", |bench| {
        bench.iter(|| pow::meets_score(black_box(&b), black_box(1500)))
    });
    g.finish();
}

fn bct_transform<const N: usize, M: Measurement>(g: &mut BenchmarkGroup<'_, M>) {
    let mut curl = BctCurl::<N>::new();
    g.throughput(Throughput::Elements(BctCurl::<N>::LANES as u64));
    g.bench_function(
        BenchmarkId::new("bitsliced_transform", BctCurl::<N>::LANES),
        |bench| {
            bench.iter(|| {
                curl.transform();
                black_box(curl.cells()[0]);
            })
        },
    );
}

/// On-CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`), in ns: the
/// machine is shared, so wall time also counts time spent descheduled.
struct ThreadCpu;

fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = if typical >= 1e6 {
            (1e6, "ms(cpu)")
        } else if typical >= 1e3 {
            (1e3, "µs(cpu)")
        } else {
            (1.0, "ns(cpu)")
        };
        values.iter_mut().for_each(|v| *v /= div);
        unit
    }
    fn scale_throughputs(&self, _typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let n = match t {
            Throughput::Elements(n) | Throughput::Bytes(n) | Throughput::BytesDecimal(n) => {
                *n as f64
            }
        };
        // ns per iteration → million elements per CPU-second.
        values.iter_mut().for_each(|v| *v = n * 1e3 / *v);
        "Melem/cpu-s"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

fn curl_one_core(c: &mut Criterion) {
    curl_one_core_with(c, "pow/curl_1core");
}

fn curl_one_core_cpu(c: &mut Criterion<ThreadCpu>) {
    curl_one_core_with(c, "pow/curl_1core_cputime");
}

fn curl_one_core_with<M: Measurement>(c: &mut Criterion<M>, name: &str) {
    let mut g = c.benchmark_group(name);
    let mut scalar = CurlP81::new();
    g.throughput(Throughput::Elements(1));
    g.bench_function("scalar_transform", |bench| {
        bench.iter(|| {
            scalar.transform();
            black_box(&scalar);
        })
    });
    bct_transform::<1, M>(&mut g);
    bct_transform::<2, M>(&mut g);
    bct_transform::<4, M>(&mut g);
    bct_transform::<8, M>(&mut g);

    // The search kernel as the miner runs it: load nonces, 80 rounds, check the tail.
    let digest = [0x5a; 32];
    let mut s = Searcher::new();
    let mut base = 0u64;
    g.throughput(Throughput::Elements(LANES as u64));
    g.bench_function(BenchmarkId::new("search_pass", LANES), |bench| {
        bench.iter(|| {
            base = base.wrapping_add(LANES as u64);
            black_box(s.pass(&digest, base, 12))
        })
    });
    g.finish();
}

fn curl_all_cores(c: &mut Criterion) {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .build()
        .expect("pool");
    let digest = [0xa5; 32];
    let per_worker = (LANES * 256) as u64;
    let stop = AtomicBool::new(false);
    let mut g = c.benchmark_group("pow/curl_all_cores");
    g.sample_size(20);
    // A target no nonce reaches, so every worker hashes its whole range.
    g.throughput(Throughput::Elements(per_worker * workers as u64));
    g.bench_function(
        BenchmarkId::new("search", format!("{workers}_workers")),
        |bench| {
            bench.iter(|| {
                pool.broadcast(|ctx| {
                    let start = per_worker * ctx.index() as u64;
                    pow::search_nonce(&digest, 243, start, per_worker, &stop)
                })
            })
        },
    );
    g.finish();

    let mut g = c.benchmark_group("pow/mine");
    g.sample_size(20);
    let mut body = block();
    body.truncate(192);
    let mut salt = 0u8;
    // All cores, then one (once only on a one-core machine or under `taskset`).
    let mut runs = vec![(1500u32, workers)];
    if workers > 1 {
        runs.push((1500, 1));
    }
    for (score, w) in runs {
        g.bench_function(
            BenchmarkId::new(format!("score_{score}_200B"), format!("{w}_workers")),
            |bench| {
                bench.iter(|| {
                    // A new body each time so every run is a fresh search.
                    salt = salt.wrapping_add(1);
                    body[0] = salt;
                    pow::mine(&body, score, w, &stop).expect("found")
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, score, curl_one_core, curl_all_cores);
criterion_group! {
    name = cpu_time;
    config = Criterion::default().with_measurement(ThreadCpu);
    targets = curl_one_core_cpu
}
criterion_main!(benches, cpu_time);
