//! Engine benchmarks (a timing harness, `harness = false`): milestone
//! confirmation of 10k transaction blocks, rich-list top-100 with 1M
//! addresses at the current and at an old ledger index, and a history of transactions
//! (`history`: restart time, memory after the restart and reads of old spent outputs, for two
//! lengths of history).
//!
//! `cargo bench -p ledger-benches --bench engine [-- FILTER]`

#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::time::{Duration, Instant};

use ledger_codec::ed25519::SigningKey;
use ledger_codec::stardust::{
    inputs_commitment, Address, Block, Ed25519Signature, Essence, OutputId, Payload, Transaction,
    Unlock, UtxoInput,
};
use ledger_codec::types::Hash32;
use ledger_codec::Codec;
use ledger_engine::internals::richlist::RichList;
use ledger_engine::Durability;
use ledger_engine::{Engine, EngineConfig, Genesis};

const TXS: usize = 10_000;
const AMOUNT: u64 = 1_000_000;

use ledger_test_support::ledger::{basic_to as basic, genesis_with_outputs};

/// The id of genesis output `i`: transaction id `i + 1` (8 bytes little endian, then zeros),
/// index 0.
fn genesis_output_id(i: usize) -> OutputId {
    let mut transaction_id = [0u8; 32];
    transaction_id[..8].copy_from_slice(&(i as u64 + 1).to_le_bytes());
    OutputId {
        transaction_id,
        index: 0,
    }
}

/// A genesis with `n` outputs of `AMOUNT`, each on its own key's address.
fn genesis(keys: &[SigningKey]) -> Genesis {
    let outputs = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (genesis_output_id(i).to_array(), basic(AMOUNT, k.address())));
    Genesis::from_json(&genesis_with_outputs(
        ledger_engine::DEV_GENESIS_JSON,
        outputs,
    ))
    .expect("the bench genesis is valid")
}

/// A block whose transaction spends `input` (an output of `AMOUNT` on `key`'s address) into
/// one output of `AMOUNT` on `to`; returns the block and that output's id.
fn spend_block(
    engine: &Engine,
    key: &SigningKey,
    input: OutputId,
    to: [u8; 32],
    parents: Vec<[u8; 32]>,
) -> (Vec<u8>, OutputId) {
    let consumed = basic(AMOUNT, key.address());
    let essence = Essence {
        network_id: engine.params().network_id(),
        inputs: Cow::Owned(vec![UtxoInput::new(input.transaction_id, input.index)]),
        inputs_commitment: Hash32::from(inputs_commitment([&consumed]).expect("fixture encodes")),
        outputs: vec![basic(AMOUNT, to)],
        payload: None,
    };
    let sig = key.sign(&essence.signing_hash().expect("fixture encodes"));
    let unlocks = vec![Unlock::Signature(Cow::Owned(Ed25519Signature::new(
        key.public_key(),
        sig,
    )))];
    let tx = Transaction { essence, unlocks };
    let transaction_id = tx.id().expect("fixture encodes");
    let block = Block {
        protocol_version: 2,
        parents: parents.into(),
        payload: Some(Payload::Transaction(tx)),
        nonce: 0,
    }
    .to_bytes()
    .expect("fixture encodes");
    (
        block,
        OutputId {
            transaction_id,
            index: 0,
        },
    )
}

/// A block spending genesis output `index` (on `key`'s address) to a common address.
fn tx_block(engine: &Engine, key: &SigningKey, index: usize, parents: Vec<[u8; 32]>) -> Vec<u8> {
    spend_block(engine, key, genesis_output_id(index), [0xab; 32], parents).0
}

/// `n` keys, key `i` from the seed `i` (8 bytes little endian, then zeros).
fn signing_keys(n: usize) -> Vec<SigningKey> {
    (0..n)
        .map(|i| {
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
            SigningKey::from_seed(&seed)
        })
        .collect()
}

/// The median time of `runs` calls of `run`, each answer given to `check` after its clock
/// stopped.
fn median_time<T>(runs: usize, mut run: impl FnMut() -> T, mut check: impl FnMut(T)) -> Duration {
    let times = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let answer = run();
            let e = t.elapsed();
            check(answer);
            e
        })
        .collect();
    median(times)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// One round: a fresh node with 10k funded keys, 10k signed transaction
