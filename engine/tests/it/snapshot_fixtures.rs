//! Hornet's four TIP-35 fixtures (vectors/hornet-snapshots/, docs/snapshots-pruning.md §6.1,
//! §6.3): read completely with the sizes the reference gives, loaded to the end states Hornet's
//! own snapshot test asserts, and hashed to §6.3's values.

use std::{fs, path::PathBuf};

use sha2::Digest;

use ledger_engine::snapshot::{
    load, DeltaReader, FullReader, LoadedSnapshot, SnapHash, FULL_HEADER_FIXED_LEN,
};

fn fixture(name: &str) -> PathBuf {
    ledger_test_support::vectors_dir()
        .join("hornet-snapshots")
        .join(name)
}

fn bytes(name: &str) -> Vec<u8> {
    fs::read(fixture(name)).unwrap()
}

fn id_of(byte: u8) -> [u8; 34] {
    [byte; 34]
}

fn amount_of(snapshot: &LoadedSnapshot, id: [u8; 34]) -> Option<u64> {
    snapshot
        .unspent
        .iter()
        .find(|o| o.output_id == id)
        .and_then(|o| o.amount())
}

/// Per full fixture: file, length, header length, outputs, diff indexes, SEPs, network, hrp.
struct FullCase {
    file: &'static str,
    len: u64,
    header_len: u64,
    outputs: u64,
    diffs: &'static [u32],
    seps: u16,
    target: u32,
    ledger: u32,
    hrp: &'static str,
    treasury: u64,
}

/// Hornet's genesis full file; the migration fixture differs in its treasury only.
const GENESIS_FULL: FullCase = FullCase {
    file: "full_snapshot.bin",
    len: 304,
    header_len: 148,
    outputs: 1,
    diffs: &[],
    seps: 1,
    target: 0,
    ledger: 0,
    hrp: "rms",
    treasury: 0,
};

const FULL_CASES: [FullCase; 3] = [
    GENESIS_FULL,
    FullCase {
        file: "migration_full_snapshot.bin",
        treasury: 10_000_000_000,
        ..GENESIS_FULL
    },
    FullCase {
        file: "snapshot_full_snapshot.bin",
        len: 2613,
        header_len: 149,
        outputs: 2,
        diffs: &[3, 2],
        seps: 10,
        target: 1,
        ledger: 3,
        hrp: "atoi",
        treasury: 2_779_530_283_277_761 - 10_000_000 - 20_000_000,
    },
];

#[test]
fn the_full_fixtures_parse_completely_with_the_reference_sizes() {
    for case in &FULL_CASES {
        let data = bytes(case.file);
        assert_eq!(data.len() as u64, case.len, "{}", case.file);
        let mut reader = FullReader::new(&data[..]).unwrap();
        let header = reader.header().clone();
        assert_eq!(header.encoded_len(), case.header_len, "{}", case.file);
        assert_eq!(
            header.encoded_len(),
            FULL_HEADER_FIXED_LEN + header.protocol_parameters.params.len() as u64
        );
        assert_eq!(reader.position(), case.header_len, "{}", case.file);
        assert_eq!(header.output_count, case.outputs, "{}", case.file);
        assert_eq!(
            header.diff_count as usize,
            case.diffs.len(),
            "{}",
            case.file
        );
        assert_eq!(header.sep_count, case.seps, "{}", case.file);
        assert_eq!(header.target_milestone_index, case.target, "{}", case.file);
        assert_eq!(header.ledger_milestone_index, case.ledger, "{}", case.file);
        assert_eq!(header.treasury.amount, case.treasury, "{}", case.file);
        assert_eq!(reader.parameters().network_name, "alphanet1");
        assert_eq!(reader.parameters().bech32_hrp, case.hrp);
        assert_eq!(reader.parameters().token_supply, 2_779_530_283_277_761);
        let mut outputs = 0;
        while let Some(o) = reader.next_output().unwrap() {
            assert_eq!(o.record_len(), 78 + o.output.len() as u64);
            outputs += 1;
        }
        assert_eq!(outputs, case.outputs);
        let mut indexes = Vec::new();
        while let Some(d) = reader.next_diff().unwrap() {
            indexes.push(d.index().unwrap());
        }
        assert_eq!(indexes, case.diffs, "{}", case.file);
        let mut seps = 0;
        while reader.next_sep().unwrap().is_some() {
            seps += 1;
        }
        assert_eq!(seps, case.seps);
        reader.finish().unwrap();
        assert_eq!(reader.position(), case.len, "{}", case.file);
    }
}

