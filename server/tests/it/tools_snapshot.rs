//! `ledger-node tools snapshot-info` and `tools snap-hash` over Hornet's fixtures
//! (vectors/hornet-snapshots/, docs/snapshots-pruning.md §6.1, §6.3), run as the real binary.

use std::{fs, path::PathBuf, process::Command};

use ledger_test_support::process::Run;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ledger-node");

fn fixture(name: &str) -> PathBuf {
    ledger_test_support::vectors_dir()
        .join("hornet-snapshots")
        .join(name)
}

fn tool(args: &[&str]) -> Run {
    Command::new(BIN)
        .arg("tools")
        .args(args)
        .output()
        .expect("run ledger-node")
        .into()
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn json_ok(what: &str, r: &Run) -> Value {
    r.json(what)
}

fn refused(what: &str, r: &Run, code: i32, needle: &str) {
    assert_eq!(
        r.code,
        Some(code),
        "{what}: stdout {} stderr {}",
        r.stdout,
        r.stderr
    );
    assert!(r.stdout.is_empty(), "{what}: printed {}", r.stdout);
    assert!(r.stderr.contains(needle), "{what}: stderr {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
}

/// File, bytes, header bytes, outputs, diff indexes, SEPs, target, ledger, hrp.
type Expected = (
    &'static str,
    u64,
    u64,
    u64,
    &'static [u64],
    u64,
    u64,
    u64,
    &'static str,
);

#[test]
fn snapshot_info_reports_the_headers_counts_and_sizes_of_each_fixture() {
    let cases: [Expected; 3] = [
        ("full_snapshot.bin", 304, 148, 1, &[], 1, 0, 0, "rms"),
        (
            "migration_full_snapshot.bin",
            304,
            148,
            1,
            &[],
            1,
            0,
            0,
            "rms",
        ),
        (
            "snapshot_full_snapshot.bin",
            2613,
            149,
            2,
            &[3, 2],
            10,
            1,
            3,
            "atoi",
        ),
    ];
    for (file, bytes, header, outputs, diffs, seps, target, ledger, hrp) in cases {
        let f = fixture(file);
        let out = json_ok(file, &tool(&["snapshot-info", "--json", path(&f)]));
        let full = &out["full"];
        assert_eq!(full["bytes"], bytes, "{file}");
        assert_eq!(full["headerBytes"], header, "{file}");
        assert_eq!(full["outputCount"], outputs, "{file}");
        let indexes: Vec<u64> = full["milestoneDiffs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["index"].as_u64().unwrap())
            .collect();
        assert_eq!(indexes, diffs, "{file}");
        assert_eq!(full["solidEntryPointCount"], seps, "{file}");
        assert_eq!(full["targetMilestoneIndex"], target, "{file}");
        assert_eq!(full["ledgerMilestoneIndex"], ledger, "{file}");
        assert_eq!(
            full["protocolParameters"]["params"]["networkName"],
            "alphanet1"
        );
        assert_eq!(full["protocolParameters"]["params"]["bech32Hrp"], hrp);
        assert!(out.get("delta").is_none(), "{file}");
        // Header, outputs, diffs and SEPs add up to the file.
        let diff_bytes: u64 = full["milestoneDiffs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(
            header + full["outputBytes"].as_u64().unwrap() + diff_bytes + 32 * seps,
            bytes,
            "{file}"
        );
    }
}

#[test]
fn snapshot_info_checks_the_delta_chain_and_prints_text_by_default() {
    let full = fixture("snapshot_full_snapshot.bin");
    let delta = fixture("snapshot_delta_snapshot.bin");
    let out = json_ok(
        "full+delta",
        &tool(&["snapshot-info", path(&full), path(&delta), "--json"]),
    );
    let d = &out["delta"];
    assert_eq!(d["bytes"], 4232);
    assert_eq!(d["targetMilestoneIndex"], 5);
    assert_eq!(d["sepFileOffset"], 3912);
    assert_eq!(d["chainsToFull"], true);
    assert_eq!(d["solidEntryPointCount"], 10);
    let receipts: Vec<(u64, bool)> = d["milestoneDiffs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["index"].as_u64().unwrap(),
                d["receipt"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(receipts, [(2, false), (3, false), (4, false), (5, true)]);

    let r = tool(&["snapshot-info", path(&full), path(&delta)]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for needle in [
        "full snapshot ",
        "ledger milestone:     3",
        "delta snapshot ",
        "(chains to the full snapshot)",
        "SEP file offset:      3912",
        "5: 1012 bytes, 1 created, 2 consumed, receipt",
    ] {
        assert!(r.stdout.contains(needle), "no {needle:?} in {}", r.stdout);
    }
}

#[test]
fn snapshot_info_refuses_a_foreign_delta_a_cut_file_and_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let full = fixture("snapshot_full_snapshot.bin");
    let mut delta = fs::read(fixture("snapshot_delta_snapshot.bin")).unwrap();
    delta[10] ^= 1;
    let foreign = dir.path().join("foreign_delta.bin");
    fs::write(&foreign, &delta).unwrap();
    let r = tool(&["snapshot-info", path(&full), path(&foreign)]);
    refused("foreign delta", &r, 1, "snapshots not mergeable");
    let r = tool(&["snap-hash", path(&full), path(&foreign)]);
    refused(
        "foreign delta (snap-hash)",
        &r,
        1,
        "snapshots not mergeable",
    );

    let data = fs::read(&full).unwrap();
    let cut = dir.path().join("cut.bin");
    fs::write(&cut, &data[..data.len() - 1]).unwrap();
    let r = tool(&["snapshot-info", path(&cut)]);
    refused(
        "cut full file",
        &r,
        1,
        "full snapshot, solid entry points at byte 2581: file ends inside a solid entry point",
    );

    let missing = dir.path().join("missing.bin");
    let r = tool(&["snapshot-info", path(&missing)]);
    refused("missing file", &r, 2, "missing.bin");
}

#[test]
fn snap_hash_prints_hornets_keys_and_the_reference_hashes() {
    const KEYS: [&str; 14] = [
        "healthy",
        "tainted",
        "snapshotTime",
        "networkId",
        "treasury",
        "ledgerIndex",
        "snapshotIndex",
        "pruningIndex",
        "utxosCount",
        "solidEntryPointsCount",
        "ledgerTokenSupply",
        "ledgerStateHash",
        "ledgerStateHashWithSolidEntryPoints",
        "protocolParametersHash",
    ];
    let cases = [
        (
            vec!["full_snapshot.bin"],
            0,
            1,
            "63b9a82837e347b2cb7009da54e1265a9a9cdf8143f97de0832cc9b675014f4b",
            "6200b040595a618e84c3dedddd2b005fb2b9da4d1647fcb363f77b59ec53e300",
        ),
        (
            vec!["snapshot_full_snapshot.bin"],
            1,
            2,
            "5b3224f78b376b165477c0782885775310ea432c207a89e166fe67a1d2393ce5",
            "9b1507be049c8a6c9ef40aee6456674f6614b58b492c8c2d6e7c13657f03d121",
        ),
        (
            vec!["snapshot_full_snapshot.bin", "snapshot_delta_snapshot.bin"],
            5,
            1,
            "147258dd98055d07898898bde1e4a19ba7c36fa9346102530f8c592f69559b00",
            "d9542d19c3b82de419368c0a692c5be70a89d6a47299bf3fdc2010edaa43b445",
        ),
    ];
    for (files, ledger, utxos, hash, with_seps) in cases {
        let paths: Vec<PathBuf> = files.iter().map(|f| fixture(f)).collect();
        let mut args = vec!["snap-hash"];
        args.extend(paths.iter().map(|p| path(p)));
        let out = json_ok(&files.join("+"), &tool(&args));
        let keys: Vec<&str> = out
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut want = KEYS.to_vec();
        want.sort_unstable();
        let mut got = keys.clone();
        got.sort_unstable();
        assert_eq!(got, want, "{files:?}");
        assert_eq!(out["ledgerIndex"], ledger, "{files:?}");
        assert_eq!(out["snapshotIndex"], ledger, "{files:?}");
        assert_eq!(out["pruningIndex"], ledger, "{files:?}");
        assert_eq!(out["utxosCount"], utxos, "{files:?}");
        assert_eq!(out["ledgerTokenSupply"], 2_779_530_283_277_761u64);
        assert_eq!(out["ledgerStateHash"], hash, "{files:?}");
        assert_eq!(
            out["ledgerStateHashWithSolidEntryPoints"], with_seps,
            "{files:?}"
        );
        assert_eq!(out["healthy"], true);
        assert_eq!(out["tainted"], false);
    }
    let out = json_ok(
        "full+delta",
        &tool(&[
            "snap-hash",
            path(&fixture("snapshot_full_snapshot.bin")),
            path(&fixture("snapshot_delta_snapshot.bin")),
        ]),
    );
    assert_eq!(
        out["treasury"]["milestoneId"],
        "0x2f9698b3c4a4d3f99662cffc8ac0dec14d2bb02c27ede61ff5f2b03ab865cc41"
    );
    assert_eq!(out["treasury"]["tokens"], 2_779_530_243_277_761u64);
}
