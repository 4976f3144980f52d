//! Codec speed: v2 (Stardust) decode+validate and encode per block kind, block id,
//! JSON of a 1 KB transaction block; v3 (Nova) decode + syntax check + block id.
//!
//! Run: `cargo bench -p ledger-benches --bench codec -- --warm-up-time 1 --measurement-time 3`;
//! figures in `benches/results/codec.md`. Target: v2 decode+validate of a 1 KB
//! transaction block ≤ 2 µs.
//!
//! Fixtures: the milestone and tagged data blocks and the v3 blocks come from the
//! repository's vendored vectors (`vectors/`); the transaction blocks are built here (see [`tx_1k`], [`tx_128`]).

#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ledger_codec::nova;
use ledger_codec::stardust::{
    Address, BasicOutput, Block, Ed25519Signature, Essence, Feature, NativeToken, Output, Payload,
    ProtocolParameters, TaggedData, Transaction, Unlock, UnlockCondition, UtxoInput,
};
use ledger_codec::types::{parse_hex, Bytes, Fixed, Hash32, U256};
use ledger_codec::Codec;
use serde_json::Value;

fn load(generation: &str, file: &str) -> Vec<Value> {
    ledger_test_support::load_entries(generation, file)
}

fn hex_field(v: &Value, field: &str) -> Vec<u8> {
    let s = v[field].as_str().expect("hex field");
    parse_hex(s).expect("valid hex")
}

fn by_name<'v>(list: &'v [Value], name: &str) -> &'v Value {
    list.iter()
        .find(|v| v["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("vector {name:?} not found"))
}

/// The Shimmer mainnet parameters (TIP-32) from the vectors.
fn shimmer() -> ProtocolParameters {
    let list = load("stardust", "protocol_parameters.json");
    let v = by_name(&list, "Shimmer mainnet protocol parameters (TIP-32 values)");
    serde_json::from_value(v["json"].clone()).expect("Shimmer parameters")
}

/// A deterministic 32-byte value.
fn h(seed: u8) -> [u8; 32] {
    ledger_codec::hash::blake2b256(&[seed])
}

fn token_id(seed: u8) -> Fixed<'static, 38> {
    Fixed::owned(ledger_codec::stardust::foundry_id(&h(seed), 1, 0))
}

fn ed(seed: u8) -> Address<'static> {
    Address::Ed25519(Hash32::owned(h(seed)))
}

fn parents(n: u8) -> Cow<'static, [[u8; 32]]> {
    let mut p: Vec<[u8; 32]> = (0..n).map(|i| h(100 + i)).collect();
    p.sort_unstable();
    Cow::Owned(p)
}

fn tx_block(
    params: &ProtocolParameters,
    inputs: Vec<UtxoInput>,
    outputs: Vec<Output<'static>>,
    unlocks: Vec<Unlock<'static>>,
    payload: Option<TaggedData<'static>>,
) -> Vec<u8> {
    let block = Block {
        protocol_version: params.version,
        parents: parents(4),
        payload: Some(Payload::Transaction(Transaction {
            essence: Essence {
                network_id: params.network_id(),
                inputs: Cow::Owned(inputs),
                inputs_commitment: Hash32::owned(h(7)),
                outputs,
                payload,
            },
            unlocks,
        })),
        nonce: 0x1234_5678,
    };
    let bytes = block.to_bytes().expect("fixture encodes");
    let back = Block::decode(&bytes).expect("fixture decodes");
    back.validate(params).expect("fixture validates");
    bytes
}

/// A realistic ~1 KB transaction block: 4 parents, 3 inputs, 4 basic outputs (native
/// tokens, storage deposit return, expiration, timelock, sender/metadata/tag features),
/// a tagged data essence payload, one signature and two reference unlocks.
fn tx_1k(params: &ProtocolParameters) -> Vec<u8> {
    let inputs = vec![
        UtxoInput::new(h(1), 0),
        UtxoInput::new(h(2), 1),
        UtxoInput::new(h(3), 3),
    ];
    let basic = |amount, nts, ucs, fs| {
        Output::Basic(BasicOutput {
            amount,
            native_tokens: nts,
            unlock_conditions: ucs,
            features: fs,
        })
    };
    let nt = |seed, n: u64| NativeToken {
        id: token_id(seed),
        amount: U256::from(n),
    };
    let mut two = vec![nt(10, 500), nt(11, 1_000_000)];
    two.sort_by(|a, b| a.id.cmp(&b.id));
    let outputs = vec![
        basic(
            1_000_000,
            vec![nt(10, 1234)],
            vec![UnlockCondition::Address(ed(20))],
            vec![Feature::Metadata(Bytes::from(b"invoice #2041".to_vec()))],
        ),
        basic(
            2_500_000,
            vec![],
            vec![
                UnlockCondition::Address(ed(21)),
                UnlockCondition::StorageDepositReturn {
                    return_address: ed(22),
                    amount: 50_000,
                },
                UnlockCondition::Expiration {
                    return_address: ed(22),
                    unix_time: 1_700_000_000,
                },
            ],
            vec![
                Feature::Sender(ed(22)),
                Feature::Tag(Bytes::from(b"payment".to_vec())),
            ],
        ),
        basic(
            750_000,
            two,
            vec![
                UnlockCondition::Address(ed(23)),
                UnlockCondition::Timelock(1_690_000_000),
            ],
            vec![Feature::Tag(Bytes::from(b"vesting".to_vec()))],
        ),
        basic(
            98_000_000,
            vec![],
            vec![UnlockCondition::Address(ed(24))],
            vec![],
        ),
    ];
    let unlocks = vec![
        Unlock::Signature(Cow::Owned(Ed25519Signature::new(h(30), [0x5a; 64]))),
        Unlock::Reference(0),
        Unlock::Reference(0),
    ];
    let payload = Some(TaggedData {
        tag: Bytes::from(b"ledger-node bench".to_vec()),
        data: Bytes::from(vec![0xab; 48]),
    });
    tx_block(params, inputs, outputs, unlocks, payload)
}

