//! Crash test of the block log: a child process appends blocks from two threads and prints the
//! id of each block after its append returned; the parent kills it with SIGKILL at a random
//! moment, reopens the log (no repair step) and checks that every acknowledged block is there
//! and intact. The child is this test binary itself, re-run with `LOG_CRASH_CHILD_DIR` set.
//! Segments are small, so the child rolls many times per run and kills land while a sealed
//! segment's index file is written: the reopen must then find every index file either intact
//! or absent (only the newest sealed segment's, rebuilt from its segment), never damaged.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use ledger_codec::hash::blake2b256;
use ledger_engine::internals::log::{BlockId, Durability, Log, LogConfig};
use rand::{Rng, SeedableRng};

const CHILD_DIR: &str = "LOG_CRASH_CHILD_DIR";
const CHILD_CYCLE: &str = "LOG_CRASH_CHILD_CYCLE";
/// Small segments so that kills also land around seals, index files and segment creation.
const SEGMENT_SIZE: u32 = 16 << 10;

fn config(cycle: u64) -> LogConfig {
    let durability = match cycle % 3 {
        0 => Durability::EveryAppend,
        1 => Durability::Group { interval_ms: 1 },
        _ => Durability::Deferred { interval_ms: 5 },
    };
    LogConfig::default()
        .with_segment_size(SEGMENT_SIZE)
        .with_durability(durability)
}

fn block(rng: &mut impl Rng, cycle: u64, thread: u64, n: u64) -> Vec<u8> {
    let len = rng.gen_range(24..3000);
    let mut b: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
    b[..24].copy_from_slice(&[cycle.to_le_bytes(), thread.to_le_bytes(), n.to_le_bytes()].concat());
    b
}

/// The child: appends until killed, acknowledging each block on stdout.
#[test]
#[ignore = "child process of the crash tests, run by them"]
fn crash_child_process() {
    let dir = std::env::var(CHILD_DIR).expect("run by the crash test");
    let cycle: u64 = std::env::var(CHILD_CYCLE).unwrap().parse().unwrap();
    let log = Log::open(&dir, config(cycle)).unwrap();
    std::thread::scope(|s| {
        for thread in 0..2u64 {
            let log = &log;
            s.spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(cycle * 2 + thread);
                for n in 0.. {
                    let b = block(&mut rng, cycle, thread, n);
                    let line = if n % 5 == 4 {
                        let mut id = [0u8; 36];
                        id[..32].copy_from_slice(&blake2b256(&b));
                        id[32..].copy_from_slice(&(n as u32).to_le_bytes());
                        log.append_v3(id, &b).unwrap();
                        format!("ACK v3 {}\n", hex::encode(id))
                    } else {
                        log.append_v2(&b).unwrap();
                        format!("ACK v2 {}\n", hex::encode(blake2b256(&b)))
                    };
                    let mut out = std::io::stdout().lock();
                    out.write_all(line.as_bytes()).unwrap();
                    out.flush().unwrap();
                }
            });
        }
    });
}

/// The child's full test name as `--exact` wants it: its path in this test binary without the
/// crate's name (`log_crash::crash_child_process` in the `it` binary), so the filter follows
/// the module wherever it is mounted.
fn child_test_name() -> String {
    match module_path!().split_once("::") {
        Some((_crate, module)) => format!("{module}::crash_child_process"),
        None => "crash_child_process".to_owned(),
    }
}

fn parse_ack(line: &str) -> Option<BlockId> {
    let line = line.strip_suffix('\n')?;
    let (kind, hex_id) = line.strip_prefix("ACK ")?.split_once(' ')?;
    let bytes = hex::decode(hex_id).ok()?;
    match kind {
        "v2" => Some(BlockId::V2(bytes.try_into().ok()?)),
        "v3" => Some(BlockId::V3(bytes.try_into().ok()?)),
        _ => None,
    }
}

/// Runs one child until it acknowledged something, waits a random moment, kills it and
/// returns the ids it acknowledged.
fn run_and_kill(dir: &Path, cycle: u64, rng: &mut impl Rng) -> Vec<BlockId> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            child_test_name().as_str(),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir)
        .env(CHILD_CYCLE, cycle.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (first_tx, first_rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut acked = Vec::new();
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        // A line cut short by the kill has no newline and is not an acknowledgement.
        while reader.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            if let Some(id) = parse_ack(&line) {
                if acked.is_empty() {
                    let _ = first_tx.send(());
                }
                acked.push(id);
            }
            line.clear();
        }
        acked
    });
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let started = first_rx.recv_timeout(Duration::from_secs(60)).is_ok();
    if started {
        std::thread::sleep(Duration::from_micros(rng.gen_range(0..40_000)));
    }
    let exited_early = child.try_wait().unwrap();
    child.kill().unwrap();
    let status = child.wait().unwrap();
    let acked = reader.join().unwrap();
    let stderr = errors.join().unwrap();
    assert!(
        started && exited_early.is_none(),
        "cycle {cycle}: child did not run until killed ({status:?}):\n{stderr}"
    );
    acked
}

