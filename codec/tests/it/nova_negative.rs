//! Every case of `vectors/nova/negative_blocks.json` is rejected, for its
//! stated reason (binary, JSON and the naively encoded bytes where given).

use ledger_test_support as common;

use ledger_codec::nova::block::Block;
use ledger_codec::nova::params::ProtocolParameters;
use ledger_codec::{Codec, Error};
use ledger_test_support::nova_negative::expected;
use serde_json::Value;

fn assert_mentions(name: &str, how: &str, e: &Error) {
    let msg = e.to_string().to_lowercase();
    for w in expected(name) {
        assert!(
            msg.contains(w),
            "case {name} ({how}): error {msg:?} does not mention {w:?}"
        );
    }
}

fn check_bytes(name: &str, how: &str, bytes: &[u8], p: &ProtocolParameters) {
    let r = Block::decode(bytes).and_then(|b| b.validate(p));
    let e = r.expect_err(&format!("case {name} ({how}) must be rejected"));
    assert_mentions(name, how, &e);
}

#[test]
fn every_negative_case_is_rejected_for_its_reason() {
    let p = common::nova_protocol_parameters();
    let cases = common::load_entries("nova", "negative_blocks.json");
    assert_eq!(cases.len(), 32);
    let mut checked = 0;
    for v in &cases {
        let name = v["name"].as_str().unwrap();
        assert_eq!(
            v["expect"]["result"]
                .as_str()
                .map(|s| s.starts_with("reject") || s.contains("invalid")),
            Some(true)
        );
        if let Some(b) = v["bytes"].as_str() {
            check_bytes(name, "bytes", &common::hex_bytes(name, b), &p);
            checked += 1;
        }
        if let Some(b) = v["bytesIfEncodedNaively"].as_str() {
            check_bytes(name, "naive bytes", &common::hex_bytes(name, b), &p);
            checked += 1;
        }
        if let Some(j) = v.get("json").filter(|j| !j.is_null()) {
            let r = Block::from_json(&j.to_string()).and_then(|b| b.validate(&p));
            let e = r.expect_err(&format!("case {name} (json) must be rejected"));
            assert_mentions(name, "json", &e);
            checked += 1;
        }
    }
    assert!(
        checked >= cases.len(),
        "only {checked} checks for {} cases",
        cases.len()
    );
}

#[test]
fn negative_json_cases_fail_at_parse_not_only_at_validation() {
    // Structural JSON faults must never produce a Block at all.
    for v in common::load_entries("nova", "negative_blocks.json") {
        let name = v["name"].as_str().unwrap();
        if name.starts_with("json-") {
            assert!(
                Block::from_json(&v["json"].to_string()).is_err(),
                "case {name}"
            );
        }
        // Unsorted/duplicate/overlapping parents are syntactic: JSON must not parse.
        if matches!(
            name,
            "zero-strong-parents"
                | "nine-strong-parents"
                | "strong-parents-unsorted"
                | "strong-parents-duplicate"
                | "weak-parent-overlaps-strong"
                | "tag-too-long"
                | "unlock-count-mismatch"
                | "capabilities-trailing-zero"
                | "context-inputs-unsorted"
                | "duplicate-input"
                | "zero-amount-output"
                | "allotments-unsorted"
        ) {
            let _: Value = v["json"].clone();
            assert!(
                Block::from_json(&v["json"].to_string()).is_err(),
                "case {name}"
            );
        }
    }
}
