//! b1t6 (TIP-5): every byte, read as a two's complement `i8`, becomes two
//! trytes (six trits) `v = lo + 27·hi`, least significant tryte first.

use super::ternary::{self, Trit};
use crate::error::{Error, Result};

/// Trits produced per byte.
pub const TRITS_PER_BYTE: usize = 6;

/// The six trits of one byte.
#[inline]
pub fn byte_trits(byte: u8) -> [Trit; 6] {
    let v = i16::from(byte as i8);
    // Balanced base 27: lo in −13..=13.
    let lo = ((v + 13).rem_euclid(27) - 13) as i8;
    let hi = ((v - i16::from(lo)) / 27) as i8;
    let l = ternary::tryte_to_trits(lo).unwrap_or([0; 3]);
    let h = ternary::tryte_to_trits(hi).unwrap_or([0; 3]);
    [l[0], l[1], l[2], h[0], h[1], h[2]]
}

/// Writes the b1t6 trits of `bytes` into `out`, which must hold `6·bytes.len()` trits.
pub fn encode_into(bytes: &[u8], out: &mut [Trit]) -> Result<()> {
    if Some(out.len()) != bytes.len().checked_mul(TRITS_PER_BYTE) {
        return Err(Error::invalid("b1t6 output buffer has the wrong length"));
    }
    for (b, chunk) in bytes.iter().zip(out.chunks_exact_mut(TRITS_PER_BYTE)) {
        chunk.copy_from_slice(&byte_trits(*b));
    }
    Ok(())
}

/// The b1t6 trits of `bytes`.
pub fn encode(bytes: &[u8]) -> Vec<Trit> {
    bytes.iter().flat_map(|b| byte_trits(*b)).collect()
}

/// The b1t6 encoding of `bytes` as a tryte string (two trytes per byte).
pub fn encode_trytes(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len().saturating_mul(2));
    for b in bytes {
        let t = byte_trits(*b);
        for tryte in [[t[0], t[1], t[2]], [t[3], t[4], t[5]]] {
            let c = ternary::trits_to_tryte(tryte)
                .and_then(ternary::tryte_char)
                .unwrap_or(b'9');
            s.push(char::from(c));
        }
    }
    s
}

/// Decodes b1t6 trits; their count must be a multiple of 6 and each group a valid `i8`.
/// Complete groups are checked first, so an invalid group before a ragged end
/// reports "invalid trits" (as iota.go does).
pub fn decode(trits: &[Trit]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(trits.len() / TRITS_PER_BYTE);
    for group in trits.chunks_exact(TRITS_PER_BYTE) {
        let lo = ternary::trits_to_tryte([group[0], group[1], group[2]]);
        let hi = ternary::trits_to_tryte([group[3], group[4], group[5]]);
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Err(Error::invalid("b1t6: invalid trits"));
        };
        let v = i16::from(lo) + 27 * i16::from(hi);
        let b = i8::try_from(v).map_err(|_| Error::invalid("b1t6: invalid trits"))?;
        out.push(b as u8);
    }
    if !trits.len().is_multiple_of(TRITS_PER_BYTE) {
        return Err(Error::invalid("b1t6: invalid length"));
    }
    Ok(out)
}

/// Decodes a b1t6 tryte string; its length must be even and each pair a valid `i8`.
pub fn decode_trytes(trytes: &str) -> Result<Vec<u8>> {
    decode(&ternary::trytes_to_trits(trytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips() {
        for b in 0..=255u8 {
            let t = encode(&[b]);
            assert_eq!(decode(&t).expect("valid"), vec![b], "byte {b}"); // ok: test code
            let trytes = encode_trytes(&[b]);
            assert_eq!(decode_trytes(&trytes).expect("valid"), vec![b]); // ok: test code
        }
    }

    #[test]
    fn encode_into_checks_the_buffer() {
        let mut buf = [0i8; 5];
        assert!(encode_into(&[1], &mut buf).is_err());
        let mut buf = [0i8; 6];
        encode_into(&[1], &mut buf).expect("fits"); // ok: test code
        assert_eq!(buf, [1, 0, 0, 0, 0, 0]);
    }
}
