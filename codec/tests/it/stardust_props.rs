//! Property tests: random valid v2 blocks of every payload kind round-trip
//! through bytes and JSON; mutated or truncated valid bytes never panic.

use ledger_test_support as common;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use ledger_codec::fuzzing::{fuzz_v2_block, fuzz_v2_block_json};
use ledger_codec::stardust::{
    Address, AliasOutput, BasicOutput, Block, Ed25519Signature, Essence, Feature, FoundryOutput,
    MigratedFundsEntry, Milestone, MilestoneOption, NativeToken, NftOutput, Output, Payload,
    ProtocolParamsOption, Receipt, SimpleTokenScheme, TaggedData, TailTransactionHash, TokenScheme,
    Transaction, TreasuryInput, TreasuryOutput, TreasuryTransaction, Unlock, UnlockCondition,
    UtxoInput,
};
use ledger_codec::types::{Bytes, Fixed, U256};
use ledger_codec::Codec;
use proptest::prelude::*;

fn h32() -> impl Strategy<Value = [u8; 32]> {
    any::<[u8; 32]>()
}

fn bytes(min: usize, max: usize) -> impl Strategy<Value = Bytes<'static>> {
    prop::collection::vec(any::<u8>(), min..=max).prop_map(Bytes::from)
}

fn address() -> impl Strategy<Value = Address<'static>> {
    (0u8..3, h32()).prop_map(|(k, id)| match k {
        0 => Address::Ed25519(Fixed::owned(id)),
        1 => Address::Alias(Fixed::owned(id)),
        _ => Address::Nft(Fixed::owned(id)),
    })
}

fn ed25519_address() -> impl Strategy<Value = Address<'static>> {
    h32().prop_map(|id| Address::Ed25519(Fixed::owned(id)))
}

fn native_tokens() -> impl Strategy<Value = Vec<NativeToken<'static>>> {
    prop::collection::btree_map(any::<[u8; 38]>(), 1u64.., 0..3).prop_map(
        |m: BTreeMap<[u8; 38], u64>| {
            m.into_iter()
                .map(|(id, a)| NativeToken {
                    id: Fixed::owned(id),
                    amount: U256::from(a),
                })
                .collect()
        },
    )
}

/// Basic/NFT unlock conditions: Address plus optional SDRUC, Timelock, Expiration.
fn owner_ucs(amount: u64) -> impl Strategy<Value = Vec<UnlockCondition<'static>>> {
    (
        address(),
        prop::option::of((address(), 0..=amount)),
        prop::option::of(1u32..),
        prop::option::of((address(), 1u32..)),
    )
        .prop_map(|(a, sdruc, tl, exp)| {
            let mut v = vec![UnlockCondition::Address(a)];
            if let Some((return_address, amount)) = sdruc {
                v.push(UnlockCondition::StorageDepositReturn {
                    return_address,
                    amount,
                });
            }
            if let Some(t) = tl {
                v.push(UnlockCondition::Timelock(t));
            }
            if let Some((return_address, unix_time)) = exp {
                v.push(UnlockCondition::Expiration {
                    return_address,
                    unix_time,
                });
            }
            v
        })
}

fn features(sender: bool, tag: bool) -> impl Strategy<Value = Vec<Feature<'static>>> {
    (
        prop::option::of(address()),
        prop::option::of(bytes(1, 40)),
        prop::option::of(bytes(1, 64)),
    )
        .prop_map(move |(s, m, t)| {
            let mut v = Vec::new();
            if let (true, Some(s)) = (sender, s) {
                v.push(Feature::Sender(s));
            }
            if let Some(m) = m {
                v.push(Feature::Metadata(m));
            }
            if let (true, Some(t)) = (tag, t) {
                v.push(Feature::Tag(t));
            }
            v
        })
}

fn immutable_features(issuer: bool) -> impl Strategy<Value = Vec<Feature<'static>>> {
    (prop::option::of(address()), prop::option::of(bytes(1, 40))).prop_map(move |(i, m)| {
        let mut v = Vec::new();
        if let (true, Some(i)) = (issuer, i) {
            v.push(Feature::Issuer(i));
        }
        if let Some(m) = m {
            v.push(Feature::Metadata(m));
        }
        v
    })
}

