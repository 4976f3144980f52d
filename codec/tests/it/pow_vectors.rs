//! Data-driven PoW tests: Curl-P-81 (300 legacy vectors), b1t6 (TIP-5) and
//! TIP-12 scores and nonces, scalar and bit-sliced.

use ledger_test_support as common;

use std::sync::atomic::AtomicBool;

use ledger_codec::pow::bitsliced::BctCurl;
use ledger_codec::pow::curl::{self, CurlP81, HASH_LEN};
use ledger_codec::pow::{self, b1t6, ternary};
use proptest::prelude::*;
use serde_json::Value;

fn field<'a>(v: &'a Value, key: &str) -> &'a str {
    let name = v["name"].as_str().unwrap_or("?");
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("vector {name:?}: missing string {key:?}"))
}

fn curl_vectors() -> Vec<Value> {
    common::load_entries("stardust", "curl_p81.json")
}

#[test]
fn curl_p81_scalar_all_vectors() {
    let vectors = curl_vectors();
    assert_eq!(vectors.len(), 300, "curl_p81.json should hold 300 vectors");
    for v in &vectors {
        let name = field(v, "name");
        let input = ternary::trytes_to_trits(field(v, "in_trytes")).expect(name);
        let want = field(v, "hash_trytes");
        let mut c = CurlP81::new();
        c.absorb(&input)
            .unwrap_or_else(|e| panic!("vector {name:?}: {e}"));
        let mut out = vec![0; want.len() * 3];
        c.squeeze(&mut out)
            .unwrap_or_else(|e| panic!("vector {name:?}: {e}"));
        assert_eq!(
            ternary::trits_to_trytes(&out).expect(name),
            want,
            "vector {name:?}"
        );
    }
}