/// One input, 128 basic outputs (address unlock condition; every 8th with a tag).
fn tx_128(params: &ProtocolParameters) -> Vec<u8> {
    let outputs = (0u8..128)
        .map(|i| {
            Output::Basic(BasicOutput {
                amount: 100_000 + u64::from(i),
                native_tokens: vec![],
                unlock_conditions: vec![UnlockCondition::Address(ed(i))],
                features: if i % 8 == 0 {
                    vec![Feature::Tag(Bytes::from(vec![b'a' + i % 26; 8]))]
                } else {
                    vec![]
                },
            })
        })
        .collect();
    let unlocks = vec![Unlock::Signature(Cow::Owned(Ed25519Signature::new(
        h(30),
        [0x5a; 64],
    )))];
    tx_block(
        params,
        vec![UtxoInput::new(h(1), 0)],
        outputs,
        unlocks,
        None,
    )
}

/// v2 fixtures: (name, bytes).
fn v2_fixtures(params: &ProtocolParameters) -> Vec<(&'static str, Vec<u8>)> {
    let blocks = load("stardust", "blocks.json");
    let tagged = hex_field(
        by_name(
            &blocks,
            "TIP-25 OpenAPI example post-tagged-data-block-request-example-full (also get-block-by-id-tagged-data-response-example)",
        ),
        "bytes",
    );
    let milestone = hex_field(
        by_name(&blocks, "iota.js: Can succeed with actual milestone data"),
        "bytes",
    );
    for b in [&tagged, &milestone] {
        Block::decode(b)
            .expect("vector decodes")
            .validate(params)
            .expect("vector validates");
    }
    vec![
        ("tagged_data", tagged),
        ("tx_1k", tx_1k(params)),
        ("tx_128_outputs", tx_128(params)),
        ("milestone", milestone),
    ]
}

fn v2(c: &mut Criterion) {
    let params = shimmer();
    let fixtures = v2_fixtures(&params);
    for (name, bytes) in &fixtures {
        eprintln!("v2 fixture {name}: {} bytes", bytes.len());
    }

    let mut g = c.benchmark_group("v2_decode_validate");
    for (name, bytes) in &fixtures {
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), bytes, |b, bytes| {
            b.iter(|| {
                let block = Block::decode(black_box(bytes)).expect("decodes");
                block.validate(black_box(&params)).expect("validates");
                block
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("v2_encode");
    for (name, bytes) in &fixtures {
        let block = Block::decode(bytes).expect("decodes");
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), &block, |b, block| {
            let mut out = Vec::with_capacity(bytes.len());
            b.iter(|| {
                out.clear();
                black_box(block).encode(&mut out).expect("fixture encodes");
                black_box(out.len())
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("v2_block_id");
    for (name, bytes) in &fixtures {
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), bytes, |b, bytes| {
            b.iter(|| Block::id_of(black_box(bytes)))
        });
    }
    g.finish();

    let tx = &fixtures
        .iter()
        .find(|(n, _)| *n == "tx_1k")
        .expect("tx_1k fixture")
        .1;
    let block = Block::decode(tx).expect("decodes");
    let json = block.to_json_string();
    let mut g = c.benchmark_group("v2_json_tx_1k");
    g.throughput(Throughput::Bytes(json.len() as u64));
    g.bench_function("encode", |b| b.iter(|| black_box(&block).to_json_string()));
    g.bench_function("decode_check", |b| {
        b.iter(|| Block::from_json(black_box(&json)).expect("JSON decodes"))
    });
    g.finish();
}

fn v3(c: &mut Criterion) {
    let params = {
        let list = load("nova", "protocol_parameters.json");
        let v = by_name(&list, "tip49-testnet");
        nova::ProtocolParameters::from_json(&v["json"].to_string()).expect("v3 parameters")
    };
    let blocks = load("nova", "blocks.json");
    let fixtures: Vec<(&str, Vec<u8>)> = [
        ("tagged_data", "tip46-basic-block-tagged-data"),
        ("signed_transaction", "tip46-basic-block-signed-transaction"),
        ("validation", "tip46-validation-block"),
    ]
    .into_iter()
    .map(|(short, name)| {
        let bytes = hex_field(by_name(&blocks, name), "bytes");
        let b = nova::Block::decode(&bytes).expect("v3 vector decodes");
        nova::check_block_syntax(&b, &params).expect("v3 vector passes syntax");
        (short, bytes)
    })
    .collect();

    let mut g = c.benchmark_group("v3_decode_syntax_id");
    for (name, bytes) in &fixtures {
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), bytes, |b, bytes| {
            b.iter(|| {
                let block = nova::Block::decode(black_box(bytes)).expect("decodes");
                nova::check_block_syntax(&block, black_box(&params)).expect("syntax");
                block.id(&params)
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("v3_block_id");
    for (name, bytes) in &fixtures {
        let block = nova::Block::decode(bytes).expect("decodes");
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::new("model", name), &block, |b, block| {
            b.iter(|| black_box(block).id(&params))
        });
        g.bench_with_input(BenchmarkId::new("from_bytes", name), bytes, |b, bytes| {
            b.iter(|| nova::Block::id_of(black_box(bytes), &params))
        });
    }
    g.finish();
}

criterion_group!(benches, v2, v3);
criterion_main!(benches);