/// What the reopen after a kill found.
#[derive(Default)]
struct Reopened {
    torn_tails: u32,
    rebuilt_indexes: u32,
}

/// Reopens the log and checks every acknowledged block and every stored record, and that
/// the kill damaged no index file.
fn verify(dir: &Path, cycle: u64, acked: &HashMap<BlockId, u64>) -> Reopened {
    let log = Log::open(dir, config(cycle))
        .unwrap_or_else(|e| panic!("cycle {cycle}: log does not open after kill: {e}"));
    let recovery = log.recovery();
    // A kill between a seal and its index file's rename leaves the newest sealed segment
    // without one (it is then the last segment, and a new one is created after it); any
    // other missing or damaged index file is a bug.
    for (segment, why) in &recovery.rebuilt_indexes {
        assert_eq!(
            (why.as_str(), *segment + 2),
            ("missing", recovery.segments),
            "cycle {cycle}: index of segment {segment} rebuilt"
        );
    }
    assert!(
        recovery.scanned_segments <= 1 + recovery.rebuilt_indexes.len() as u32,
        "cycle {cycle}: {recovery:?}"
    );
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(!name.ends_with(".tmp"), "cycle {cycle}: {name} left");
    }
    for (id, acked_in) in acked {
        let reader = log.reader();
        let record = reader.get(id).unwrap_or_else(|| {
            panic!("cycle {cycle}: block {id:?} acknowledged in cycle {acked_in} is missing")
        });
        assert_eq!(record.id(), *id);
        assert_eq!(
            &blake2b256(record.bytes())[..],
            &id.as_bytes()[..32],
            "cycle {cycle}: block acknowledged in cycle {acked_in} is damaged"
        );
    }
    // Unacknowledged blocks that made it are intact too, and each id is stored once.
    let mut seen = HashSet::new();
    for record in log.reader().iter() {
        let id = record.id();
        assert_eq!(
            &blake2b256(record.bytes())[..],
            &id.as_bytes()[..32],
            "cycle {cycle}"
        );
        assert!(seen.insert(id), "cycle {cycle}: {id:?} stored twice");
    }
    assert_eq!(seen.len() as u64, log.len());
    // Every lookup above verified the index file it used: none was damaged.
    let health = log.index_health();
    assert_eq!(health.rebuilt, recovery.rebuilt_indexes, "cycle {cycle}");
    assert_eq!(health.unusable, vec![], "cycle {cycle}");
    Reopened {
        torn_tails: u32::from(recovery.truncated_at.is_some()),
        rebuilt_indexes: recovery.rebuilt_indexes.len() as u32,
    }
}

fn crash_cycles(cycles: u64, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut acked = HashMap::new();
    let mut torn = 0;
    let mut rebuilt = 0;
    for cycle in 0..cycles {
        let new = run_and_kill(dir.path(), cycle, &mut rng);
        assert!(!new.is_empty(), "cycle {cycle}: nothing acknowledged");
        for id in new {
            acked.insert(id, cycle);
        }
        let reopened = verify(dir.path(), cycle, &acked);
        torn += reopened.torn_tails;
        rebuilt += reopened.rebuilt_indexes;
    }
    let log = Log::open(dir.path(), config(0)).unwrap();
    eprintln!(
        "{cycles} kills: {} acknowledged, {:?}, {torn} torn tails, {rebuilt} index files \
         rebuilt",
        acked.len(),
        log.stats()
    );
    assert!(
        log.stats().segments > cycles as u32,
        "kills should have spanned many segment rolls"
    );
    assert_eq!(
        log.recovery().scanned_segments,
        1,
        "every index file in place"
    );
}

#[test]
fn acknowledged_blocks_survive_50_kills() {
    crash_cycles(50, 0x5eed);
}

#[test]
#[ignore = "long: 500 kill cycles"]
fn acknowledged_blocks_survive_500_kills() {
    crash_cycles(500, 0xC0FFEE);
}
