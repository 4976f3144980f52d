//! Balanced trits and trytes (TIP-5): a trit is −1, 0 or 1; a tryte is
//! three trits `t0 + 3·t1 + 9·t2` in −13..=13, written with the alphabet
//! `9ABCDEFGHIJKLMNOPQRSTUVWXYZ` (values 0..=13, then −13..=−1).

use crate::error::{Error, Result};

/// One balanced trit: −1, 0 or 1.
pub type Trit = i8;

/// The tryte alphabet, indexed by `value` for 0..=13 and `value + 27` for −13..=−1.
pub const TRYTE_ALPHABET: &[u8; 27] = b"9ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// The value (−13..=13) of a tryte character, if it is one.
pub fn tryte_value(c: u8) -> Option<i8> {
    match c {
        b'9' => Some(0),
        b'A'..=b'M' => Some((c - b'A') as i8 + 1),
        b'N'..=b'Z' => Some((c - b'N') as i8 - 13),
        _ => None,
    }
}

/// The character of a tryte value, if it is in −13..=13.
pub fn tryte_char(value: i8) -> Option<u8> {
    let index = if value < 0 { value + 27 } else { value };
    usize::try_from(index)
        .ok()
        .and_then(|i| TRYTE_ALPHABET.get(i))
        .copied()
        .filter(|_| (-13..=13).contains(&value))
}

/// The three trits (least significant first) of a tryte value in −13..=13.
pub fn tryte_to_trits(value: i8) -> Option<[Trit; 3]> {
    if !(-13..=13).contains(&value) {
        return None;
    }
    let mut v = value;
    let mut out = [0; 3];
    for t in &mut out {
        // Balanced digit: remainder in −1..=1.
        let r = ((v % 3) + 3 + 1) % 3 - 1;
        *t = r;
        v = (v - r) / 3;
    }
    Some(out)
}

/// The tryte value of three trits (least significant first); `None` if a trit is not −1, 0 or 1.
pub fn trits_to_tryte(trits: [Trit; 3]) -> Option<i8> {
    if trits.iter().any(|t| !(-1..=1).contains(t)) {
        return None;
    }
    Some(trits[0] + 3 * trits[1] + 9 * trits[2])
}

/// Decodes a tryte string into trits (three per character).
pub fn trytes_to_trits(trytes: &str) -> Result<Vec<Trit>> {
    let mut out = Vec::with_capacity(trytes.len().saturating_mul(3));
    for (i, c) in trytes.bytes().enumerate() {
        let v = tryte_value(c)
            .ok_or_else(|| Error::invalid(format!("invalid tryte character at {i}")))?;
        out.extend_from_slice(&tryte_to_trits(v).unwrap_or([0; 3]));
    }
    Ok(out)
}

/// Encodes trits as a tryte string; the length must be a multiple of 3 and every trit valid.
pub fn trits_to_trytes(trits: &[Trit]) -> Result<String> {
    if !trits.len().is_multiple_of(3) {
        return Err(Error::invalid("trit count is not a multiple of 3"));
    }
    let mut out = String::with_capacity(trits.len() / 3);
    for chunk in trits.chunks_exact(3) {
        let v = trits_to_tryte([chunk[0], chunk[1], chunk[2]])
            .ok_or_else(|| Error::invalid("invalid trit value"))?;
        out.push(char::from(
            tryte_char(v).ok_or_else(|| Error::invalid("invalid tryte"))?,
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tryte_round_trips_through_char_and_trits() {
        for v in -13i8..=13 {
            let c = tryte_char(v).expect("in range"); // ok: test code
            assert_eq!(tryte_value(c), Some(v), "value {v}");
            let t = tryte_to_trits(v).expect("in range"); // ok: test code
            assert_eq!(trits_to_tryte(t), Some(v), "value {v}");
        }
        assert_eq!(tryte_char(14), None);
        assert_eq!(tryte_char(-14), None);
        assert_eq!(tryte_value(b'a'), None);
        assert_eq!(tryte_to_trits(14), None);
        assert_eq!(trits_to_tryte([2, 0, 0]), None);
    }

    #[test]
    fn alphabet_order() {
        assert_eq!(tryte_value(b'9'), Some(0));
        assert_eq!(tryte_value(b'M'), Some(13));
        assert_eq!(tryte_value(b'N'), Some(-13));
        assert_eq!(tryte_value(b'Z'), Some(-1));
        assert_eq!(tryte_to_trits(13), Some([1, 1, 1]));
        assert_eq!(tryte_to_trits(-1), Some([-1, 0, 0]));
        assert_eq!(tryte_to_trits(2), Some([-1, 1, 0]));
    }

    #[test]
    fn bad_input_is_rejected() {
        assert!(trytes_to_trits("AB9c").is_err());
        assert!(trits_to_trytes(&[0, 1]).is_err());
        assert!(trits_to_trytes(&[0, 1, 5]).is_err());
        assert_eq!(
            trytes_to_trits("9A").expect("valid"), // ok: test code
            vec![0, 0, 0, 1, 0, 0]
        );
    }
}
