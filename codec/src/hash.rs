//! BLAKE2b-256, the hash behind every id of both generations.

use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};

/// The BLAKE2b hasher with a 256-bit output.
pub type Blake2b256 = Blake2b<U32>;

/// BLAKE2b-256 of `data`.
#[inline]
pub fn blake2b256(data: &[u8]) -> [u8; 32] {
    Blake2b256::digest(data).into()
}

/// BLAKE2b-256 over several parts, as if concatenated.
#[inline]
pub fn blake2b256_parts(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Blake2b256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// Network id: the first 8 bytes of BLAKE2b-256(network name) as a little-endian u64 (v2 and
/// v3 alike).
pub fn network_id(name: &str) -> u64 {
    let h = blake2b256(name.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&h[..8]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_hash_is_the_known_value() {
        assert_eq!(
            hex::encode(blake2b256(b"")),
            "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"
        );
    }
}
