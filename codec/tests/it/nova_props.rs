//! Property tests for the v3 codec: generated blocks round-trip through bytes
//! and JSON; mutated vector blocks never panic the decoder or validator and,
//! when they decode, re-encode to the same bytes.

use ledger_test_support as common;

use std::borrow::Cow;
use std::collections::BTreeSet;

use ledger_codec::nova::address::{Address, PubKeyHash};
use ledger_codec::nova::block::{BasicBody, Block, Body, Header, Payload, TaggedData};
use ledger_codec::nova::fuzzing::fuzz_v3_block;
use ledger_codec::nova::output::{
    AddressCondition, BasicOutput, Feature, Output, TagFeature, UnlockCondition,
};
use ledger_codec::nova::transaction::{
    Allotment, Ed25519Signature, ReferenceUnlock, Signature, SignatureUnlock, SignedTransaction,
    Transaction, Unlock, UtxoInput,
};
use ledger_codec::types::{Bytes, Fixed};
use ledger_codec::Codec;
use proptest::prelude::*;

fn vector_blocks() -> Vec<Vec<u8>> {
    common::load_entries("nova", "blocks.json")
        .iter()
        .map(|v| common::hex_bytes(v["name"].as_str().unwrap(), v["bytes"].as_str().unwrap()))
        .collect()
}

fn ids(n: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Vec<[u8; 36]>> {
    prop::collection::btree_set(
        any::<[u8; 32]>().prop_map(|h| {
            let mut a = [0u8; 36];
            a[..32].copy_from_slice(&h);
            a
        }),
        n,
    )
    .prop_map(|s: BTreeSet<[u8; 36]>| s.into_iter().collect())
}

fn basic_output() -> impl Strategy<Value = Output<'static>> {
    (
        1u64..1 << 50,
        0u64..1 << 50,
        any::<[u8; 32]>(),
        prop::option::of(prop::collection::vec(any::<u8>(), 1..=64)),
    )
        .prop_map(|(amount, mana, h, tag)| {
            Output::Basic(BasicOutput {
                amount,
                mana,
                unlock_conditions: vec![UnlockCondition::Address(AddressCondition {
                    address: Address::Ed25519(PubKeyHash {
                        pub_key_hash: h.into(),
                    }),
                })],
                features: tag
                    .map(|t| {
                        vec![Feature::Tag(TagFeature {
                            tag: Bytes::from(t),
                        })]
                    })
                    .unwrap_or_default(),
            })
        })
}

fn signature() -> impl Strategy<Value = Signature<'static>> {
    (any::<[u8; 32]>(), any::<[u8; 32]>(), any::<[u8; 32]>()).prop_map(|(pk, r, s)| {
        let mut sig = [0u8; 64];
        sig[..32].copy_from_slice(&r);
        sig[32..].copy_from_slice(&s);
        Signature::Ed25519(Ed25519Signature {
            public_key: pk.into(),
            signature: Fixed::owned(sig),
        })
    })
}

fn signed_tx() -> impl Strategy<Value = Payload<'static>> {
    (
        any::<u64>(),
        any::<u32>(),
        prop::collection::btree_set((any::<[u8; 32]>(), 0u16..128), 1..=4),
        prop::collection::btree_map(any::<[u8; 32]>(), 1u64..1 << 40, 0..=3),
        prop::collection::vec(basic_output(), 1..=4),
        signature(),
    )
        .prop_map(|(network_id, creation_slot, inputs, allot, outputs, sig)| {
            let inputs: Vec<UtxoInput> = inputs
                .into_iter()
                .map(|(h, i)| {
                    let mut id = [0u8; 36];
                    id[..32].copy_from_slice(&h);
                    UtxoInput::new(id, i)
                })
                .collect();
            let n = inputs.len();
            let allotments: Vec<Allotment> = allot
                .into_iter()
                .map(|(account_id, mana)| Allotment {
                    account_id,
                    mana: mana.into(),
                })
                .collect();
            let mut unlocks = vec![Unlock::Signature(SignatureUnlock { signature: sig })];
            unlocks.extend((1..n).map(|_| Unlock::Reference(ReferenceUnlock { reference: 0 })));
            Payload::SignedTransaction(Box::new(SignedTransaction {
                transaction: Transaction {
                    network_id,
                    creation_slot,
                    context_inputs: vec![],
                    inputs: Cow::Owned(inputs),
                    allotments: Cow::Owned(allotments),
                    capabilities: Bytes::default(),
                    payload: None,
                    outputs,
                },
                unlocks,
            }))
        })
}