#[test]
fn the_genesis_fixtures_hold_one_output_of_78_plus_46_bytes_and_the_zero_sep() {
    for file in ["full_snapshot.bin", "migration_full_snapshot.bin"] {
        let data = bytes(file);
        let mut reader = FullReader::new(&data[..]).unwrap();
        let p = reader.parameters().clone();
        assert_eq!(p.min_pow_score, 100);
        assert_eq!(p.below_max_depth, 15);
        assert_eq!(p.rent_structure.v_byte_cost, 500);
        assert_eq!(p.rent_structure.v_byte_factor_data, 1);
        assert_eq!(p.rent_structure.v_byte_factor_key, 10);
        let output = reader.next_output().unwrap().unwrap();
        assert_eq!(output.record_len(), 78 + 46);
        assert_eq!(reader.next_sep().unwrap(), Some([0u8; 32]));
    }
}

#[test]
fn the_delta_fixture_parses_with_its_sep_offset_and_a_receipt_in_milestone_5() {
    let data = bytes("snapshot_delta_snapshot.bin");
    assert_eq!(data.len(), 4232);
    let mut reader = DeltaReader::new(&data[..]).unwrap();
    let header = *reader.header();
    assert_eq!(header.target_milestone_index, 5);
    assert_eq!(header.sep_file_offset, 3912);
    assert_eq!(header.full_snapshot_target_milestone_id, [0u8; 32]);
    let mut diffs = Vec::new();
    while let Some(d) = reader.next_diff().unwrap() {
        diffs.push(d);
    }
    let indexes: Vec<u32> = diffs.iter().map(|d| d.index().unwrap()).collect();
    assert_eq!(indexes, [2, 3, 4, 5]);
    for d in &diffs {
        let receipt = d.milestone().unwrap().receipt().map(|r| r.migrated_at);
        assert_eq!(d.treasury_input.is_some(), receipt.is_some());
        if d.index().unwrap() == 5 {
            assert_eq!(receipt, Some(9001));
        } else {
            assert_eq!(receipt, None);
        }
    }
    assert_eq!(reader.position(), 3912);
    let mut seps = 0;
    while reader.next_sep().unwrap().is_some() {
        seps += 1;
    }
    assert_eq!(seps, 10);
    reader.finish().unwrap();
}

#[test]
fn the_full_fixture_alone_loads_to_ledger_1() {
    let s = load(
        &fixture("snapshot_full_snapshot.bin"),
        None,
        Some("alphanet1"),
    )
    .unwrap();
    assert_eq!((s.ledger_index, s.target_index), (1, 1));
    assert_eq!(s.unspent.len(), 2);
    assert_eq!(amount_of(&s, id_of(1)), Some(20_000_000));
    assert_eq!(amount_of(&s, id_of(2)), Some(10_000_000));
    assert_eq!(s.treasury.amount, 2_779_530_253_277_761);
    assert_eq!(s.seps.len(), 10);
    assert!(s.delta_diffs.is_empty());
    assert_eq!(s.bech32_hrp, "atoi");
}

#[test]
fn the_full_fixture_and_its_delta_load_to_hornets_end_state() {
    let s = load(
        &fixture("snapshot_full_snapshot.bin"),
        Some(&fixture("snapshot_delta_snapshot.bin")),
        Some("alphanet1"),
    )
    .unwrap();
    assert_eq!((s.ledger_index, s.target_index), (5, 5));
    assert_eq!(s.unspent.len(), 1);
    assert_eq!(amount_of(&s, id_of(9)), Some(40_000_000));
    assert_eq!(s.treasury.amount, 2_779_530_283_277_761 - 40_000_000);
    let id = hex::encode(s.treasury.milestone_id);
    assert!(
        id.starts_with("2f9698b3") && id.ends_with("65cc41"),
        "treasury milestone id {id}"
    );
    let applied: Vec<u32> = s.delta_diffs.iter().map(|d| d.index().unwrap()).collect();
    assert_eq!(applied, [2, 3, 4, 5]);
    assert_eq!(s.seps.len(), 10);
}