fn output() -> impl Strategy<Value = Output<'static>> {
    let basic = (1u64.., native_tokens())
        .prop_flat_map(|(amount, nts)| {
            (
                Just(amount),
                Just(nts),
                owner_ucs(amount),
                features(true, true),
            )
        })
        .prop_map(|(amount, native_tokens, unlock_conditions, features)| {
            Output::Basic(BasicOutput {
                amount,
                native_tokens,
                unlock_conditions,
                features,
            })
        });
    let nft = (1u64.., native_tokens(), h32())
        .prop_flat_map(|(amount, nts, id)| {
            (
                Just(amount),
                Just(nts),
                Just(id),
                owner_ucs(amount),
                features(true, true),
                immutable_features(true),
            )
        })
        .prop_map(
            |(amount, native_tokens, id, unlock_conditions, features, immutable_features)| {
                Output::Nft(NftOutput {
                    amount,
                    native_tokens,
                    nft_id: Fixed::owned(id),
                    unlock_conditions,
                    features,
                    immutable_features,
                })
            },
        );
    let alias = (
        1u64..,
        native_tokens(),
        h32(),
        any::<u32>(),
        bytes(0, 50),
        any::<u32>(),
        address(),
        address(),
        features(true, false),
        immutable_features(true),
    )
        .prop_map(
            |(amount, native_tokens, id, si, sm, fc, sc, gov, features, immutable_features)| {
                Output::Alias(AliasOutput {
                    amount,
                    native_tokens,
                    alias_id: Fixed::owned(id),
                    state_index: si,
                    state_metadata: sm,
                    foundry_counter: fc,
                    unlock_conditions: vec![
                        UnlockCondition::StateControllerAddress(sc),
                        UnlockCondition::GovernorAddress(gov),
                    ],
                    features,
                    immutable_features,
                })
            },
        );
    let foundry = (
        1u64..,
        native_tokens(),
        any::<u32>(),
        (1u64.., any::<u64>(), any::<u64>()),
        h32(),
        prop::option::of(bytes(1, 30)),
        prop::option::of(bytes(1, 30)),
    )
        .prop_map(
            |(amount, native_tokens, serial, (max, a, b), alias, f, imf)| {
                let minted = a % (max.saturating_add(1)).max(1);
                let melted = if minted == 0 { 0 } else { b % (minted + 1) };
                Output::Foundry(FoundryOutput {
                    amount,
                    native_tokens,
                    serial_number: serial,
                    token_scheme: TokenScheme::Simple(SimpleTokenScheme {
                        minted_tokens: U256::from(minted),
                        melted_tokens: U256::from(melted),
                        maximum_supply: U256::from(max),
                    }),
                    unlock_conditions: vec![UnlockCondition::ImmutableAliasAddress(
                        Address::Alias(Fixed::owned(alias)),
                    )],
                    features: f.map(Feature::Metadata).into_iter().collect(),
                    immutable_features: imf.map(Feature::Metadata).into_iter().collect(),
                })
            },
        );
    prop_oneof![basic, nft, alias, foundry]
}

fn tagged_data() -> impl Strategy<Value = TaggedData<'static>> {
    (bytes(0, 64), bytes(0, 300)).prop_map(|(tag, data)| TaggedData { tag, data })
}

fn signature() -> impl Strategy<Value = ([u8; 32], [u8; 64])> {
    (h32(), any::<[u8; 32]>(), any::<[u8; 32]>()).prop_map(|(k, a, b)| {
        let mut s = [0u8; 64];
        s[..32].copy_from_slice(&a);
        s[32..].copy_from_slice(&b);
        (k, s)
    })
}

