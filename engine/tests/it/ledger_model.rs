//! Model-based property test: the engine's ledger against a plain in-memory
//! reference, over random transfers, double spends and milestones.

use std::borrow::Cow;
use std::collections::HashMap;

use proptest::prelude::*;

use ledger_codec::ed25519::SigningKey;
use ledger_codec::stardust::{
    inputs_commitment, Block, Ed25519Signature, Essence, Output, Payload, Transaction, Unlock,
    UtxoInput,
};
use ledger_codec::types::Hash32;
use ledger_codec::Codec;
use ledger_engine::Durability;
use ledger_engine::Inclusion;
use ledger_engine::{Engine, EngineConfig, Genesis};

const OWNERS: usize = 4;
const START: u64 = 10_000_000;

#[derive(Debug, Clone)]
enum Op {
    /// Spend output number `pick` (of all ever created) into `parts` outputs for `to` owners.
    Transfer {
        pick: usize,
        parts: Vec<usize>,
    },
    /// Spend it with a wrong amount sum.
    Unbalanced {
        pick: usize,
    },
    /// Sign with the wrong key.
    WrongKey {
        pick: usize,
    },
    Milestone,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0usize..64, proptest::collection::vec(0usize..OWNERS, 1..4)).prop_map(|(pick, parts)| Op::Transfer { pick, parts }),
        1 => (0usize..64).prop_map(|pick| Op::Unbalanced { pick }),
        1 => (0usize..64).prop_map(|pick| Op::WrongKey { pick }),
        2 => Just(Op::Milestone),
    ]
}

fn keys() -> Vec<SigningKey> {
    (0..OWNERS)
        .map(|i| SigningKey::from_seed(&[i as u8 + 1; 32]))
        .collect()
}

use ledger_test_support::ledger::{basic_to as basic, genesis_with_outputs};