/// blocks submitted (signatures verified on arrival, in batches), then one
/// milestone over all of them. `cold` forgets the verdicts cached on arrival
/// first, so the confirmation verifies every signature itself (a node that
/// replayed its log, or blocks that arrived before caching).
/// CPU time of the whole process (every thread): steadier than wall time
/// on a machine shared with other jobs.
fn cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// Wall and CPU time of one measured step.
#[derive(Clone, Copy)]
struct Took {
    wall: Duration,
    cpu: Duration,
}

impl Took {
    fn since(wall: Instant, cpu: Duration) -> Self {
        Self {
            wall: wall.elapsed(),
            cpu: cpu_time().saturating_sub(cpu),
        }
    }
}

/// "median wall (median CPU; runs wall…)".
fn report(v: &[Took]) -> String {
    let walls: Vec<Duration> = v.iter().map(|t| t.wall).collect();
    format!(
        "median {:.2?} wall, {:.2?} CPU (runs {walls:.1?})",
        median(walls.clone()),
        median(v.iter().map(|t| t.cpu).collect())
    )
}

fn confirm_round(keys: &[SigningKey], cold: bool, indexer: bool) -> (Took, Took) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut cfg = EngineConfig::dev(dir.path());
    cfg.genesis = genesis(keys);
    cfg.durability = Durability::Deferred { interval_ms: 100 };
    cfg.indexer = indexer;
    let engine = Engine::open(cfg).expect("the engine opens");
    let m1 = engine.issue_milestone().expect("milestone 1");
    // Built before the clock starts: the figure is the engine's, not the signer's.
    let mut blocks = Vec::with_capacity(keys.len());
    let mut parents = vec![m1.block_id];
    for (i, k) in keys.iter().enumerate() {
        // A chain of parents keeps the tip pool small, like a busy network.
        let b = tx_block(&engine, k, i, parents);
        parents = vec![Block::id_of(&b)];
        blocks.push(b);
    }
    let (t, c) = (Instant::now(), cpu_time());
    for b in &blocks {
        engine.submit_v2(b).expect("the bench block is accepted");
    }
    let submit = Took::since(t, c);
    if cold {
        engine.forget_signature_verdicts();
    }
    let (t, c) = (Instant::now(), cpu_time());
    let m2 = engine.issue_milestone().expect("milestone 2");
    let confirm = Took::since(t, c);
    let (created, consumed) = engine
        .milestone_diff(m2.index)
        .expect("the diff of milestone 2");
    assert_eq!(
        (created.len(), consumed.len()),
        (keys.len(), keys.len()),
        "every transaction applied"
    );
    (submit, confirm)
}

fn confirm_10k() {
    let keys = signing_keys(TXS);
    const ROUNDS: usize = 5;
    let (mut submit, mut cached, mut cold, mut no_indexer) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let (s, c) = confirm_round(&keys, false, true);
        submit.push(s);
        cached.push(c);
        let (s, c) = confirm_round(&keys, true, true);
        submit.push(s);
        cold.push(c);
        // The same cached confirmation without the indexer, interleaved so load drifts hit
        // both alike.
        let (_, c) = confirm_round(&keys, false, false);
        no_indexer.push(c);
    }
    let rate = TXS as f64 / median(submit.iter().map(|t| t.wall).collect()).as_secs_f64();
    println!(
        "confirm_10k_tx_blocks: submit {TXS} blocks (signatures verified on arrival): {} = {rate:.0} blocks/s",
        report(&submit)
    );
    println!(
        "confirm_10k_tx_blocks: milestone confirmation, verdicts cached on arrival: {}",
        report(&cached)
    );
    println!(
        "confirm_10k_tx_blocks: milestone confirmation, cold (every signature verified): {}",
        report(&cold)
    );
    let on = median(cached.iter().map(|t| t.wall).collect());
    let off = median(no_indexer.iter().map(|t| t.wall).collect());
    println!(
        "confirm_10k_tx_blocks: milestone confirmation, verdicts cached, indexer off: {} (indexer on / off = {:.2})",
        report(&no_indexer),
        on.as_secs_f64() / off.as_secs_f64()
    );
}

