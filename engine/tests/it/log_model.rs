//! Model-based test of the block log: random appends (v2, v3, repeats), lookups and reopens
//! against a `Vec` reference model. After every reopen the log's state (records in order, with
//! their ids, locations and bytes) equals the state before, and every modelled block is found
//! by `get`, whether its sealed segment was opened from its index file or (after the index
//! file was lost) scanned and re-indexed.

use ledger_codec::hash::blake2b256;
use ledger_engine::internals::log::{BlockId, Durability, Location, Log, LogConfig};
use ledger_engine::LogError;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// Append v2 block `n` of the pool (repeats exercise idempotency).
    AppendV2(u8),
    /// Append v3 block `n` of the pool under an id with slot `n`.
    AppendV3(u8),
    /// Look up block `n` of the pool by its v2 id.
    Get(u8),
    /// Drop the log and open it again.
    Reopen,
    /// Drop the log, delete the index file of sealed segment `n % 32` (if any) and reopen.
    LoseIndexAndReopen(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<u8>().prop_map(Op::AppendV2),
        2 => any::<u8>().prop_map(Op::AppendV3),
        2 => any::<u8>().prop_map(Op::Get),
        1 => Just(Op::Reopen),
        1 => any::<u8>().prop_map(Op::LoseIndexAndReopen),
    ]
}

fn body(n: u8) -> Vec<u8> {
    let len = 1 + usize::from(n) * 13 % 700;
    (0..len)
        .map(|i| (i as u8).wrapping_mul(n).wrapping_add(n))
        .collect()
}

fn v3_id(n: u8) -> [u8; 36] {
    let mut id = [0u8; 36];
    id[..32].copy_from_slice(&blake2b256(&body(n)));
    id[32..].copy_from_slice(&u32::from(n).to_le_bytes());
    id
}

type State = Vec<(BlockId, Location, Vec<u8>)>;

fn state(log: &Log) -> State {
    log.reader()
        .iter()
        .map(|r| (r.id(), r.location(), r.bytes().to_vec()))
        .collect()
}

/// Opens the log again after the test dropped it. In this test binary `log_crash` spawns
/// child processes: between its fork and the child's exec the child holds a copy of every
/// descriptor, the log's locked `LOCK` file included, for a moment. A lock that is still held
/// then is retried for up to a second; a real double open stays refused.
fn reopen(dir: &std::path::Path, config: LogConfig) -> Log {
    for _ in 0..100 {
        match Log::open(dir, config) {
            Err(LogError::Locked { .. }) => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            other => return other.unwrap(),
        }
    }
    Log::open(dir, config).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn log_matches_a_vec_model_across_reopens(ops in prop::collection::vec(op(), 1..120)) {
        let dir = tempfile::tempdir().unwrap();
        // Small segments: the model also crosses seals, index files and segment creation.
        let config = LogConfig::default()
            .with_segment_size(4096)
            .with_durability(Durability::Deferred { interval_ms: 50 });
        let mut log = Log::open(dir.path(), config).unwrap();
        let mut model: State = Vec::new();
        for op in ops {
            match op {
                Op::AppendV2(n) | Op::AppendV3(n) => {
                    let (id, a) = if let Op::AppendV3(_) = op {
                        (BlockId::V3(v3_id(n)), log.append_v3(v3_id(n), &body(n)).unwrap())
                    } else {
                        (BlockId::V2(blake2b256(&body(n))), log.append_v2(&body(n)).unwrap())
                    };
                    match model.iter().find(|r| r.0 == id) {
                        Some(known) => {
                            prop_assert!(!a.inserted);
                            prop_assert_eq!(a.location, known.1);
                        }
                        None => {
                            prop_assert!(a.inserted);
                            prop_assert!(model.last().is_none_or(|last| last.1 < a.location));
                            model.push((id, a.location, body(n)));
                        }
                    }
                }
                Op::Get(n) => {
                    let id = BlockId::V2(blake2b256(&body(n)));
                    let want = model.iter().find(|r| r.0 == id);
                    let reader = log.reader();
                    let got = reader.get(&id);
                    prop_assert_eq!(
                        got.map(|r| (r.location(), r.bytes().to_vec())),
                        want.map(|r| (r.1, r.2.clone()))
                    );
                }
                Op::Reopen | Op::LoseIndexAndReopen(_) => {
                    let before = state(&log);
                    drop(log);
                    let mut lost = None;
                    if let Op::LoseIndexAndReopen(n) = op {
                        let path = dir.path().join(format!("{:08}.idx", n % 32));
                        if std::fs::remove_file(path).is_ok() {
                            lost = Some(u32::from(n % 32));
                        }
                    }
                    log = reopen(dir.path(), config);
                    let recovery = log.recovery();
                    prop_assert_eq!(recovery.truncated_at, None);
                    let rebuilt: Vec<u32> = recovery.rebuilt_indexes.iter().map(|r| r.0).collect();
                    prop_assert_eq!(rebuilt, lost.into_iter().collect::<Vec<_>>());
                    prop_assert_eq!(recovery.scanned_segments, 1 + u32::from(lost.is_some()));
                    prop_assert_eq!(&state(&log), &before);
                    for (id, location, bytes) in &model {
                        let reader = log.reader();
                        let got = reader.get(id).map(|r| (r.location(), r.bytes().to_vec()));
                        prop_assert_eq!(got, Some((*location, bytes.clone())));
                    }
                }
            }
            prop_assert_eq!(log.len(), model.len() as u64);
        }
        prop_assert_eq!(state(&log), model);
    }
}