fn transaction() -> impl Strategy<Value = Transaction<'static>> {
    (
        any::<u64>(),
        prop::collection::btree_set((h32(), 0u16..=127), 1..5),
        h32(),
        prop::collection::vec(output(), 1..5),
        prop::option::of(tagged_data()),
        signature(),
        prop::collection::vec(1u8..4, 4),
    )
        .prop_map(
            |(network_id, inputs, ic, outputs, payload, (pk, sig), kinds)| {
                let inputs: Vec<UtxoInput> = inputs
                    .into_iter()
                    .map(|(t, i)| UtxoInput::new(t, i))
                    .collect();
                let mut unlocks = vec![Unlock::Signature(Cow::Owned(Ed25519Signature::new(
                    pk, sig,
                )))];
                for k in kinds.iter().take(inputs.len() - 1) {
                    unlocks.push(match k {
                        1 => Unlock::Reference(0),
                        2 => Unlock::Alias(0),
                        _ => Unlock::Nft(0),
                    });
                }
                Transaction {
                    essence: Essence {
                        network_id,
                        inputs: Cow::Owned(inputs),
                        inputs_commitment: Fixed::owned(ic),
                        outputs,
                        payload,
                    },
                    unlocks,
                }
            },
        )
}

fn receipt() -> impl Strategy<Value = Receipt<'static>> {
    (
        any::<u32>(),
        any::<bool>(),
        prop::collection::btree_map(
            prop::collection::vec(0u8..=121, 49),
            (ed25519_address(), any::<u64>()),
            1..4,
        ),
        h32(),
        any::<u64>(),
    )
        .prop_map(|(migrated_at, last, funds, ms, amount)| Receipt {
            migrated_at,
            last,
            funds: funds
                .into_iter()
                .map(|(tail, (address, deposit))| MigratedFundsEntry {
                    tail_transaction_hash: TailTransactionHash(Fixed::owned(
                        tail.try_into().unwrap(),
                    )),
                    address,
                    deposit,
                })
                .collect(),
            transaction: TreasuryTransaction {
                input: TreasuryInput {
                    milestone_id: Fixed::owned(ms),
                },
                output: TreasuryOutput { amount },
            },
        })
}

fn milestone(parents: Vec<[u8; 32]>) -> impl Strategy<Value = Milestone<'static>> {
    (
        (any::<u32>(), any::<u32>(), any::<u8>(), h32(), h32(), h32()),
        bytes(0, 40),
        prop::option::of(receipt()),
        prop::option::of((any::<u32>(), any::<u8>(), bytes(0, 60))),
        prop::collection::btree_map(h32(), signature().prop_map(|(_, s)| s), 1..4),
    )
        .prop_map(
            move |((index, timestamp, pv, prev, inc, app), metadata, receipt, pp, sigs)| {
                let mut options = Vec::new();
                if let Some(r) = receipt {
                    options.push(MilestoneOption::Receipt(r));
                }
                if let Some((t, v, p)) = pp {
                    options.push(MilestoneOption::ProtocolParams(ProtocolParamsOption {
                        target_milestone_index: t,
                        protocol_version: v,
                        params: p,
                    }));
                }
                Milestone {
                    index,
                    timestamp,
                    protocol_version: pv,
                    previous_milestone_id: Fixed::owned(prev),
                    parents: Cow::Owned(parents.clone()),
                    inclusion_merkle_root: Fixed::owned(inc),
                    applied_merkle_root: Fixed::owned(app),
                    metadata,
                    options,
                    signatures: Cow::Owned(
                        sigs.into_iter()
                            .map(|(k, s)| Ed25519Signature::new(k, s))
                            .collect(),
                    ),
                }
            },
        )
}

fn block() -> impl Strategy<Value = Block<'static>> {
    (
        any::<u8>(),
        prop::collection::btree_set(h32(), 1..=8),
        any::<u64>(),
        0u8..4,
    )
        .prop_flat_map(|(pv, parents, nonce, kind)| {
            let parents: Vec<[u8; 32]> = parents
                .into_iter()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let payload: BoxedStrategy<Option<Payload<'static>>> = match kind {
                0 => Just(None).boxed(),
                1 => tagged_data()
                    .prop_map(|t| Some(Payload::TaggedData(t)))
                    .boxed(),
                2 => transaction()
                    .prop_map(|t| Some(Payload::Transaction(t)))
                    .boxed(),
                _ => milestone(parents.clone())
                    .prop_map(|m| Some(Payload::Milestone(m)))
                    .boxed(),
            };
            (Just(pv), Just(parents), payload, Just(nonce))
        })
        .prop_map(|(protocol_version, parents, payload, nonce)| Block {
            protocol_version,
            parents: Cow::Owned(parents),
            payload,
            nonce,
        })
}

