//! Snapshot files against a model ledger (docs/snapshots-pruning.md §1, §3.2-3.3): a random
//! history of milestones (outputs created and consumed, receipts moving the treasury into
//! migrated outputs, pending protocol parameters options) is written as a full file at a
//! ledger index with diffs down below its target, and as a delta up to a later target. The
//! readers return exactly what was written, and `load` returns the model's state at the
//! target, alone and with the delta.

use std::{borrow::Cow, collections::BTreeMap, path::Path};

use ledger_codec::{
    stardust::{
        Address, Ed25519Signature, MigratedFundsEntry, Milestone, MilestoneOption,
        ProtocolParameters, ProtocolParamsOption, Receipt, RentStructure, TailTransactionHash,
        TreasuryInput, TreasuryOutput, TreasuryTransaction,
    },
    types::{Bytes, Fixed},
    Codec,
};
use ledger_engine::snapshot::{
    load, DeltaHeader, DeltaReader, DeltaWriter, FullHeader, FullReader, FullWriter, MilestoneDiff,
    ProtocolParametersOption, SnapshotOutput, SnapshotSpent, Treasury,
};
use proptest::prelude::*;

const SUPPLY: u64 = 1_000_000_000_000;

pub(crate) fn params(min_pow_score: u32) -> ProtocolParameters {
    ProtocolParameters {
        version: 2,
        network_name: "snapnet".into(),
        bech32_hrp: "snap".into(),
        min_pow_score,
        below_max_depth: 15,
        rent_structure: RentStructure {
            v_byte_cost: 1,
            v_byte_factor_data: 1,
            v_byte_factor_key: 10,
        },
        token_supply: SUPPLY,
    }
}

fn option(activation_index: u32, min_pow_score: u32) -> ProtocolParametersOption {
    ProtocolParametersOption {
        activation_index,
        protocol_version: 2,
        params: params(min_pow_score).to_bytes().unwrap(),
    }
}

fn output(id: [u8; 34], amount: u64, booked_index: u32) -> SnapshotOutput {
    let out = ledger_test_support::ledger::basic_to(amount, [id[0]; 32]);
    SnapshotOutput {
        output_id: id,
        block_id: [id[1]; 32],
        booked_index,
        booked_timestamp: 1_000 + booked_index,
        output: out.to_bytes().unwrap(),
    }
}

fn payload(index: u32, options: Vec<MilestoneOption<'static>>) -> Vec<u8> {
    Milestone {
        index,
        timestamp: 1_000 + index,
        protocol_version: 2,
        previous_milestone_id: Fixed::owned([index as u8; 32]),
        parents: Cow::Owned(vec![[7u8; 32]]),
        inclusion_merkle_root: Fixed::owned([1; 32]),
        applied_merkle_root: Fixed::owned([2; 32]),
        metadata: Bytes::from(vec![]),
        options,
        signatures: Cow::Owned(vec![Ed25519Signature::new([3; 32], [4; 64])]),
    }
    .to_bytes()
    .unwrap()
}

/// One milestone's random changes: which unspent outputs (by position) it spends, how many
/// outputs the sum goes to, how much of the treasury a receipt migrates, and whether it
/// announces parameters.
#[derive(Debug, Clone)]
struct Step {
    spend: Vec<prop::sample::Index>,
    split: u8,
    migrate: Option<u64>,
    announce: bool,
}

fn step() -> impl Strategy<Value = Step> {
    (
        prop::collection::vec(any::<prop::sample::Index>(), 0..3),
        1u8..4,
        prop::option::weighted(0.3, 1_000u64..1_000_000),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(spend, split, migrate, announce)| Step {
            spend,
            split,
            migrate,
            announce,
        })
}

#[derive(Debug, Clone, PartialEq)]
struct State {
    unspent: BTreeMap<[u8; 34], SnapshotOutput>,
    treasury: Treasury,
}

/// A history: the state at each index from `base`, and the diff of each milestone after it.
struct History {
    base: u32,
    states: Vec<State>,
    diffs: Vec<MilestoneDiff>,
    announced: Vec<ProtocolParametersOption>,
}

impl History {
    fn state(&self, index: u32) -> &State {
        &self.states[(index - self.base) as usize]
    }

    fn diff(&self, index: u32) -> &MilestoneDiff {
        &self.diffs[(index - self.base - 1) as usize]
    }
}

