//! Ed25519 verification with ZIP-215 semantics, single and batched.
//!
//! ZIP-215 is the validity rule (as in iota.go and iota-crypto): it is what
//! `ed25519-zebra` implements. Batching is only a fast path.

/// Verifies `signature` over `message` under `public_key` with ZIP-215 rules.
pub fn verify(public_key: &[u8; 32], message: &[u8], signature: &[u8; 64]) -> bool {
    let Ok(vk) = ed25519_zebra::VerificationKey::try_from(*public_key) else {
        return false;
    };
    vk.verify(&ed25519_zebra::Signature::from(*signature), message)
        .is_ok()
}
