//! The event hook: told of every stored block (submitted or the coordinator's), of blocks
//! becoming solid, and of each
//! confirmed milestone with its referenced blocks in white-flag order and its ledger changes,
//! block before confirmation; only the first hook is kept.

use std::sync::{Arc, Mutex};

use ledger_codec::stardust::{Block, Payload};
use ledger_codec::Codec;
use ledger_engine::{BlockId, ConfirmedMilestone, Engine, EventHook};
use ledger_test_support::blocks;

use crate::dev_net::{self, basic, key, SUPPLY};

#[derive(Debug, PartialEq, Eq)]
enum Heard {
    Stored(BlockId),
    Solid(Vec<BlockId>),
    Confirmed(ConfirmedMilestone),
}

#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<Heard>>);

impl EventHook for Recorder {
    fn block_stored(&self, id: &BlockId) {
        self.0.lock().unwrap().push(Heard::Stored(*id));
    }

    fn blocks_solid(&self, ids: &[BlockId]) {
        self.0.lock().unwrap().push(Heard::Solid(ids.to_vec()));
    }

    fn milestone_confirmed(&self, milestone: ConfirmedMilestone) {
        self.0.lock().unwrap().push(Heard::Confirmed(milestone));
    }
}

#[test]
fn blocks_then_their_milestone_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dev_net::config(dir.path(), 50)).unwrap();
    let hook = Arc::new(Recorder::default());
    assert!(engine.set_event_hook(Arc::clone(&hook) as Arc<dyn EventHook>));
    assert!(!engine.set_event_hook(Arc::new(Recorder::default())));

    let data = blocks::tagged_block(engine.select_parents(), b"events");
    let data_id = engine.submit_v2(&data).unwrap().block_id;
    let tx = blocks::transaction(
        engine.params().network_id(),
        &key(),
        &[([0; 34], basic(SUPPLY, key().address()))],
        vec![basic(SUPPLY, key().address())],
    );
    let tx_block = blocks::transaction_block(engine.select_parents(), tx);
    let tx_block_id = engine.submit_v2(&tx_block).unwrap().block_id;
    // Submitting a known block again tells nothing.
    engine.submit_v2(&data).unwrap();
    let info = engine.issue_milestone().unwrap();

    let heard = std::mem::take(&mut *hook.0.lock().unwrap());
    // Each submitted block stored, then solid (its parents are known).
    assert_eq!(heard[0], Heard::Stored(data_id));
    assert_eq!(heard[1], Heard::Solid(vec![data_id]));
    assert_eq!(heard[2], Heard::Stored(tx_block_id));
    assert_eq!(heard[3], Heard::Solid(vec![tx_block_id]));
    let Some(Heard::Confirmed(confirmed)) = heard.last() else {
        panic!("no confirmation last: {heard:?}");
    };
    assert_eq!(confirmed.info, info);
    // The milestone's own block was told, stored and solid, before its confirmation.
    assert_eq!(heard[4], Heard::Stored(info.block_id));
    assert_eq!(heard[5], Heard::Solid(vec![info.block_id]));
    assert_eq!(heard.len(), 7, "{heard:?}");
    let stored = engine.block_bytes(&info.block_id).unwrap();
    assert!(matches!(
        Block::decode(&stored).unwrap().payload,
        Some(Payload::Milestone(_))
    ));
    // White-flag order: the data block was attached first, and both are referenced.
    let wf: Vec<_> = confirmed
        .referenced
        .iter()
        .filter(|id| **id == data_id || **id == tx_block_id)
        .collect();
    assert_eq!(wf, vec![&data_id, &tx_block_id]);
    let tx_id = ledger_codec::stardust::transaction_id_of_block(&tx_block).unwrap();
    assert_eq!(confirmed.consumed, vec![[0; 34]]);
    assert_eq!(confirmed.created, vec![blocks::output_id(tx_id, 0)]);
}