fn build(base: u32, initial: &[u64], steps: &[Step]) -> History {
    let mut unspent = BTreeMap::new();
    for (i, amount) in initial.iter().enumerate() {
        let id = [i as u8 + 1; 34];
        unspent.insert(id, output(id, *amount, base));
    }
    let treasury = Treasury {
        milestone_id: [0; 32],
        amount: SUPPLY - initial.iter().sum::<u64>(),
    };
    let mut state = State { unspent, treasury };
    let mut history = History {
        base,
        states: vec![state.clone()],
        diffs: Vec::new(),
        announced: Vec::new(),
    };
    for (n, s) in steps.iter().enumerate() {
        let index = base + 1 + n as u32;
        let mut tx = [0u8; 32];
        tx[..4].copy_from_slice(&index.to_le_bytes());
        tx[31] = 0xee;
        let ids: Vec<[u8; 34]> = state.unspent.keys().copied().collect();
        let mut spent_ids: Vec<[u8; 34]> = s
            .spend
            .iter()
            .filter(|_| !ids.is_empty())
            .map(|i| ids[i.index(ids.len())])
            .collect();
        spent_ids.sort();
        spent_ids.dedup();
        let consumed: Vec<SnapshotSpent> = spent_ids
            .iter()
            .map(|id| SnapshotSpent {
                output: state.unspent[id].clone(),
                spent_by: tx,
            })
            .collect();
        let total: u64 = consumed.iter().map(|c| c.output.amount().unwrap()).sum();
        let mut created = Vec::new();
        if total > 0 {
            let parts = u64::from(s.split).min(total / 1_000).max(1);
            for k in 0..parts {
                let amount = if k + 1 == parts {
                    total - (total / parts) * (parts - 1)
                } else {
                    total / parts
                };
                let mut id = [0u8; 34];
                id[..32].copy_from_slice(&tx);
                id[32] = k as u8;
                created.push(output(id, amount, index));
            }
        }
        let mut options = Vec::new();
        let mut treasury_input = None;
        let mut migrated = None;
        if let Some(x) = s.migrate.filter(|x| *x < state.treasury.amount) {
            treasury_input = Some(state.treasury);
            options.push(MilestoneOption::Receipt(Receipt {
                migrated_at: index,
                last: true,
                funds: vec![MigratedFundsEntry {
                    tail_transaction_hash: TailTransactionHash(Fixed::owned([9u8; 49])),
                    address: Address::Ed25519(Fixed::owned([5; 32])),
                    deposit: x,
                }],
                transaction: TreasuryTransaction {
                    input: TreasuryInput {
                        milestone_id: Fixed::owned(state.treasury.milestone_id),
                    },
                    output: TreasuryOutput {
                        amount: state.treasury.amount - x,
                    },
                },
            }));
            migrated = Some(x);
        }
        if s.announce {
            let o = option(index + 1_000, index);
            options.push(MilestoneOption::ProtocolParams(ProtocolParamsOption {
                target_milestone_index: o.activation_index,
                protocol_version: o.protocol_version,
                params: Bytes::from(o.params.clone()),
            }));
            history.announced.push(o);
        }
        let milestone_payload = payload(index, options);
        let milestone_id = Milestone::decode(&milestone_payload).unwrap().id().unwrap();
        if let Some(x) = migrated {
            let mut id = [0u8; 34];
            id[..32].copy_from_slice(&milestone_id);
            created.push(output(id, x, index));
            state.treasury = Treasury {
                milestone_id,
                amount: state.treasury.amount - x,
            };
        }
        // A node writes each list sorted by output id (as Hornet's store returns them).
        created.sort_by_key(|a| a.output_id);
        for c in &consumed {
            state.unspent.remove(&c.output.output_id);
        }
        for o in &created {
            state.unspent.insert(o.output_id, o.clone());
        }
        history.diffs.push(MilestoneDiff {
            milestone_payload,
            treasury_input,
            created,
            consumed,
        });
        history.states.push(state.clone());
    }
    history
}

/// The loaded state, as the model's.
fn loaded_state(s: &ledger_engine::snapshot::LoadedSnapshot) -> State {
    State {
        unspent: s.unspent.iter().map(|o| (o.output_id, o.clone())).collect(),
        treasury: s.treasury,
    }
}

struct Files {
    full_header: FullHeader,
    full_diffs: Vec<u32>,
    delta_header: DeltaHeader,
    seps: Vec<[u8; 32]>,
}

