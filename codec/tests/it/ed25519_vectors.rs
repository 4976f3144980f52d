//! Ed25519 (ZIP-215) verdicts: the shared vectors, and batch ≡ single.

use ledger_test_support as common;

use ledger_codec::ed25519::{self, Item, SigningKey};
use proptest::prelude::*;

/// One signature case from a vector file.
struct Case {
    name: String,
    public_key: [u8; 32],
    message: Vec<u8>,
    signature: [u8; 64],
    address: Vec<u8>,
    valid: bool,
}

fn field<'v>(v: &'v serde_json::Value, name: &str, keys: &[&str]) -> &'v str {
    keys.iter()
        .find_map(|k| v.get(*k).and_then(|x| x.as_str()))
        .unwrap_or_else(|| panic!("vector {name:?}: none of {keys:?}"))
}

fn fixed<const N: usize>(name: &str, s: &str) -> [u8; N] {
    common::hex_bytes(name, s)
        .try_into()
        .unwrap_or_else(|b: Vec<u8>| panic!("vector {name:?}: {} bytes, want {N}", b.len()))
}

/// Reads both file shapes (stardust: `pub_key`/`address`, nova: `publicKey`/`addressBytes`/`name`).
fn cases(generation: &str, file: &str) -> Vec<Case> {
    let doc = common::load(generation, file);
    let list = common::entries(&doc);
    assert!(!list.is_empty(), "{generation}/{file}: no vectors");
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            let name = match v.get("name").and_then(|n| n.as_str()) {
                Some(n) => format!("{generation}/{file}#{i} {n}"),
                None => format!("{generation}/{file}#{i}"),
            };
            Case {
                public_key: fixed(&name, field(v, &name, &["publicKey", "pub_key"])),
                message: common::hex_bytes(&name, field(v, &name, &["message"])),
                signature: fixed(&name, field(v, &name, &["signature"])),
                address: common::hex_bytes(&name, field(v, &name, &["addressBytes", "address"])),
                valid: v
                    .get("valid")
                    .and_then(|b| b.as_bool())
                    .unwrap_or_else(|| panic!("vector {name:?}: no `valid`")),
                name,
            }
        })
        .collect()
}

fn all_cases() -> Vec<Case> {
    let mut all = cases("stardust", "ed25519_signatures_zip215.json");
    all.extend(cases("nova", "ed25519_zip215.json"));
    all
}