fn richlist_1m() {
    const ADDRESSES: u32 = 1_000_000;
    let addr = |i: u32| {
        let mut key_hash = [0u8; 32];
        key_hash[..4].copy_from_slice(&i.to_le_bytes());
        Address::Ed25519(Hash32::owned(key_hash)).to_array()
    };
    let mut r = RichList::new(0);
    for i in 0..ADDRESSES {
        r.credit_genesis(addr(i), u64::from(i % 100_000) + 1)
            .expect("a genesis credit");
    }
    // 100 milestones, each moving funds between 1000 addresses. Their changes are kept here
    // as the engine keeps them in its milestone journal (read back per query there: this
    // measures the list's own work).
    let mut journal: Vec<Vec<([u8; 33], i128)>> = Vec::new();
    for m in 1..=100u32 {
        let changes: Vec<([u8; 33], i128)> = (0..1000u32)
            .flat_map(|k| {
                let from = (m * 7919 + k * 104_729) % ADDRESSES;
                let to = (m * 15_485_863 + k * 32_452_843) % ADDRESSES;
                [(addr(from), -1i128), (addr(to), 1i128)]
            })
            .collect();
        r.apply_milestone(m, changes.iter().copied())
            .expect("balances stay positive");
        journal.push(changes);
    }
    for (label, at) in [
        ("current", 100u32),
        ("50 milestones back", 50),
        ("oldest (100 back)", 0),
    ] {
        let took = median_time(
            21,
            || {
                let later = || Ok(journal[at as usize..].concat());
                r.top(100, at, later).expect("the index is kept")
            },
            |top| assert_eq!(top.len(), 100),
        );
        println!("richlist_top100_1M_addresses at {label}: median {took:.2?}");
    }
}

/// The richest addresses at older ledger indexes through the engine: 20 000 genesis
/// addresses, then 100 milestones of 100 transactions each (every one empties a genesis
/// address into one common address), so each milestone changes the balances of 101 addresses.
fn richest_history() {
    const MILESTONES: usize = 100;
    const PER_MILESTONE: usize = 100;
    let keys = signing_keys(2 * MILESTONES * PER_MILESTONE);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut cfg = EngineConfig::dev(dir.path());
    cfg.genesis = genesis(&keys);
    cfg.durability = Durability::Deferred { interval_ms: 100 };
    let engine = Engine::open(cfg).expect("the engine opens");
    let mut parents = vec![engine.issue_milestone().expect("milestone 1").block_id];
    for (m, chunk) in keys.chunks(PER_MILESTONE).take(MILESTONES).enumerate() {
        for (k, key) in chunk.iter().enumerate() {
            let b = tx_block(&engine, key, m * PER_MILESTONE + k, parents);
            parents = vec![Block::id_of(&b)];
            engine.submit_v2(&b).expect("the bench block is accepted");
        }
        engine.issue_milestone().expect("a milestone");
    }
    let (current, _) = engine.richest(100, None).expect("the current list");
    for (label, back) in [
        ("current", 0u32),
        ("10 milestones back", 10),
        ("100 milestones back", 100),
    ] {
        let at = current - back;
        let took = median_time(
            21,
            || engine.richest(100, Some(at)).expect("the index is kept"),
            |(_, top)| assert_eq!(top.len(), 100),
        );
        println!(
            "richest_top100_engine (20 000 addresses, 101 changed per milestone) at {label}: median {took:.2?}"
        );
    }
    // A milestone by index: the latest is in memory, older ones are read from the journal.
    for (label, back) in [("latest", 0u32), ("50 back", 50)] {
        let index = current - back;
        let took = median_time(
            1001,
            || engine.milestone_by_index(index).expect("confirmed"),
            |m| assert_eq!(m.index, index),
        );
        println!("milestone_by_index (entries of 100 transactions) {label}: median {took:.2?}");
    }
}