/// Writes the full file (state at `ledger`, diffs `ledger` down to `lowest`) and the delta
/// (diffs `target`+1 ..= `delta_target`).
fn write_files(
    h: &History,
    dir: &Path,
    (lowest, target, ledger, delta_target): (u32, u32, u32, u32),
    seps: &[[u8; 32]],
) -> Files {
    let at_ledger = h.state(ledger);
    let full_header = FullHeader {
        genesis_milestone_index: h.base,
        target_milestone_index: target,
        target_milestone_timestamp: 1_000 + target,
        target_milestone_id: [target as u8; 32],
        ledger_milestone_index: ledger,
        treasury: at_ledger.treasury,
        protocol_parameters: option(0, 0),
        output_count: 0,
        diff_count: 0,
        sep_count: 0,
    };
    let mut w = FullWriter::create(&dir.join("full.bin"), &full_header).unwrap();
    // Outputs in no particular order: readers assume none (§1.7).
    for o in at_ledger.unspent.values().rev() {
        w.push_output(o).unwrap();
    }
    let full_diffs: Vec<u32> = (lowest..=ledger).rev().collect();
    for i in &full_diffs {
        w.push_diff(h.diff(*i)).unwrap();
    }
    for s in seps {
        w.push_sep(s).unwrap();
    }
    w.finish().unwrap();
    let delta_header = DeltaHeader {
        target_milestone_index: delta_target,
        target_milestone_timestamp: 1_000 + delta_target,
        full_snapshot_target_milestone_id: full_header.target_milestone_id,
        sep_file_offset: 0,
        diff_count: 0,
        sep_count: 0,
    };
    let mut w = DeltaWriter::create(&dir.join("delta.bin"), &delta_header).unwrap();
    for i in target + 1..=delta_target {
        w.push_diff(h.diff(i)).unwrap();
    }
    for s in seps.iter().rev() {
        w.push_sep(s).unwrap();
    }
    w.finish().unwrap();
    Files {
        full_header,
        full_diffs,
        delta_header,
        seps: seps.to_vec(),
    }
}