/// Runs every vector through the bit-sliced sponge, `LANES` vectors per batch,
/// each in its own lane (so lanes must not leak into each other).
fn bitsliced_all_vectors<const N: usize>() {
    let vectors = curl_vectors();
    let lanes = BctCurl::<N>::LANES;
    // Group vectors by shape so that one batch shares absorb/squeeze counts.
    let mut groups: std::collections::BTreeMap<(usize, usize), Vec<&Value>> = Default::default();
    for v in &vectors {
        let key = (field(v, "in_trytes").len(), field(v, "hash_trytes").len());
        groups.entry(key).or_default().push(v);
    }
    let mut checked = 0;
    for ((in_len, out_len), group) in groups {
        for batch in group.chunks(lanes) {
            let inputs: Vec<Vec<i8>> = batch
                .iter()
                .map(|v| ternary::trytes_to_trits(field(v, "in_trytes")).expect("trytes"))
                .collect();
            let mut c = BctCurl::<N>::new();
            for block in 0..in_len * 3 / HASH_LEN {
                let blocks: Vec<&[i8]> = inputs
                    .iter()
                    .map(|t| &t[block * HASH_LEN..(block + 1) * HASH_LEN])
                    .collect();
                c.absorb_lanes(&blocks);
            }
            let mut outs = vec![Vec::new(); batch.len()];
            for _ in 0..out_len * 3 / HASH_LEN {
                for (lane, out) in outs.iter_mut().enumerate() {
                    let mut chunk = [0; HASH_LEN];
                    // Only the first squeeze of a round transforms; read every lane first.
                    if lane == 0 {
                        c.squeeze_lane(0, &mut chunk);
                    } else {
                        for (p, t) in chunk.iter_mut().enumerate() {
                            *t = c.trit(p, lane);
                        }
                    }
                    out.extend_from_slice(&chunk);
                }
            }
            for (v, out) in batch.iter().zip(&outs) {
                let name = field(v, "name");
                let got = ternary::trits_to_trytes(out).expect(name);
                assert_eq!(
                    got,
                    field(v, "hash_trytes"),
                    "vector {name:?} (bit-sliced, N = {N})"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 300);
}

#[test]
fn curl_p81_bitsliced_all_vectors_64_lanes() {
    bitsliced_all_vectors::<1>();
}

#[test]
fn curl_p81_bitsliced_all_vectors_512_lanes() {
    bitsliced_all_vectors::<8>();
}

#[test]
fn curl_p81_bitsliced_all_vectors_search_width() {
    bitsliced_all_vectors::<{ pow::LANE_WORDS }>();
}

#[test]
fn b1t6_vectors() {
    let vectors = common::load_entries("stardust", "b1t6.json");
    assert!(vectors.len() >= 20);
    for v in &vectors {
        let name = field(v, "name");
        match field(v, "kind") {
            "b1t6" => {
                let bytes = common::hex_bytes(name, field(v, "bytes"));
                let trytes = field(v, "trytes");
                assert_eq!(
                    b1t6::encode_trytes(&bytes),
                    trytes,
                    "vector {name:?}: encode"
                );
                let trits = b1t6::encode(&bytes);
                assert_eq!(
                    ternary::trits_to_trytes(&trits).expect(name),
                    trytes,
                    "vector {name:?}"
                );
                assert_eq!(
                    b1t6::decode_trytes(trytes).expect(name),
                    bytes,
                    "vector {name:?}: decode"
                );
                assert_eq!(
                    b1t6::decode(&trits).expect(name),
                    bytes,
                    "vector {name:?}: decode trits"
                );
            }
            "b1t6_invalid" => {
                let err = b1t6::decode_trytes(field(v, "trytes"))
                    .err()
                    .unwrap_or_else(|| panic!("vector {name:?}: decoded but must fail"));
                let want = field(v, "expected_error");
                assert!(
                    err.to_string().contains(want),
                    "vector {name:?}: error {err} lacks {want:?}"
                );
            }
            other => panic!("vector {name:?}: unknown kind {other}"),
        }
    }
}

fn pow_block(v: &Value) -> Vec<u8> {
    let name = field(v, "name");
    match v.get("bytes").and_then(Value::as_str) {
        Some(hex) => common::hex_bytes(name, hex),
        None => match field(v, "bytes_description") {
            "10000 zero bytes" => vec![0; 10_000],
            other => panic!("vector {name:?}: unknown description {other:?}"),
        },
    }
}

#[test]
fn pow_vectors() {
    let vectors = common::load_entries("stardust", "pow.json");
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for v in &vectors {
        let name = field(v, "name");
        let kind = field(v, "kind");
        *seen.entry(kind.to_owned()).or_default() += 1;
        match kind {
            "pow_score" => {
                let block = pow_block(v);
                let digest = pow::pow_digest(&block).expect(name);
                let want_digest = common::hex_bytes(name, field(v, "pow_digest"));
                assert_eq!(digest.to_vec(), want_digest, "vector {name:?}: digest");
                let nonce = pow::block_nonce(&block).expect(name);
                if let Some(n) = v.get("nonce").and_then(Value::as_str) {
                    assert_eq!(nonce.to_string(), n, "vector {name:?}: nonce");
                }
                if let Some(t) = v.get("curl_input_trytes").and_then(Value::as_str) {
                    let input = pow::curl_input(&digest, nonce);
                    assert_eq!(
                        ternary::trits_to_trytes(&input).expect(name),
                        t,
                        "vector {name:?}"
                    );
                }
                let hash = pow::pow_hash(&digest, nonce);
                if let Some(t) = v.get("pow_hash_trytes").and_then(Value::as_str) {
                    assert_eq!(
                        ternary::trits_to_trytes(&hash).expect(name),
                        t,
                        "vector {name:?}"
                    );
                }
                let zeros = v["trailing_zeros"].as_u64().expect(name) as usize;
                assert_eq!(pow::trailing_zeros(&hash), zeros, "vector {name:?}: zeros");
                assert_eq!(
                    pow::block_trailing_zeros(&block),
                    Some(zeros),
                    "vector {name:?}"
                );
                let score = v["pow_score"].as_f64().expect(name);
                // serde_json (without `float_roundtrip`) may parse the expected value one ULP off.
                let got = pow::pow_score(&block);
                assert!(
                    (got - score).abs() <= score * 4.0 * f64::EPSILON,
                    "vector {name:?}: score {got} != {score}"
                );
                let exact = 3f64.powi(zeros as i32) / block.len() as f64;
                assert_eq!(got, exact, "vector {name:?}: score is not 3^z/len");
                // The integer test agrees with the float score at and around it.
                let s = score.floor() as u32;
                assert!(pow::meets_score(&block, s), "vector {name:?}: meets {s}");
                assert!(
                    !pow::meets_score(&block, s + 1),
                    "vector {name:?}: meets {}",
                    s + 1
                );
                // The bit-sliced pass agrees: the block's nonce is a hit at exactly `zeros`.
                let mut searcher = pow::Searcher::new();
                let lane = (nonce % 64) as usize;
                let base = nonce & !63;
                let mut hit = |z| searcher_hit(&mut searcher, &digest, base, lane, z);
                assert!(
                    hit(zeros),
                    "vector {name:?}: bit-sliced misses {zeros} zeros"
                );
                assert!(
                    !hit(zeros + 1),
                    "vector {name:?}: bit-sliced sees {} zeros",
                    zeros + 1
                );
            }
            "pow_mine" => {
                let digest: [u8; 32] = common::hex_bytes(name, field(v, "pow_digest"))
                    .try_into()
                    .expect(name);
                let zeros = v["target_zeros"].as_u64().expect(name) as usize;
                let start: u64 = field(v, "start_nonce").parse().expect(name);
                let want: u64 = field(v, "expected_nonce").parse().expect(name);
                let stop = AtomicBool::new(false);
                let got = pow::search_nonce(&digest, zeros, start, u64::MAX - start, &stop);
                assert_eq!(got, Some(want), "vector {name:?}");
                assert!(
                    pow::trailing_zeros(&pow::pow_hash(&digest, want)) >= zeros,
                    "{name:?}"
                );
                // Scalar check that no earlier nonce qualifies.
                for n in start..want {
                    let z = pow::trailing_zeros(&pow::pow_hash(&digest, n));
                    assert!(z < zeros, "vector {name:?}: nonce {n} has {z} zeros");
                }
            }
            "pow_target_zeros" => {
                let len = v["block_length"].as_u64().expect(name) as usize;
                let score = v["target_score"].as_u64().expect(name) as u32;
                let want = v["expected_target_zeros"].as_u64().expect(name) as usize;
                assert_eq!(pow::target_zeros(len, score), want, "vector {name:?}");
            }
            other => panic!("vector {name:?}: unknown kind {other}"),
        }
    }
    assert_eq!(seen.get("pow_score"), Some(&5), "kinds seen: {seen:?}");
    assert_eq!(seen.get("pow_mine"), Some(&2), "kinds seen: {seen:?}");
}

fn searcher_hit(
    s: &mut pow::Searcher,
    digest: &[u8; 32],
    base: u64,
    lane: usize,
    z: usize,
) -> bool {
    let aligned = base & !(pow::LANES as u64 - 1);
    let lane = lane + (base - aligned) as usize;
    let hit = s.pass(digest, aligned, z);
    hit[lane / 64] >> (lane % 64) & 1 == 1
}

#[test]
fn target_zeros_is_the_smallest_power() {
    assert_eq!(pow::target_zeros(100, 0), 0);
    assert_eq!(pow::target_zeros(1, 1), 0);
    assert_eq!(pow::target_zeros(1, 3), 1);
    assert_eq!(pow::target_zeros(1, 4), 2);
    assert_eq!(pow::target_zeros(200, 1500), 12); // 3^11 = 177147 < 300000 <= 531441
                                                  // 3^60 < 2^96 ≈ (2^64 − 1)·(2^32 − 1) ≤ 3^61.
    assert_eq!(pow::target_zeros(usize::MAX, u32::MAX), 61);
}

#[test]
fn short_blocks_score_zero() {
    for len in 0..8 {
        let b = vec![0u8; len];
        assert_eq!(pow::pow_score(&b), 0.0, "len {len}");
        assert!(pow::meets_score(&b, 0), "len {len}");
        assert!(!pow::meets_score(&b, 1), "len {len}");
    }
}

#[test]
fn mine_with_score_zero_is_immediate() {
    let cancel = AtomicBool::new(true);
    assert_eq!(pow::mine(b"anything", 0, 2, &cancel), Some(0));
}

#[test]
fn mine_honours_cancel() {
    let cancel = AtomicBool::new(true);
    assert_eq!(pow::mine(&[7u8; 200], 1500, 2, &cancel), None);
}

#[test]
fn mined_nonces_meet_the_target() {
    let cancel = AtomicBool::new(false);
    for (len, score, workers) in [
        (100usize, 1500u32, 2usize),
        (292, 1500, 0),
        (150, 4000, 1),
        (40, 10, 3),
    ] {
        let body: Vec<u8> = (0..len - 8).map(|i| (i * 31 + len) as u8).collect();
        let nonce = pow::mine(&body, score, workers, &cancel)
            .unwrap_or_else(|| panic!("len {len} score {score}: no nonce"));
        let mut block = body.clone();
        block.extend_from_slice(&nonce.to_le_bytes());
        assert!(
            pow::meets_score(&block, score),
            "len {len} score {score}: nonce {nonce}"
        );
        assert!(
            pow::pow_score(&block) >= f64::from(score),
            "len {len} score {score}"
        );
    }
}

#[test]
fn single_worker_finds_the_first_nonce() {
    let body = [9u8; 50];
    let cancel = AtomicBool::new(false);
    let nonce = pow::mine(&body, 10, 1, &cancel).expect("found");
    let digest = ledger_codec::hash::blake2b256(&body);
    let zeros = pow::target_zeros(58, 10);
    for n in 0..nonce {
        assert!(
            pow::trailing_zeros(&pow::pow_hash(&digest, n)) < zeros,
            "nonce {n}"
        );
    }
    assert!(pow::trailing_zeros(&pow::pow_hash(&digest, nonce)) >= zeros);
}

#[test]
fn search_respects_the_range() {
    let digest = [1u8; 32];
    let stop = AtomicBool::new(false);
    // Nonce 86 is the first with 3 zeros (iota.js vector); a range ending before it finds nothing.
    assert_eq!(pow::search_nonce(&digest, 3, 0, 86, &stop), None);
    assert_eq!(pow::search_nonce(&digest, 3, 0, 87, &stop), Some(86));
    assert_eq!(pow::search_nonce(&digest, 3, 86, 1, &stop), Some(86));
    // A range at the very top of u64 wraps neither past u64::MAX nor panics.
    let top = pow::search_nonce(&digest, 0, u64::MAX - 3, 3, &stop);
    assert_eq!(top, Some(u64::MAX - 3));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn bitsliced_equals_scalar(inputs in proptest::collection::vec(
        proptest::collection::vec(-1i8..=1, HASH_LEN), 1..=64)) {
        let mut c = BctCurl::<1>::new();
        let blocks: Vec<&[i8]> = inputs.iter().map(Vec::as_slice).collect();
        c.absorb_lanes(&blocks);
        for (lane, input) in inputs.iter().enumerate() {
            let want = curl::hash(input).expect("valid");
            let got: Vec<i8> = (0..HASH_LEN).map(|p| c.trit(p, lane)).collect();
            prop_assert_eq!(got, want.to_vec(), "lane {}", lane);
        }
    }

    #[test]
    fn search_pass_equals_scalar(digest in any::<[u8; 32]>(), base in any::<u64>()) {
        let mut s = pow::Searcher::new();
        let base = base & !(pow::LANES as u64 - 1);
        // Hits at 1 zero must be exactly the lanes whose scalar hash ends in 0.
        let hit = s.pass(&digest, base, 1);
        for lane in (0..pow::LANES).step_by(7) {
            let n = base.wrapping_add(lane as u64);
            let z = pow::trailing_zeros(&pow::pow_hash(&digest, n));
            prop_assert_eq!(hit[lane / 64] >> (lane % 64) & 1 == 1, z >= 1, "nonce {}", n);
        }
    }

    #[test]
    fn reused_searcher_equals_fresh(digest in any::<[u8; 32]>(), bases in proptest::collection::vec(any::<u64>(), 1..4)) {
        // One searcher over consecutive passes and jumps (only changed nonce
        // bytes are rebuilt) gives the same hits as a fresh one per pass.
        let mut reused = pow::Searcher::new();
        for b in bases {
            let b = b & !(pow::LANES as u64 - 1);
            for base in [b, b.wrapping_add(pow::LANES as u64), b.wrapping_add(3 * pow::LANES as u64)] {
                let want = pow::Searcher::new().pass(&digest, base, 1);
                prop_assert_eq!(reused.pass(&digest, base, 1), want, "base {}", base);
            }
        }
    }

    #[test]
    fn bitsliced_block_zeros_equal_scalar(body in proptest::collection::vec(any::<u8>(), 0..300), nonce in any::<u64>()) {
        let mut block = body;
        block.extend_from_slice(&nonce.to_le_bytes());
        let digest = pow::pow_digest(&block).expect("8 bytes or more");
        let scalar = pow::trailing_zeros(&pow::pow_hash(&digest, nonce));
        prop_assert_eq!(pow::block_trailing_zeros(&block), Some(scalar));
        // The single-hash kernel on a raw block: trailing zeros of the scalar hash.
        let input: [i8; HASH_LEN] = std::array::from_fn(|i| ((i as u64 * 7 + nonce) % 3) as i8 - 1);
        let want = pow::trailing_zeros(&curl::hash(&input).expect("valid"));
        prop_assert_eq!(ledger_codec::pow::bitsliced::hash_trailing_zeros(&input), want);
    }

    #[test]
    fn b1t6_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
        let trits = b1t6::encode(&bytes);
        prop_assert_eq!(trits.len(), bytes.len() * 6);
        prop_assert_eq!(b1t6::decode(&trits).expect("valid"), bytes.clone());
        prop_assert_eq!(b1t6::decode_trytes(&b1t6::encode_trytes(&bytes)).expect("valid"), bytes);
    }

    #[test]
    fn trytes_round_trip(s in "[9A-Z]{0,60}") {
        let trits = ternary::trytes_to_trits(&s).expect("valid");
        prop_assert_eq!(ternary::trits_to_trytes(&trits).expect("valid"), s);
    }

    #[test]
    fn scoring_never_panics(block in proptest::collection::vec(any::<u8>(), 0..64), min in any::<u32>()) {
        let score = pow::pow_score(&block);
        prop_assert!(score >= 0.0);
        let _ = pow::meets_score(&block, min);
    }
}