fn vector_blocks() -> Vec<Vec<u8>> {
    common::load_entries("stardust", "blocks.json")
        .iter()
        .map(|e| common::hex_bytes(e["name"].as_str().unwrap(), e["bytes"].as_str().unwrap()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The inputs commitment from stored bytes is the one computed by encoding the outputs
    /// (the engine takes the first during confirmation, clients sign the second).
    #[test]
    fn inputs_commitment_from_bytes_equals_the_encoded_one(outputs in prop::collection::vec(output(), 0..6)) {
        let bytes: Vec<Vec<u8>> = outputs.iter().map(|o| o.to_bytes().unwrap()).collect();
        prop_assert_eq!(
            ledger_codec::stardust::inputs_commitment_of_bytes(bytes.iter().map(Vec::as_slice)),
            ledger_codec::stardust::inputs_commitment(&outputs).unwrap()
        );
    }

    #[test]
    fn random_valid_blocks_round_trip_bytes_and_json(b in block()) {
        let bytes = b.to_bytes().unwrap();
        let decoded = Block::decode(&bytes);
        prop_assert!(decoded.is_ok(), "valid block rejected: {:?}", decoded.err().map(|e| e.to_string()));
        prop_assert_eq!(decoded.unwrap().into_owned(), b.clone());
        let json = serde_json::to_string(&b).unwrap();
        let back = Block::from_json(&json);
        prop_assert!(back.is_ok(), "JSON of valid block rejected: {:?}", back.err().map(|e| e.to_string()));
        prop_assert_eq!(back.unwrap().to_bytes().unwrap(), bytes.clone());
        fuzz_v2_block(&bytes);
        fuzz_v2_block_json(json.as_bytes());
    }

    #[test]
    fn outputs_round_trip(o in output()) {
        let bytes = o.to_bytes().unwrap();
        prop_assert_eq!(Output::decode(&bytes).map(Output::into_owned).ok(), Some(o.clone()));
        let back: Output<'static> = serde_json::from_value(serde_json::to_value(&o).unwrap()).unwrap();
        prop_assert_eq!(back, o);
    }

    #[test]
    fn mutated_vector_bytes_never_panic(i in any::<prop::sample::Index>(), pos in any::<prop::sample::Index>(), val in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let blocks = vector_blocks();
        let orig = &blocks[i.index(blocks.len())];
        let mut m = orig.clone();
        let p = pos.index(m.len());
        m[p] = val;
        // Oracle: decode is Ok or Err; if Ok, bytes and JSON round-trip.
        fuzz_v2_block(&m);
        let _ = Payload::decode(&m);
        let _ = Output::decode(&m);
        let t = &orig[..cut.index(orig.len())];
        prop_assert!(Block::decode(t).is_err(), "truncated block accepted");
        fuzz_v2_block(t);
    }

    #[test]
    fn mutated_random_blocks_never_panic(b in block(), pos in any::<prop::sample::Index>(), val in any::<u8>()) {
        let mut m = b.to_bytes().unwrap();
        let p = pos.index(m.len());
        m[p] = val;
        fuzz_v2_block(&m);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..400)) {
        fuzz_v2_block(&data);
        fuzz_v2_block_json(&data);
        let _ = Payload::decode(&data);
        let _ = Output::decode(&data);
    }
}

#[test]
fn every_single_byte_mutation_of_vector_blocks_is_handled() {
    for bytes in vector_blocks() {
        for p in 0..bytes.len() {
            for v in [0u8, 1, 0x7f, 0x80, 0xff, bytes[p].wrapping_add(1)] {
                let mut m = bytes.clone();
                m[p] = v;
                fuzz_v2_block(&m);
            }
        }
        for cut in 0..bytes.len() {
            assert!(
                Block::decode(&bytes[..cut]).is_err(),
                "truncation at {cut} accepted"
            );
        }
    }
}