fn payload() -> impl Strategy<Value = Option<Payload<'static>>> {
    prop_oneof![
        Just(None),
        (
            prop::collection::vec(any::<u8>(), 0..=64),
            prop::collection::vec(any::<u8>(), 0..=300)
        )
            .prop_map(|(t, d)| Some(Payload::TaggedData(TaggedData {
                tag: t.into(),
                data: d.into()
            }))),
        signed_tx().prop_map(Some),
    ]
}

fn block() -> impl Strategy<Value = Block<'static>> {
    (
        any::<u64>(),
        0u64..=i64::MAX as u64,
        any::<[u8; 32]>(),
        any::<u32>(),
        any::<[u8; 32]>(),
        ids(1..=8),
        ids(0..=8),
        payload(),
        any::<u64>(),
        signature(),
    )
        .prop_map(
            |(net, time, ch, lfs, issuer, strong, others, payload, mbm, signature)| {
                // Weak parents must be disjoint from strong ones; use the others as shallow-like.
                let mut sc = [0u8; 36];
                sc[..32].copy_from_slice(&ch);
                Block {
                    header: Cow::Owned(Header {
                        protocol_version: 3,
                        network_id: net.into(),
                        issuing_time: time.into(),
                        slot_commitment_id: sc,
                        latest_finalized_slot: lfs.into(),
                        issuer_id: issuer,
                    }),
                    body: Body::Basic(BasicBody {
                        strong_parents: Cow::Owned(strong),
                        weak_parents: Cow::Owned(vec![]),
                        shallow_like_parents: Cow::Owned(others),
                        payload,
                        max_burned_mana: mbm,
                    }),
                    signature,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn generated_blocks_round_trip(b in block()) {
        let bytes = b.to_bytes().unwrap();
        let d = Block::decode(&bytes).unwrap();
        prop_assert_eq!(&d, &b);
        prop_assert_eq!(d.to_bytes().unwrap(), bytes.clone());
        let json = serde_json::to_string(&d).unwrap();
        let back = Block::from_json(&json).unwrap();
        prop_assert_eq!(back.to_bytes().unwrap(), bytes.clone());
        fuzz_v3_block(&bytes);
    }

    #[test]
    fn mutated_vector_blocks_never_panic(
        which in 0usize..12,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..6),
    ) {
        let p = common::nova_protocol_parameters();
        let mut bytes = vector_blocks()[which].clone();
        for (at, byte, op) in edits {
            if bytes.is_empty() { break; }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => bytes[i] ^= 1 << (byte % 8),
                2 => bytes.truncate(i),
                _ => bytes.insert(i, byte),
            }
        }
        if let Ok(b) = Block::decode(&bytes) {
            let _ = b.validate(&p);
            let _ = b.id(&p).unwrap();
            let _ = b.work_score(&p).unwrap();
        }
        // Decoded blocks must re-encode (and JSON round-trip) to the same bytes.
        fuzz_v3_block(&bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        fuzz_v3_block(&bytes);
        let _ = Output::decode(&bytes);
        let _ = Payload::decode(&bytes);
    }
}

#[test]
fn vector_blocks_pass_the_fuzz_property() {
    for b in vector_blocks() {
        fuzz_v3_block(&b);
    }
}