#[test]
fn the_genesis_fixtures_load_to_one_output_and_the_treasury() {
    for (file, treasury) in [
        ("full_snapshot.bin", 0),
        ("migration_full_snapshot.bin", 10_000_000_000),
    ] {
        let s = load(&fixture(file), None, None).unwrap();
        assert_eq!(s.ledger_index, 0, "{file}");
        assert_eq!(s.unspent.len(), 1, "{file}");
        assert_eq!(s.treasury.amount, treasury, "{file}");
        assert_eq!(
            s.unspent[0].amount(),
            Some(2_779_530_283_277_761 - treasury),
            "{file}"
        );
        assert_eq!(s.seps, [[0u8; 32]], "{file}");
    }
}

#[test]
fn a_wrong_network_is_refused_naming_both() {
    let err = load(&fixture("full_snapshot.bin"), None, Some("shimmer")).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("alphanet1") && text.contains("shimmer"),
        "{text}"
    );
}

#[test]
fn a_delta_on_another_full_file_is_not_mergeable() {
    // full_snapshot.bin's target id is zero too, so make the delta name another id.
    let mut delta = bytes("snapshot_delta_snapshot.bin");
    delta[10] ^= 1;
    let full = bytes("snapshot_full_snapshot.bin");
    let err = ledger_engine::snapshot::load_from(&full[..], Some(&delta[..]), None).unwrap_err();
    assert!(
        err.to_string().starts_with("snapshots not mergeable"),
        "{err}"
    );
}

#[test]
fn the_hashes_are_the_reference_values() {
    let cases = [
        (
            "full_snapshot.bin",
            None,
            "63b9a82837e347b2cb7009da54e1265a9a9cdf8143f97de0832cc9b675014f4b",
            "6200b040595a618e84c3dedddd2b005fb2b9da4d1647fcb363f77b59ec53e300",
        ),
        (
            "snapshot_full_snapshot.bin",
            None,
            "5b3224f78b376b165477c0782885775310ea432c207a89e166fe67a1d2393ce5",
            "9b1507be049c8a6c9ef40aee6456674f6614b58b492c8c2d6e7c13657f03d121",
        ),
        (
            "snapshot_full_snapshot.bin",
            Some("snapshot_delta_snapshot.bin"),
            "147258dd98055d07898898bde1e4a19ba7c36fa9346102530f8c592f69559b00",
            "d9542d19c3b82de419368c0a692c5be70a89d6a47299bf3fdc2010edaa43b445",
        ),
    ];
    for (full, delta, ledger, with_seps) in cases {
        let delta = delta.map(fixture);
        let s = load(&fixture(full), delta.as_deref(), None).unwrap();
        let h = SnapHash::of(&s);
        assert_eq!(h.ledger_state_hash, ledger, "{full} {delta:?}");
        assert_eq!(
            h.ledger_state_hash_with_solid_entry_points, with_seps,
            "{full} {delta:?}"
        );
        assert_eq!(h.ledger_token_supply, 2_779_530_283_277_761);
        assert_eq!(h.utxos_count, s.unspent.len());
        // The only option is the header's (activation 0, active at the ledger index), so the
        // parameters hash covers exactly the option bytes at offset 92 of the full file.
        let data = bytes(full);
        let len = usize::from(u16::from_le_bytes([data[90], data[91]]));
        assert_eq!(s.protocol_parameters.len(), 1);
        assert_eq!(
            h.protocol_parameters_hash,
            hex::encode(sha2::Sha256::digest(&data[92..92 + len]))
        );
    }
}
