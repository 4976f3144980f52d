//! Pruning gives disk back (engine/FORMAT.md, "Retired segments"): the log segments holding
//! only pruned blocks are retired with their block metadata files, the ledger's older
//! outputs move to the ledger base (`history/base.bin`), and every answer the node still
//! gives (outputs, spends, rich list, indexer, blocks and milestones above the pruning index)
//! is the same before the retirement, after it and after a restart.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ledger_codec::ed25519::SigningKey;
use ledger_codec::stardust::{Block, Output, Payload};
use ledger_codec::Codec;
use ledger_engine::{Engine, EngineConfig, Filter, Opened, OutputKind, PruneTarget, Query};
use ledger_test_support::blocks;

use crate::dev_net::{self, basic, key, SUPPLY};

fn config(dir: &Path) -> EngineConfig {
    let mut c = dev_net::config(dir, 5);
    c.log_segment_size = 64 << 10;
    // Ledger checkpoints only when one must be written: the first, and after a new base.
    c.ledger_checkpoint_bytes = u64::MAX;
    c
}

/// The ledger base index and ledger index the ledger checkpoint in `dir` names
/// (engine/FORMAT.md: header bytes 16..20 and 20..24).
fn ledger_checkpoint_at(dir: &Path) -> (u32, u32) {
    let bytes = std::fs::read(dir.join("history/ledger.checkpoint")).unwrap();
    let field = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    (field(16), field(20))
}

