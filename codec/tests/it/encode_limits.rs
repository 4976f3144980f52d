//! Encoding never truncates: a list or byte string longer than its length prefix can count
//! has no wire form, so encoding it (and every id or hash built on the bytes) fails, naming
//! where; anything that fits is written with its exact length. The range rules (a tag of at
//! most 64 bytes, …) stay the decoder's: a value in the prefix but out of range encodes and
//! then fails to decode.

use ledger_test_support as common;

use ledger_codec::stardust::{
    Address, BasicOutput, Block, Essence, Feature, Output, Payload, TaggedData, UnlockCondition,
};
use ledger_codec::types::{Bytes, Fixed};
use ledger_codec::{Codec, ErrorKind};
use proptest::prelude::*;

fn tagged_block(tag: usize, parents: usize) -> Block<'static> {
    Block {
        protocol_version: 2,
        parents: (0..parents)
            .map(|i| {
                // Ascending: the index, most significant byte first.
                let mut p = [0u8; 32];
                p[0] = (i >> 8) as u8;
                p[1] = i as u8;
                p
            })
            .collect::<Vec<_>>()
            .into(),
        payload: Some(Payload::TaggedData(TaggedData {
            tag: Bytes::from(vec![7u8; tag]),
            data: Bytes::from(b"data".to_vec()),
        })),
        nonce: 0,
    }
}

fn too_long(err: &ledger_codec::Error) -> (usize, usize) {
    match err.kind() {
        ErrorKind::TooLongToEncode { max, got } => (*max, *got),
        other => panic!("expected TooLongToEncode, got {other:?} ({err})"),
    }
}

#[test]
fn a_tag_longer_than_its_u8_prefix_has_no_bytes_no_id_and_fails_the_check() {
    let block = tagged_block(300, 1);
    let err = block.to_bytes().unwrap_err();
    assert_eq!(too_long(&err), (255, 300));
    assert_eq!(err.location(), "payload.tag");
    assert_eq!(
        err.to_string(),
        "payload.tag: too long to encode: length 300, its prefix counts at most 255"
    );
    assert_eq!(block.id().unwrap_err(), err);
    assert_eq!(block.check().unwrap_err(), err);
    let mut out = Vec::new();
    assert!(block.encode(&mut out).is_err());
}

#[test]
fn a_parent_list_longer_than_its_u8_count_has_no_bytes() {
    let err = tagged_block(1, 256).to_bytes().unwrap_err();
    assert_eq!(too_long(&err), (255, 256));
    assert_eq!(err.location(), "parents");
}

#[test]
fn range_rules_stay_with_the_decoder() {
    // 65 bytes fit the u8 prefix but break the tag's 0..=64 rule: bytes exist, decoding
    // refuses them, and so does the in-memory check that decodes them.
    let block = tagged_block(65, 1);
    let bytes = block.to_bytes().unwrap();
    let err = Block::decode(&bytes).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::CountOutOfRange {
                max: 64,
                got: 65,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(block.check().unwrap_err(), err);
}

#[test]
fn a_feature_list_longer_than_its_u8_count_is_located_inside_the_transaction() {
    let address = Address::Ed25519(Fixed::from([1u8; 32]));
    let output = Output::Basic(BasicOutput {
        amount: 1_000_000,
        native_tokens: Vec::new(),
        unlock_conditions: vec![UnlockCondition::Address(address)],
        features: vec![Feature::Tag(Bytes::from(vec![1u8])); 256],
    });
    let essence = Essence {
        network_id: 1,
        inputs: Vec::new().into(),
        inputs_commitment: Fixed::from([0u8; 32]),
        outputs: vec![output.clone()],
        payload: None,
    };
    let err = essence.signing_hash().unwrap_err();
    assert_eq!(too_long(&err), (255, 256));
    assert_eq!(err.location(), "outputs[0].features");
    assert_eq!(
        ledger_codec::stardust::inputs_commitment([&output]).unwrap_err(),
        output.to_bytes().unwrap_err()
    );
}

#[test]
fn v3_protocol_parameters_never_clamp_a_long_network_name() {
    let mut p = common::nova_protocol_parameters();
    let base = p.hash().unwrap();
    p.network_name = "n".repeat(300);
    let err = p.to_bytes().unwrap_err();
    assert_eq!(too_long(&err), (255, 300));
    assert_eq!(err.location(), "networkName");
    assert!(
        p.hash().is_err(),
        "a hash over truncated bytes would pass as valid"
    );
    // 255 bytes fit: written in full, and the hash changes with the name.
    p.network_name = "n".repeat(255);
    let bytes = p.to_bytes().unwrap();
    assert_eq!(bytes[2], 255);
    assert_eq!(&bytes[3..258], "n".repeat(255).as_bytes());
    assert_ne!(p.hash().unwrap(), base);
}

proptest! {
    /// Over and around the u8 limit: either the exact bytes with the exact length prefix, or
    /// an error that names the length, never anything in between.
    #[test]
    fn a_tag_encodes_exactly_or_not_at_all(len in 0usize..600) {
        let block = tagged_block(len, 1);
        match block.to_bytes() {
            Ok(bytes) => {
                prop_assert!(len <= 255);
                // version, parent count, one parent, payload length, payload type
                let at = 1 + 1 + 32 + 4 + 4;
                prop_assert_eq!(usize::from(bytes[at]), len);
                prop_assert_eq!(&bytes[at + 1..at + 1 + len], &vec![7u8; len][..]);
                prop_assert_eq!(Block::id_of(&bytes), block.id().unwrap());
            }
            Err(e) => {
                prop_assert!(len > 255);
                prop_assert_eq!(too_long(&e), (255, len));
            }
        }
    }
}