/// The expected verdict is iota.go's `Ed25519Signature.Valid(msg, addr)`: the address
/// (0x00 || BLAKE2b-256(public key)) must match, then the ZIP-215 signature check.
fn check_file(generation: &str, file: &str) {
    let cases = cases(generation, file);
    let mut failures = Vec::new();
    for c in &cases {
        let Some((&0, hash)) = c.address.split_first() else {
            panic!("{}: address is not an Ed25519 address", c.name);
        };
        let hash: &[u8; 32] = hash
            .try_into()
            .unwrap_or_else(|_| panic!("{}: address length", c.name));
        let address_ok = ed25519::ed25519_address(&c.public_key) == *hash;
        let signature_ok = ed25519::verify(&c.public_key, &c.message, &c.signature);
        let got = ed25519::verify_for_address(hash, &c.public_key, &c.message, &c.signature);
        assert_eq!(got, address_ok && signature_ok, "{}", c.name);
        if got != c.valid {
            failures.push(format!(
                "{}: verdict {got} (address matches: {address_ok}, signature: {signature_ok}), expected {}",
                c.name, c.valid
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Both verdicts occur, so the check above can fail either way.
    assert!(cases.iter().any(|c| c.valid) && cases.iter().any(|c| !c.valid));
}

/// Pins the one vector whose `false` comes from the address, not the signature: its
/// public key `ecff…ff` is a non-canonical small-order point, so under ZIP-215 its
/// signature verifies for any message (vector 11 is the same key and signature).
#[test]
fn vector_10_is_rejected_by_address_not_by_signature() {
    for (generation, file) in [
        ("stardust", "ed25519_signatures_zip215.json"),
        ("nova", "ed25519_zip215.json"),
    ] {
        let cases = cases(generation, file);
        let c = &cases[10];
        assert!(!c.valid, "{}", c.name);
        assert!(
            ed25519::verify(&c.public_key, &c.message, &c.signature),
            "{}",
            c.name
        );
        assert_ne!(
            c.address[1..],
            ed25519::ed25519_address(&c.public_key),
            "{}",
            c.name
        );
        assert_eq!(
            (cases[11].public_key, cases[11].signature, cases[11].valid),
            (c.public_key, c.signature, true),
            "{}",
            cases[11].name
        );
    }
}

#[test]
fn stardust_zip215_vectors_give_expected_verdicts() {
    check_file("stardust", "ed25519_signatures_zip215.json");
}

#[test]
fn nova_zip215_vectors_give_expected_verdicts() {
    check_file("nova", "ed25519_zip215.json");
}

#[test]
fn batch_of_all_vectors_equals_single_verdicts() {
    let cases = all_cases();
    let items: Vec<Item<'_>> = cases
        .iter()
        .map(|c| Item::new(&c.public_key, &c.message, &c.signature))
        .collect();
    let verdicts = ed25519::verify_batch(&items);
    assert_eq!(verdicts.len(), cases.len());
    for (c, got) in cases.iter().zip(&verdicts) {
        let single = ed25519::verify(&c.public_key, &c.message, &c.signature);
        assert_eq!(*got, single, "{} (batched)", c.name);
        // Where the address matches, the signature verdict alone is the vector's verdict.
        if c.address[1..] == ed25519::ed25519_address(&c.public_key) {
            assert_eq!(*got, c.valid, "{} (batched)", c.name);
        }
    }
    assert!(
        !ed25519::verify_all(&items),
        "vectors include invalid signatures"
    );
    let valid: Vec<Item<'_>> = cases
        .iter()
        .zip(&items)
        .filter(|(c, _)| c.valid)
        .map(|(_, i)| *i)
        .collect();
    assert!(!valid.is_empty());
    assert!(ed25519::verify_all(&valid), "all valid vectors, batched");
}

#[test]
fn empty_batch_is_empty_and_all_valid() {
    assert!(ed25519::verify_batch(&[]).is_empty());
    assert!(ed25519::verify_all(&[]));
}

#[test]
fn batch_of_one_matches_single() {
    let key = SigningKey::from_seed(&[7; 32]);
    let pk = key.public_key();
    let sig = key.sign(b"one");
    assert_eq!(
        ed25519::verify_batch(&[Item::new(&pk, b"one", &sig)]),
        vec![true]
    );
    assert!(ed25519::verify_all(&[Item::new(&pk, b"one", &sig)]));
    assert_eq!(
        ed25519::verify_batch(&[Item::new(&pk, b"two", &sig)]),
        vec![false]
    );
    assert!(!ed25519::verify_all(&[Item::new(&pk, b"two", &sig)]));
}

#[test]
fn signing_key_matches_rfc8032_test_1() {
    // RFC 8032 §7.1 TEST 1 (empty message).
    let seed = fixed::<32>(
        "rfc8032-1",
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
    );
    let key = SigningKey::from_seed(&seed);
    assert_eq!(
        hex::encode(key.public_key()),
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
    );
    let sig = key.sign(b"");
    assert_eq!(
        hex::encode(sig),
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155\
         5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
    );
    assert!(ed25519::verify(&key.public_key(), b"", &sig));
}

/// What an item in a random batch is.
#[derive(Debug, Clone)]
enum Kind {
    /// A fresh valid signature.
    Valid { seed: [u8; 32], msg: Vec<u8> },
    /// A valid signature with one bit flipped somewhere (key, message or signature).
    Flipped {
        seed: [u8; 32],
        msg: Vec<u8>,
        bit: usize,
    },
    /// One of the ZIP-215 edge vectors (valid or not).
    Vector(usize),
    /// Random bytes.
    Garbage {
        pk: [u8; 32],
        sig: Vec<u8>,
        msg: Vec<u8>,
    },
}

fn kind() -> impl Strategy<Value = Kind> {
    let seed = any::<[u8; 32]>();
    let msg = proptest::collection::vec(any::<u8>(), 0..48);
    prop_oneof![
        4 => (seed, msg.clone()).prop_map(|(seed, msg)| Kind::Valid { seed, msg }),
        1 => (seed, msg.clone(), any::<usize>())
            .prop_map(|(seed, msg, bit)| Kind::Flipped { seed, msg, bit }),
        2 => (0usize..24).prop_map(Kind::Vector),
        1 => (any::<[u8; 32]>(), proptest::collection::vec(any::<u8>(), 64), msg)
            .prop_map(|(pk, sig, msg)| Kind::Garbage { pk, sig, msg }),
    ]
}

type Owned = ([u8; 32], Vec<u8>, [u8; 64]);

fn build(kind: &Kind, vectors: &[Case]) -> Owned {
    match kind {
        Kind::Valid { seed, msg } => {
            let k = SigningKey::from_seed(seed);
            (k.public_key(), msg.clone(), k.sign(msg))
        }
        Kind::Flipped { seed, msg, bit } => {
            let k = SigningKey::from_seed(seed);
            let (mut pk, mut m, mut sig) = (k.public_key(), msg.clone(), k.sign(msg));
            let total = 32 + m.len() + 64;
            let bit = bit % (total * 8);
            let (byte, mask) = (bit / 8, 1u8 << (bit % 8));
            if byte < 32 {
                pk[byte] ^= mask;
            } else if byte < 32 + m.len() {
                m[byte - 32] ^= mask;
            } else {
                sig[byte - 32 - m.len()] ^= mask;
            }
            (pk, m, sig)
        }
        Kind::Vector(i) => {
            let c = &vectors[i % vectors.len()];
            (c.public_key, c.message.clone(), c.signature)
        }
        Kind::Garbage { pk, sig, msg } => {
            let mut s = [0u8; 64];
            s.copy_from_slice(sig);
            (*pk, msg.clone(), s)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Validity never depends on batching: batch verdicts equal one-by-one verdicts,
    /// for any mix and any length (including across chunk boundaries).
    #[test]
    fn batch_verdicts_equal_single_verdicts(kinds in proptest::collection::vec(kind(), 0..150)) {
        let vectors = all_cases();
        let owned: Vec<Owned> = kinds.iter().map(|k| build(k, &vectors)).collect();
        let items: Vec<Item<'_>> =
            owned.iter().map(|(pk, m, s)| Item::new(pk, m, s)).collect();
        let single: Vec<bool> =
            owned.iter().map(|(pk, m, s)| ed25519::verify(pk, m, s)).collect();
        let batched = ed25519::verify_batch(&items);
        prop_assert_eq!(&batched, &single, "kinds: {:?}", kinds);
        prop_assert_eq!(ed25519::verify_all(&items), single.iter().all(|v| *v));
    }
}
