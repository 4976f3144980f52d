//! White-flag Merkle roots against the shared vectors.
//!
//! The real milestones in the vectors (`blocks.json`) come without their past cones, so
//! their inclusion roots cannot be recomputed. What can be checked against published
//! values: (1) a cone whose blocks carry the seven TIP-4 example ids, laid out so that
//! white-flag's post-order walk (parents in their sorted order) yields them in the TIP-4
//! order, gets the TIP-4 example root as its inclusion Merkle root; (2) a cone that applies
//! no transaction gets the applied Merkle root that every real milestone of the vectors
//! carries (`0x0e5751c0…`, the root of the empty list).

use ledger_test_support as common;

use ledger_codec::{stardust::Block, Codec};
use ledger_engine::internals::{
    log::{Log, LogConfig},
    tangle::{Tangle, TipScoring},
    utxo::Ledger,
    whiteflag::{self, Confirmation},
};
use ledger_engine::Genesis;

type Id = [u8; 32];

fn id(name: &str, hex: &serde_json::Value) -> Id {
    let s = hex
        .as_str()
        .unwrap_or_else(|| panic!("{name}: not a string"));
    common::hex_bytes(name, s)
        .try_into()
        .unwrap_or_else(|_| panic!("{name}: not 32 bytes"))
}

/// The TIP-4 example: leaves and root.
fn tip4_example() -> (Vec<Id>, Id) {
    let entries = common::load_entries("stardust", "merkle.json");
    let e = entries
        .iter()
        .find(|e| e["leaves"].as_array().is_some_and(|l| l.len() == 7))
        .expect("the 7-leaf TIP-4 vector");
    let name = e["name"].as_str().unwrap_or("merkle");
    let leaves = e["leaves"]
        .as_array()
        .expect("leaves")
        .iter()
        .map(|l| id(name, l))
        .collect();
    (leaves, id(name, &e["root"]))
}

/// The applied Merkle root of every real milestone in `blocks.json`.
fn vector_milestone_applied_roots() -> Vec<(String, Id)> {
    common::load_entries("stardust", "blocks.json")
        .iter()
        .filter(|e| e["json"]["payload"]["type"] == 7)
        .map(|e| {
            let name = e["name"].as_str().unwrap_or("milestone").to_owned();
            let root = id(&name, &e["json"]["payload"]["appliedMerkleRoot"]);
            (name, root)
        })
        .collect()
}

/// Runs white-flag on a tangle whose blocks have the given ids and parents (every block
/// a stored payload-less block; ids are the tangle's, as white-flag reads blocks through
/// the tangle's record locations), confirming the cone of `milestone_parents`.
fn confirm(blocks: &[(Id, Vec<Id>)], milestone_parents: &[Id]) -> Confirmation {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = Log::open(dir.path(), LogConfig::default()).expect("log");
    let genesis = Genesis::dev();
    let mut tangle = Tangle::new([([0; 32], 0)], 0, TipScoring::default());
    for (n, (block_id, parents)) in blocks.iter().enumerate() {
        let bytes = Block {
            protocol_version: 2,
            parents: vec![[0; 32]].into(),
            payload: None,
            nonce: n as u64,
        }
        .to_bytes()
        .unwrap();
        let record = log.append_v2(&bytes).expect("append").location.to_u64();
        assert!(tangle.insert(*block_id, parents.clone(), None, None, record, None));
    }
    let mut conf = whiteflag::walk(
        whiteflag::Store {
            spent: None,
            tangle: &tangle,
            ledger: &Ledger::new(0),
            log: &log,
            genesis_blob: &genesis.blob,
        },
        milestone_parents,
        1_700_000_000,
        &genesis.params,
        true,
    )
    .expect("white-flag");
    conf.set_roots();
    conf
}

#[test]
fn a_chain_of_the_tip4_ids_gets_the_tip4_inclusion_root() {
    let (leaves, root) = tip4_example();
    let blocks: Vec<(Id, Vec<Id>)> = leaves
        .iter()
        .enumerate()
        .map(|(i, leaf)| {
            let parent = if i == 0 { [0; 32] } else { leaves[i - 1] };
            (*leaf, vec![parent])
        })
        .collect();
    let conf = confirm(&blocks, &[leaves[6]]);
    let order: Vec<Id> = conf.referenced.iter().map(|(b, _)| *b).collect();
    assert_eq!(order, leaves, "white-flag order");
    assert_eq!(conf.inclusion_root, root, "TIP-4 example root");
}

#[test]
fn a_dag_walked_in_sorted_parent_order_gets_the_tip4_inclusion_root() {
    let (l, root) = tip4_example();
    // Parents sorted as on the wire; the walk visits them in that order, so every block's
    // first unvisited parent cone holds exactly the earlier leaves.
    let sorted = |a: Id, b: Id| {
        assert!(a < b, "parents must be sorted");
        vec![a, b]
    };
    let blocks = vec![
        (l[0], vec![[0; 32]]),
        (l[1], vec![l[0]]),
        (l[2], sorted(l[0], l[1])),
        (l[3], vec![l[2]]),
        (l[4], sorted(l[3], l[2])),
        (l[5], vec![l[4]]),
        (l[6], sorted(l[5], l[4])),
    ];
    let conf = confirm(&blocks, &[l[6]]);
    let order: Vec<Id> = conf.referenced.iter().map(|(b, _)| *b).collect();
    assert_eq!(order, l, "white-flag order");
    assert_eq!(conf.inclusion_root, root);

    // The same cone reached through two milestone parents (sorted) is referenced once.
    let both = confirm(&blocks, &sorted(l[4], l[6]));
    let order: Vec<Id> = both.referenced.iter().map(|(b, _)| *b).collect();
    assert_eq!(order, l, "white-flag order with two parents");
    assert_eq!(both.inclusion_root, root);
}

#[test]
fn a_cone_without_transactions_gets_the_applied_root_of_the_vector_milestones() {
    let (leaves, _) = tip4_example();
    let conf = confirm(&[(leaves[0], vec![[0; 32]])], &[leaves[0]]);
    let milestones = vector_milestone_applied_roots();
    assert!(
        milestones.len() >= 3,
        "vector milestones: {}",
        milestones.len()
    );
    for (name, applied) in milestones {
        assert_eq!(conf.applied_root, applied, "{name}");
    }
    assert!(conf.created.is_empty() && conf.consumed.is_empty());
}
