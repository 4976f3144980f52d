//! Syntactic rules of the v3 codec that the shared vectors do not cover.

use ledger_codec::nova::output::{Feature, Output};
use ledger_codec::{Codec, ErrorKind};

/// A basic output with an Ed25519 address and one metadata feature whose
/// entries are `keys` (empty values), in the given wire order.
fn basic_with_metadata(keys: &[&str]) -> Vec<u8> {
    let mut b = vec![0u8];
    b.extend_from_slice(&1000u64.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    b.push(1); // one unlock condition
    b.push(0); // address UC
    b.push(0); // Ed25519
    b.extend_from_slice(&[7; 32]);
    b.push(1); // one feature
    b.push(2); // metadata
    b.push(keys.len() as u8);
    for k in keys {
        b.push(k.len() as u8);
        b.extend_from_slice(k.as_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
    }
    b
}

#[test]
fn metadata_entries_are_ordered_by_encoded_bytes_key_length_first() {
    // iota.go order: "b" (len 1) before "aa" (len 2).
    let ok = basic_with_metadata(&["b", "aa"]);
    let o = Output::decode(&ok).unwrap();
    let json = serde_json::to_string(&o).unwrap();
    assert_eq!(
        Output::from_json(&json).unwrap().to_bytes().unwrap(),
        ok,
        "JSON object goes back to wire order"
    );
    let bad = basic_with_metadata(&["aa", "b"]);
    let e = Output::decode(&bad).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::NotSorted(_)), "{e}");
    let dup = basic_with_metadata(&["a", "a"]);
    assert!(matches!(
        Output::decode(&dup).unwrap_err().kind(),
        ErrorKind::Duplicate(_)
    ));
}

#[test]
fn features_must_be_sorted_and_allowed() {
    let mut b = basic_with_metadata(&["a"]);
    // Replace the metadata feature type with 6 (block issuer), not allowed on basic outputs.
    let at = b.len() - 1 - 1 - 2 - 1 - 1;
    b[at] = 6;
    assert!(Output::decode(&b).is_err());
    let good = basic_with_metadata(&["a"]);
    let o = Output::decode(&good).unwrap();
    assert!(matches!(o.features(), [Feature::Metadata(_)]));
}

#[test]
fn zero_amount_and_missing_address_are_rejected_where_they_are_syntax() {
    // Output with no unlock conditions at all.
    let mut b = vec![0u8];
    b.extend_from_slice(&1u64.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    b.push(0);
    b.push(0);
    let e = Output::decode(&b).unwrap_err();
    assert!(e.to_string().contains("unlockConditions"), "{e}");
}