/// Anonymous resident memory of this process, from `/proc/self/status`, in KiB.
fn rss_anon_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("RssAnon:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Transactions per milestone in `history`.
const HISTORY_TXS: usize = 100;
/// Keys (and genesis outputs) of `history`: the unspent set stays this size.
const HISTORY_KEYS: usize = 10_000;
/// Milestones of the two histories `history` compares.
const HISTORY_LENGTHS: [usize; 2] = [200, 1000];
/// Child-process mode of `history`: open the data directory given and measure.
const HISTORY_OPEN: &str = "LEDGER_BENCH_HISTORY_OPEN";

/// The engine configuration of `history` for `dir`, on a genesis of `keys` outputs.
fn history_config(dir: &std::path::Path, keys: &[SigningKey]) -> EngineConfig {
    let mut cfg = EngineConfig::dev(dir);
    cfg.genesis = genesis(keys);
    cfg.durability = Durability::Deferred { interval_ms: 100 };
    cfg
}

/// A history of transactions on a ledger of `HISTORY_KEYS` outputs: `milestones` milestones of
/// `HISTORY_TXS` transactions, each spending one key's output into a new one for the same key
/// (the unspent set stays the same size, the spent outputs grow), written by one engine and
/// stopped. Then, in a fresh process (this bench binary again) so that its memory is its own:
/// the time to open it, RssAnon after the open, and reads of spent outputs from the oldest
/// tenth of the history.
fn history() {
    if let Ok(arg) = std::env::var(HISTORY_OPEN) {
        return history_open(&arg);
    }
    let keys = signing_keys(HISTORY_KEYS);
    for milestones in HISTORY_LENGTHS {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let engine = Engine::open(history_config(dir.path(), &keys)).expect("the engine opens");
        let mut parents = vec![engine.issue_milestone().expect("milestone 1").block_id];
        let mut unspent: Vec<OutputId> = (0..HISTORY_KEYS).map(genesis_output_id).collect();
        let built = Instant::now();
        for m in 0..milestones {
            for k in 0..HISTORY_TXS {
                let key_index = (m * HISTORY_TXS + k) % HISTORY_KEYS;
                let key = &keys[key_index];
                let (b, created) =
                    spend_block(&engine, key, unspent[key_index], key.address(), parents);
                parents = vec![Block::id_of(&b)];
                engine.submit_v2(&b).expect("the bench block is accepted");
                unspent[key_index] = created;
            }
            engine.issue_milestone().expect("a milestone");
        }
        let built = built.elapsed();
        // No clean stop (as after a crash): the last checkpoint is the last milestone's.
        drop(engine);
        println!(
            "history of {milestones} milestones x {HISTORY_TXS} transactions on {HISTORY_KEYS} \
             outputs (built in {built:.1?}):"
        );
        // The child stops cleanly: the second open is after a clean stop.
        let arg = format!("{}:{milestones}", dir.path().display());
        open_in_children("history", HISTORY_OPEN, &arg);
    }
}

/// Runs this bench binary again as bench `case` with `env` set to `arg`, twice: the first child
/// opens a data directory left without a final checkpoint and stops cleanly, so the second
/// opens it after a clean stop. Prints what each measured (in a fresh process, so that its
/// memory is the open's own).
fn open_in_children(case: &str, env: &str, arg: &str) {
    for label in [
        "after a stop without a final checkpoint",
        "after a clean stop",
    ] {
        let exe = std::env::current_exe().expect("this bench binary");
        let out = std::process::Command::new(exe)
            .arg("--bench")
            .arg(case)
            .env(env, arg)
            .output()
            .expect("the measuring child runs");
        println!(
            " {label}:\n{}",
            String::from_utf8_lossy(&out.stdout).trim_end()
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The child of [`history`]: `DIR:MILESTONES`.
fn history_open(arg: &str) {
    let (dir, milestones) = arg.rsplit_once(':').expect("DIR:MILESTONES");
    let milestones: usize = milestones.parse().expect("a milestone count");
    let keys = signing_keys(HISTORY_KEYS);
    let cfg = history_config(std::path::Path::new(dir), &keys);
    let before = rss_anon_kib();
    let t = Instant::now();
    let engine = Engine::open(cfg).expect("the engine opens again");
    let opened = t.elapsed();
    let after = rss_anon_kib();
    // Spent outputs of the oldest tenth of the history: the genesis outputs it spent first.
    let old: Vec<[u8; 34]> = (0..(milestones * HISTORY_TXS / 10).min(HISTORY_KEYS))
        .map(|i| genesis_output_id(i).to_array())
        .collect();
    let mut times: Vec<Duration> = old
        .iter()
        .map(|id| {
            let t = Instant::now();
            let o = engine.output(id);
            let e = t.elapsed();
            assert!(o.is_some_and(|o| o.row.spent.is_some()), "a spent output");
            e
        })
        .collect();
    times.sort();
    let p = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!(
        "  open {opened:.3?} ({:?})\n  RssAnon after the open {:.1} MiB, +{:.1} MiB by the open\n  \
         GET of {} old spent outputs: p50 {:.2?}, p99 {:.2?}",
        engine.opened(),
        after as f64 / 1024.0,
        after.saturating_sub(before) as f64 / 1024.0,
        times.len(),
        p(0.5),
        p(0.99)
    );
    engine.shutdown().expect("a clean stop");
}

/// Milestones of the two histories `milestones` compares (no transactions).
const MILESTONE_LENGTHS: [usize; 2] = [20_000, 100_000];
/// Child-process mode of `milestones`: open the data directory given and measure.
const MILESTONES_OPEN: &str = "LEDGER_BENCH_MILESTONES_OPEN";

/// The engine configuration of `milestones` for `dir`.
fn milestones_config(dir: &std::path::Path) -> EngineConfig {
    let mut cfg = EngineConfig::dev(dir);
    cfg.durability = Durability::Deferred { interval_ms: 100 };
    // A checkpoint (and its fsyncs) per 100 milestones: the build is the issuing, not the disk.
    cfg.checkpoint_interval = 100;
    cfg
}

/// A history of empty milestones, `MILESTONE_LENGTHS` long, written by one engine; then, in a
/// fresh process each (this bench binary again), after a stop without a final checkpoint and
/// after a clean one: the time to open it, RssAnon after the open (the difference between the
/// two lengths, per milestone, is what each milestone costs in memory), and lookups of
/// milestones from the oldest tenth by index and by id.
fn milestone_history() {
    if let Ok(arg) = std::env::var(MILESTONES_OPEN) {
        return milestones_open(&arg);
    }
    for milestones in MILESTONE_LENGTHS {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let engine = Engine::open(milestones_config(dir.path())).expect("the engine opens");
        let built = Instant::now();
        for _ in 0..milestones {
            engine.issue_milestone().expect("a milestone");
        }
        let built = built.elapsed();
        drop(engine);
        println!("history of {milestones} milestones (built in {built:.1?}):");
        let arg = dir.path().display().to_string();
        open_in_children("milestones", MILESTONES_OPEN, &arg);
    }
}

/// The child of [`milestone_history`]: the data directory.
fn milestones_open(dir: &str) {
    let before = rss_anon_kib();
    let t = Instant::now();
    let engine =
        Engine::open(milestones_config(std::path::Path::new(dir))).expect("the engine opens");
    let opened = t.elapsed();
    let after = rss_anon_kib();
    let latest = engine.latest_milestone().expect("milestones").index;
    let old: Vec<u32> = (1..=latest / 10).step_by(7).collect();
    let mut by_index = Vec::with_capacity(old.len());
    let mut by_id = Vec::with_capacity(old.len());
    for i in &old {
        let t = Instant::now();
        let m = engine.milestone_by_index(*i).expect("an old milestone");
        by_index.push(t.elapsed());
        let t = Instant::now();
        let again = engine.milestone_by_id(&m.milestone_id);
        by_id.push(t.elapsed());
        assert_eq!(again, Some(m));
    }
    let p = |v: &mut Vec<Duration>, q: f64| {
        v.sort();
        v[((v.len() - 1) as f64 * q) as usize]
    };
    println!(
        "  open {opened:.3?} ({:?})\n  RssAnon after the open {:.1} MiB, +{:.1} MiB by the open\n  \
         {} old milestones: by index p50 {:.2?} p99 {:.2?}, by id p50 {:.2?} p99 {:.2?}",
        engine.opened(),
        after as f64 / 1024.0,
        after.saturating_sub(before) as f64 / 1024.0,
        old.len(),
        p(&mut by_index, 0.5),
        p(&mut by_index, 0.99),
        p(&mut by_id, 0.5),
        p(&mut by_id, 0.99),
    );
    engine.shutdown().expect("a clean stop");
}

fn main() {
    // `cargo test --all-targets` runs bench binaries without `--bench`: nothing to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("benchmark harness: run it with `cargo bench`");
        return;
    }
    // `cargo bench` passes --bench; a filter argument selects one case.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let want = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    if want("confirm") {
        confirm_10k();
    }
    if want("richlist") {
        richlist_1m();
    }
    if want("richest") {
        richest_history();
    }
    if want("history") {
        history();
    }
    if want("milestones") {
        milestone_history();
    }
}