fn genesis(keys: &[SigningKey]) -> Genesis {
    let outputs = keys.iter().enumerate().map(|(i, k)| {
        let mut id = [0u8; 34];
        id[0] = i as u8 + 1;
        (id, basic(START, k.address()))
    });
    Genesis::from_json(&genesis_with_outputs(
        ledger_engine::DEV_GENESIS_JSON,
        outputs,
    ))
    .unwrap()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ModelOutput {
    owner: usize,
    amount: u64,
}

fn owner_key(owner: usize, keys: &[SigningKey]) -> [u8; 33] {
    let mut a = [0u8; 33];
    a[1..].copy_from_slice(&keys[owner].address());
    a
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn ledger_matches_the_reference_model(ops in proptest::collection::vec(op(), 1..30)) {
        let keys = keys();
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = EngineConfig::dev(dir.path());
        cfg.genesis = genesis(&keys);
        cfg.durability = Durability::Deferred { interval_ms: 100 };
        let engine = Engine::open(cfg).unwrap();
        let network = engine.params().network_id();

        // Every output ever created, in creation order, with the model's view.
        let mut all: Vec<([u8; 34], ModelOutput)> = (0..OWNERS)
            .map(|i| {
                let mut id = [0u8; 34];
                id[0] = i as u8 + 1;
                (id, ModelOutput { owner: i, amount: START })
            })
            .collect();
        let mut unspent: HashMap<[u8; 34], ModelOutput> = all.iter().copied().collect();
        // Blocks of the current milestone, in chain order: (block id, expected inclusion).
        let mut pending: Vec<([u8; 32], Inclusion)> = Vec::new();
        let mut last = engine.issue_milestone().unwrap().block_id;
        let mut expected_ledger_index = 1;
        // The richest addresses at each milestone as they were answered while it was current.
        let mut answered = Vec::new();

        for op in ops {
            let (pick, wrong_key, unbalanced, parts) = match &op {
                Op::Milestone => {
                    engine.issue_milestone().unwrap();
                    expected_ledger_index += 1;
                    for (id, want) in pending.drain(..) {
                        prop_assert_eq!(engine.inclusion(&id), Some(want));
                    }
                    // Compare the whole ledger with the model.
                    for (id, m) in &all {
                        let read = engine.output(id);
                        match unspent.get(id) {
                            Some(_) => {
                                let r = read.expect("unspent output is in the ledger");
                                prop_assert!(r.row.spent.is_none());
                                prop_assert_eq!(r.row.amount, m.amount);
                            }
                            None => {
                                if let Some(r) = read { prop_assert!(r.row.spent.is_some()) }
                            }
                        }
                    }
                    let mut balances = [0u64; OWNERS];
                    for m in unspent.values() {
                        balances[m.owner] += m.amount;
                    }
                    let (at, top) = engine.richest(100, None).unwrap();
                    answered.push((at, top.clone()));
                    prop_assert_eq!(at, expected_ledger_index);
                    for (o, b) in balances.iter().enumerate() {
                        let got = top.iter().find(|(a, _)| *a == owner_key(o, &keys)).map_or(0, |(_, b)| *b);
                        prop_assert_eq!(got, *b);
                    }
                    continue;
                }
                Op::Transfer { pick, parts } => (*pick, false, false, parts.clone()),
                Op::Unbalanced { pick } => (*pick, false, true, vec![0]),
                Op::WrongKey { pick } => (*pick, true, false, vec![1]),
            };
            let (input_id, input) = all[pick % all.len()];
            let n = parts.len() as u64;
            let share = input.amount / n;
            let mut amounts: Vec<u64> = vec![share; parts.len()];
            amounts[0] += input.amount - share * n;
            if unbalanced {
                amounts[0] += 1;
            }
            let outputs: Vec<Output<'static>> =
                parts.iter().zip(&amounts).map(|(o, a)| basic(*a, keys[*o].address())).collect();
            let consumed = basic(input.amount, keys[input.owner].address());
            let essence = Essence {
                network_id: network,
                inputs: Cow::Owned(vec![UtxoInput::new(input_id[..32].try_into().unwrap(), u16::from_le_bytes([input_id[32], input_id[33]]))]),
                inputs_commitment: Hash32::from(inputs_commitment([&consumed]).unwrap()),
                outputs,
                payload: None,
            };
            let signer = if wrong_key { &keys[(input.owner + 1) % OWNERS] } else { &keys[input.owner] };
            let sig = signer.sign(&essence.signing_hash().unwrap());
            let tx = Transaction {
                essence,
                unlocks: vec![Unlock::Signature(Cow::Owned(Ed25519Signature::new(signer.public_key(), sig)))],
            };
            let tx_id = tx.id().unwrap();
            let block = Block { protocol_version: 2, parents: vec![last].into(), payload: Some(Payload::Transaction(tx)), nonce: 0 };
            let submitted = match engine.submit_v2(&block.to_bytes().unwrap()) {
                Ok(s) => s,
                // Syntactically invalid (e.g. an output below the storage deposit): refused at the door.
                Err(_) => continue,
            };
            last = submitted.block_id;
            let spendable = unspent.contains_key(&input_id);
            // None: already spent, by an earlier milestone (1) or earlier in this one (2).
            let want = if !spendable {
                None
            } else if wrong_key {
                Some(Inclusion::Conflicting(5))
            } else if unbalanced {
                Some(Inclusion::Conflicting(4))
            } else {
                Some(Inclusion::Included)
            };
            match want {
                Some(Inclusion::Included) => {
                    unspent.remove(&input_id);
                    for (i, (o, a)) in parts.iter().zip(&amounts).enumerate() {
                        let mut id = [0u8; 34];
                        id[..32].copy_from_slice(&tx_id);
                        id[32..].copy_from_slice(&(i as u16).to_le_bytes());
                        let m = ModelOutput { owner: *o, amount: *a };
                        all.push((id, m));
                        unspent.insert(id, m);
                    }
                    pending.push((submitted.block_id, Inclusion::Included));
                }
                Some(other) => pending.push((submitted.block_id, other)),
                None => {
                    // Already spent: conflicting with reason 1 or 2; which one is checked below.
                    let reason = if engine.output(&input_id).is_some_and(|r| r.row.spent.is_some()) { 1 } else { 2 };
                    pending.push((submitted.block_id, Inclusion::Conflicting(reason)));
                }
            }
        }
        // Asked again later, an older index answers what it answered then (the rich list's
        // history is read back from the milestone journal).
        for (at, top) in answered {
            prop_assert_eq!(engine.richest(100, Some(at)).unwrap(), (at, top));
        }
    }
}