/// Initial amounts, steps, how far below/above/after the target the files reach, SEPs.
type Case = (Vec<u64>, Vec<Step>, (u32, u32, u32), Vec<[u8; 32]>);

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(1_000u64..10_000_000, 1..5),
        prop::collection::vec(step(), 4..12),
        (0u32..3, 0u32..3, 0u32..4),
        prop::collection::vec(any::<[u8; 32]>(), 0..5),
    )
        .prop_map(|(initial, steps, cuts, seps)| (initial, steps, cuts, seps))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn written_files_read_back_equal_and_load_to_the_models_state(
        (initial, steps, (below, above, after), seps) in case()
    ) {
        let base = 10;
        let h = build(base, &initial, &steps);
        let last = base + steps.len() as u32;
        // lowest diff in the full file ≥ base + 1, target ≥ lowest, ledger ≥ target, delta
        // target ≥ target, all ≤ last.
        let lowest = base + 1;
        let target = (lowest + below).min(last);
        let ledger = (target + above).min(last);
        let delta_target = (target + after).min(last);
        let dir = tempfile::tempdir().unwrap();
        let files = write_files(&h, dir.path(), (lowest, target, ledger, delta_target), &seps);
        let full_path = dir.path().join("full.bin");
        let delta_path = dir.path().join("delta.bin");
        prop_assert!(!ledger_engine::snapshot::temporary_path(&full_path).exists());

        // The full file reads back as written, counts patched.
        let data = std::fs::read(&full_path).unwrap();
        let mut r = FullReader::new(&data[..]).unwrap();
        let mut expected_header = files.full_header.clone();
        expected_header.output_count = h.state(ledger).unspent.len() as u64;
        expected_header.diff_count = files.full_diffs.len() as u32;
        expected_header.sep_count = seps.len() as u16;
        prop_assert_eq!(r.header(), &expected_header);
        let mut outputs = Vec::new();
        while let Some(o) = r.next_output().unwrap() {
            outputs.push(o);
        }
        let want: Vec<SnapshotOutput> = h.state(ledger).unspent.values().rev().cloned().collect();
        prop_assert_eq!(outputs, want);
        let mut diffs = Vec::new();
        while let Some(d) = r.next_diff().unwrap() {
            diffs.push(d);
        }
        let want: Vec<MilestoneDiff> = files.full_diffs.iter().map(|i| h.diff(*i).clone()).collect();
        prop_assert_eq!(diffs, want);
        let mut read_seps = Vec::new();
        while let Some(s) = r.next_sep().unwrap() {
            read_seps.push(s);
        }
        prop_assert_eq!(&read_seps, &files.seps);
        r.finish().unwrap();

        // The delta reads back as written, its SEP offset patched to the end of its diffs.
        let data = std::fs::read(&delta_path).unwrap();
        let mut r = DeltaReader::new(&data[..]).unwrap();
        let delta_diffs: Vec<MilestoneDiff> = (target + 1..=delta_target).map(|i| h.diff(i).clone()).collect();
        let diffs_len: u64 = delta_diffs.iter().map(MilestoneDiff::record_len).sum();
        let mut expected_delta = files.delta_header;
        expected_delta.sep_file_offset = 56 + diffs_len as i64;
        expected_delta.diff_count = delta_diffs.len() as u32;
        expected_delta.sep_count = seps.len() as u16;
        prop_assert_eq!(r.header(), &expected_delta);
        let mut diffs = Vec::new();
        while let Some(d) = r.next_diff().unwrap() {
            diffs.push(d);
        }
        prop_assert_eq!(&diffs, &delta_diffs);
        let mut read_seps = Vec::new();
        while let Some(s) = r.next_sep().unwrap() {
            read_seps.push(s);
        }
        let reversed: Vec<[u8; 32]> = seps.iter().rev().copied().collect();
        prop_assert_eq!(read_seps, reversed);
        r.finish().unwrap();
        prop_assert_eq!(data.len() as u64, 56 + diffs_len + 32 * seps.len() as u64);

        // Loading: the model's state at the target, then at the delta's target.
        let mut sorted_seps = seps.clone();
        sorted_seps.sort();
        sorted_seps.dedup();
        let s = load(&full_path, None, Some("snapnet")).unwrap();
        prop_assert_eq!((s.ledger_index, s.target_index), (target, target));
        prop_assert_eq!(&loaded_state(&s), h.state(target));
        prop_assert_eq!(&s.seps, &sorted_seps);
        let pending: Vec<&ProtocolParametersOption> = h.announced.iter()
            .filter(|o| o.activation_index - 1_000 <= ledger && o.activation_index - 1_000 >= lowest)
            .collect();
        prop_assert_eq!(s.protocol_parameters.len(), 1 + pending.len());
        let s = load(&full_path, Some(&delta_path), None).unwrap();
        prop_assert_eq!((s.ledger_index, s.target_index), (delta_target, delta_target));
        prop_assert_eq!(&loaded_state(&s), h.state(delta_target));
        prop_assert_eq!(&s.delta_diffs, &delta_diffs);
        prop_assert_eq!(&s.seps, &sorted_seps);
        if let Some(last) = delta_diffs.last() {
            prop_assert_eq!(s.target_milestone_id, last.milestone_id().unwrap());
        }
    }
}

/// A receipt moves the unspent treasury: loading refuses a file whose treasury is not the one
/// the receipt spends (applying a delta's diff) or creates (rolling a full file's diff back to
/// its target), and names both.
#[test]
fn a_receipt_over_another_treasury_is_refused_both_ways() {
    let receipt = Step {
        spend: Vec::new(),
        split: 1,
        migrate: Some(5_000),
        announce: false,
    };
    let mut h = build(10, &[1_000_000], &[receipt.clone(), receipt]);
    // The full files below carry the treasury of index 11 or 12 under another milestone id
    // (the same amount: the supply still adds up).
    h.states[1].treasury.milestone_id = [0xab; 32];
    h.states[2].treasury.milestone_id = [0xab; 32];
    for ((target, ledger, delta_target), doing) in [
        ((11, 11, 12), "its receipt spends"),
        ((11, 12, 11), "rolling back its receipt expects"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write_files(&h, dir.path(), (11, target, ledger, delta_target), &[]);
        let delta = dir.path().join("delta.bin");
        let delta = (delta_target > target).then_some(delta.as_path());
        let err = load(&dir.path().join("full.bin"), delta, None)
            .expect_err("a treasury the receipt does not move")
            .to_string();
        assert!(
            err.contains(doing) && err.contains("but the unspent treasury is"),
            "{err}"
        );
        assert!(err.contains(&format!("0x{}", "ab".repeat(32))), "{err}");
    }
}
