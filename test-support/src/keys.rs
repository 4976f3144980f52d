//! Ed25519 keys from a BIP-39 mnemonic by SLIP-10 derivation (the IOTA wallet path).
//!
//! The path is `m/44'/coin_type'/account'/0'/address_index'` (every level hardened,
//! as SLIP-10 requires for Ed25519); coin type 4219 is IOTA, 4218 Shimmer. The dev
//! genesis owner is address 0 of the public test mnemonic `abandon` ×23 + `art`.

use hmac::{Hmac, Mac};
use ledger_codec::ed25519::SigningKey;
use ledger_codec::{Error, Result};
use sha2::Sha512;

/// SLIP-44 coin type of IOTA.
pub const IOTA_COIN_TYPE: u32 = 4219;

/// SLIP-44 coin type of Shimmer.
pub const SHIMMER_COIN_TYPE: u32 = 4218;

/// The public 24-word BIP-39 test mnemonic whose address 0 owns the dev genesis.
pub const DEV_MNEMONIC: &str = "abandon abandon abandon abandon abandon abandon abandon abandon \
     abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon \
     abandon abandon abandon abandon art";

/// Index offset that marks a hardened derivation step.
const HARDENED: u32 = 0x8000_0000;

/// The HMAC key of the SLIP-10 Ed25519 master key.
const ED25519_CURVE: &[u8] = b"ed25519 seed";

/// The Ed25519 seed (RFC 8032 private key) at `m/44'/coin_type'/account'/0'/address_index'`
/// of an English BIP-39 mnemonic with an empty passphrase.
///
/// Errors on a mnemonic that is not valid BIP-39 (word list, word count, checksum) and on
/// an index that does not fit below the hardened offset (2³¹).
pub fn ed25519_seed_from_mnemonic(
    mnemonic: &str,
    coin_type: u32,
    account: u32,
    address_index: u32,
) -> Result<[u8; 32]> {
    let mnemonic = bip39::Mnemonic::parse_in(bip39::Language::English, mnemonic)
        .map_err(|e| Error::invalid(format!("mnemonic: {e}")))?;
    let seed = mnemonic.to_seed("");
    slip10_ed25519(&seed, &[44, coin_type, account, 0, address_index])
}

/// The signing key at `m/44'/coin_type'/account'/0'/address_index'` (see
/// [`ed25519_seed_from_mnemonic`]).
pub fn signing_key_from_mnemonic(
    mnemonic: &str,
    coin_type: u32,
    account: u32,
    address_index: u32,
) -> Result<SigningKey> {
    ed25519_seed_from_mnemonic(mnemonic, coin_type, account, address_index)
        .map(|seed| SigningKey::from_seed(&seed))
}

/// The dev genesis owner's key: address 0 of [`DEV_MNEMONIC`], coin type 4219.
pub fn dev_genesis_key() -> SigningKey {
    // The mnemonic is a constant known to be valid (pinned by a test); the
    // master-key fallback below is unreachable.
    signing_key_from_mnemonic(DEV_MNEMONIC, IOTA_COIN_TYPE, 0, 0)
        .unwrap_or_else(|_| SigningKey::from_seed(&[0; 32]))
}

/// SLIP-10 Ed25519 derivation of `seed` along `path` (each index hardened).
///
/// Master: `I = HMAC-SHA512("ed25519 seed", seed)`; child `i`:
/// `I = HMAC-SHA512(chain code, 0x00 ‖ key ‖ ser32(i + 2³¹))`; key = `I[..32]`,
/// chain code = `I[32..]`.
pub fn slip10_ed25519(seed: &[u8], path: &[u32]) -> Result<[u8; 32]> {
    let (mut key, mut chain) = split(hmac_sha512(ED25519_CURVE, &[seed]));
    for (i, &index) in path.iter().enumerate() {
        if index >= HARDENED {
            return Err(Error::invalid(format!(
                "derivation path: index {index} at level {i} is not below 2^31"
            )));
        }
        #[expect(clippy::big_endian_bytes, reason = "SLIP-10 ser32(i) is big-endian")]
        let hardened = (index | HARDENED).to_be_bytes();
        (key, chain) = split(hmac_sha512(&chain, &[&[0], &key, &hardened]));
    }
    Ok(key)
}

fn hmac_sha512(key: &[u8], parts: &[&[u8]]) -> [u8; 64] {
    // HMAC accepts keys of any length, so `new_from_slice` cannot fail here.
    let mut mac = <Hmac<Sha512> as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

fn split(i: [u8; 64]) -> ([u8; 32], [u8; 32]) {
    let mut key = [0; 32];
    let mut chain = [0; 32];
    key.copy_from_slice(&i[..32]);
    chain.copy_from_slice(&i[32..]);
    (key, chain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_genesis_owner_has_the_pinned_pub_key_hash() {
        let seed = ed25519_seed_from_mnemonic(DEV_MNEMONIC, IOTA_COIN_TYPE, 0, 0).unwrap(); // ok: test code
        let key = SigningKey::from_seed(&seed);
        assert_eq!(
            hex::encode(key.address()),
            "d18f653d669d2267974caac6ff6254effd5e6c0eeebe3e25944193fbfcafb9c0"
        );
        assert_eq!(dev_genesis_key().public_key(), key.public_key());
    }

    #[test]
    fn other_indices_and_coin_types_give_other_keys() {
        let a = ed25519_seed_from_mnemonic(DEV_MNEMONIC, IOTA_COIN_TYPE, 0, 0).unwrap(); // ok: test code
        let b = ed25519_seed_from_mnemonic(DEV_MNEMONIC, IOTA_COIN_TYPE, 0, 1).unwrap(); // ok: test code
        let c = ed25519_seed_from_mnemonic(DEV_MNEMONIC, SHIMMER_COIN_TYPE, 0, 0).unwrap(); // ok: test code
        let d = ed25519_seed_from_mnemonic(DEV_MNEMONIC, IOTA_COIN_TYPE, 1, 0).unwrap(); // ok: test code
        assert!(a != b && a != c && a != d && b != c && b != d && c != d);
    }

    #[test]
    fn slip10_matches_the_spec_test_vector_1() {
        // SLIP-0010 "Test vector 1 for ed25519", chain m/0'/1'/2'/2'/1000000000'.
        let seed = hex::decode("000102030405060708090a0b0c0d0e0f").unwrap(); // ok: test code
        let cases: [(&[u32], &str); 3] = [
            (
                &[],
                "2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7",
            ),
            (
                &[0],
                "68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3",
            ),
            (
                &[0, 1, 2, 2, 1_000_000_000],
                "8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793",
            ),
        ];
        for (path, want) in cases {
            assert_eq!(
                hex::encode(slip10_ed25519(&seed, path).unwrap()), // ok: test code
                want,
                "{path:?}"
            );
        }
    }

    #[test]
    fn rejects_bad_mnemonics_and_indices() {
        // Wrong checksum word, unknown word, wrong word count.
        for bad in [
            DEV_MNEMONIC.replace(" art", " abandon"),
            DEV_MNEMONIC.replace(" art", " notaword"),
            "abandon art".to_string(),
            String::new(),
        ] {
            assert!(
                ed25519_seed_from_mnemonic(&bad, IOTA_COIN_TYPE, 0, 0).is_err(),
                "{bad:?}"
            );
        }
        assert!(ed25519_seed_from_mnemonic(DEV_MNEMONIC, IOTA_COIN_TYPE, 0, HARDENED).is_err());
        assert!(ed25519_seed_from_mnemonic(DEV_MNEMONIC, HARDENED | 4219, 0, 0).is_err());
    }
}