fn transfer(
    engine: &Engine,
    from: &SigningKey,
    inputs: &[([u8; 34], Output<'static>)],
    outputs: Vec<Output<'static>>,
) -> ([u8; 32], [u8; 32]) {
    let tx = blocks::transaction(engine.params().network_id(), from, inputs, outputs);
    let block = blocks::transaction_block(engine.select_parents(), tx);
    let tx_id = match Block::decode(&block).unwrap().payload {
        Some(Payload::Transaction(tx)) => tx.id().unwrap(),
        _ => unreachable!(),
    };
    (engine.submit_v2(&block).unwrap().block_id, tx_id)
}

/// `n` milestones with `per` data blocks before each.
fn fill(engine: &Engine, n: u32, per: u32, tag: &str) -> Vec<[u8; 32]> {
    let mut ids = Vec::new();
    for m in 0..n {
        for i in 0..per {
            let block = blocks::tagged_block(
                engine.select_parents(),
                format!("{tag}-{m}-{i}-padding-to-make-blocks-larger").as_bytes(),
            );
            ids.push(engine.submit_v2(&block).unwrap().block_id);
        }
        engine.issue_milestone().unwrap();
    }
    ids
}

/// An output as served: its bytes, spending and booking milestones.
type Served = Option<(Vec<u8>, Option<u32>, u32)>;

/// Everything compared across the retirement and the restart.
#[derive(PartialEq)]
struct Answers {
    outputs: Vec<Served>,
    richest: Vec<([u8; 33], u64)>,
    indexed: Vec<[u8; 34]>,
    recent_blocks: Vec<Option<Vec<u8>>>,
    milestones: Vec<Option<ledger_engine::MilestoneInfo>>,
}

fn answers(engine: &Engine, outputs: &[[u8; 34]], recent: &[[u8; 32]], from: u32) -> Answers {
    let query = Query {
        kinds: vec![OutputKind::Basic],
        filter: Filter::default(),
        page_size: 1000,
        cursor: None,
    };
    Answers {
        outputs: outputs
            .iter()
            .map(|id| {
                engine
                    .output(id)
                    .map(|o| (o.bytes, o.row.spent.map(|s| s.index), o.row.booked_index))
            })
            .collect(),
        richest: engine.richest(10, None).unwrap().1,
        indexed: engine.indexed_outputs(&query).unwrap().items,
        recent_blocks: recent
            .iter()
            .map(|id| engine.block_bytes(id).map(|b| b.to_vec()))
            .collect(),
        milestones: (from..=engine.ledger_index())
            .map(|i| {
                // By id as by index (the id's row in the milestone index, after the journal
                // was rewritten from the new base on).
                let m = engine.milestone_by_index(i);
                assert_eq!(m.and_then(|m| engine.milestone_by_id(&m.milestone_id)), m);
                m
            })
            .collect(),
    }
}

impl std::fmt::Debug for Answers {
    // Field by field what differs would be thousands of bytes: a summary.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let served = self.recent_blocks.iter().filter(|b| b.is_some()).count();
        f.debug_struct("Answers")
            .field(
                "outputs",
                &self
                    .outputs
                    .iter()
                    .map(|o| o.as_ref().map(|o| (o.0.len(), o.1, o.2)))
                    .collect::<Vec<_>>(),
            )
            .field(
                "richest",
                &self.richest.iter().map(|r| r.1).collect::<Vec<_>>(),
            )
            .field("indexed", &self.indexed.len())
            .field("recent_blocks_served", &(served, self.recent_blocks.len()))
            .field(
                "milestones",
                &self
                    .milestones
                    .iter()
                    .map(|m| m.map(|m| m.index))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn pruning_retires_whole_segments_and_every_kept_answer_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let engine: Arc<Engine> = Engine::open(config(dir.path())).unwrap();
    engine.issue_milestone().unwrap();
    let other = SigningKey::from_seed(&[9; 32]);
    // Milestone 2: the genesis output split; `kept` stays unspent, `change` is spent at
    // milestone 3 (both below the pruning index to come).
    let (_, tx1) = transfer(
        &engine,
        &key(),
        &[([0; 34], basic(SUPPLY, key().address()))],
        vec![
            basic(1_000_000, other.address()),
            basic(SUPPLY - 1_000_000, key().address()),
        ],
    );
    engine.issue_milestone().unwrap();
    let kept = blocks::output_id(tx1, 0);
    let change = blocks::output_id(tx1, 1);
    let (_, tx2) = transfer(
        &engine,
        &key(),
        &[(change, basic(SUPPLY - 1_000_000, key().address()))],
        vec![
            basic(2_000_000, other.address()),
            basic(SUPPLY - 3_000_000, key().address()),
        ],
    );
    engine.issue_milestone().unwrap();
    // `later` (booked at 3) is spent after the pruning index.
    let later = blocks::output_id(tx2, 0);
    let rest = blocks::output_id(tx2, 1);
    fill(&engine, 50, 50, "old");
    let recent = fill(&engine, 15, 30, "recent");
    let cmi = engine.ledger_index();
    assert_eq!(cmi, 68);
    let segments_before = engine.log_stats().segments;
    assert!(segments_before >= 5, "{segments_before} segments");

    let ids = [kept, later, rest];
    let before = answers(&engine, &ids, &recent, cmi - 19);
    let size_before = engine.data_size();

    assert_eq!(engine.prune(PruneTarget::Index(cmi - 20)), Ok(cmi - 20));
    let base = dir.path().join("history/base.bin");
    assert!(base.exists(), "the ledger base is written");
    let stats = engine.log_stats();
    assert!(
        stats.segments < segments_before,
        "{} segments of {segments_before} left",
        stats.segments
    );
    assert_eq!(answers(&engine, &ids, &recent, cmi - 19), before);
    // The released space (holes punched after the zero grace period here).
    wait_until("the disk space of retired segments", || {
        engine.data_size() < size_before * 3 / 4
    });

    // The ledger's older outputs are spent from the base's bytes.
    let (_, tx3) = transfer(
        &engine,
        &other,
        &[(later, basic(2_000_000, other.address()))],
        vec![basic(2_000_000, other.address())],
    );
    engine.issue_milestone().unwrap();
    // The ledger checkpoint written before the prune names the genesis's ledger; the
    // checkpoint after the new base wrote one that names the base.
    assert_eq!(ledger_checkpoint_at(dir.path()), (cmi - 20, cmi + 1));
    let spent_after = engine.output(&later).unwrap();
    assert_eq!(spent_after.row.spent.map(|s| s.index), Some(cmi + 1));
    let new_output = blocks::output_id(tx3, 0);
    assert!(engine.output(&new_output).is_some());
    let ids = [kept, later, rest, new_output];
    let before = answers(&engine, &ids, &recent, cmi - 19);
    engine.shutdown().unwrap();
    drop(engine);

    let engine = Engine::open(config(dir.path())).unwrap();
    assert!(
        matches!(engine.opened(), Some(Opened::Checkpoint { .. })),
        "{:?}",
        engine.opened()
    );
    assert_eq!(engine.pruning_index(), cmi - 20);
    assert_eq!(answers(&engine, &ids, &recent, cmi - 19), before);
    assert!(
        !dir.path().join("log/00000000.seg").exists(),
        "retired segment files are deleted at the next start"
    );
    assert!(!dir.path().join("history/blockmeta/00000000.meta").exists());

    // Prune again: a new base replaces the old one, answers still hold.
    fill(&engine, 30, 30, "more");
    let cmi2 = engine.ledger_index();
    let recent2 = fill(&engine, 1, 1, "last");
    assert_eq!(engine.prune(PruneTarget::Index(cmi2 - 20)), Ok(cmi2 - 20));
    let again = answers(&engine, &ids, &recent2, cmi2 - 19);
    // `later`, spent at milestone cmi + 1, is pruned now with its spend; the others stay.
    assert_eq!(again.outputs[1], None);
    for i in [0, 2, 3] {
        assert_eq!(again.outputs[i], before.outputs[i], "output {i}");
    }
    engine.shutdown().unwrap();
    drop(engine);
    let engine = Engine::open(config(dir.path())).unwrap();
    assert_eq!(answers(&engine, &ids, &recent2, cmi2 - 19), again);
}
