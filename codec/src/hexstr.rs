//! Hex text, the one place for its rules: `0x` (or `0X`) prefixes, either case of digits,
//! lowercase `0x` output. Used by the JSON forms, the REST layer, configuration and tools.

use crate::error::{Error, Result};

/// The digits after a `0x` or `0X` prefix; `None` without one.
pub fn strip_0x(s: &str) -> Option<&str> {
    s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))
}

/// Parses `0x`-prefixed hex in either case. `""` and `"0x"` are empty.
///
/// # Errors
/// A missing `0x` prefix or a non-hex digit.
pub fn parse_hex(s: &str) -> Result<Vec<u8>> {
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let digits = strip_0x(s)
        .ok_or_else(|| Error::invalid(format!("hex string {s:?} does not start with 0x")))?;
    hex::decode(digits).map_err(|e| Error::invalid(format!("invalid hex {s:?}: {e}")))
}

/// Parses hex that must be exactly `N` bytes.
///
/// # Errors
/// Bad hex, or the wrong length.
pub fn parse_hex_array<const N: usize>(s: &str) -> Result<[u8; N]> {
    let v = parse_hex(s)?;
    let got = v.len();
    v.try_into()
        .map_err(|_| Error::invalid(format!("expected {N} bytes of hex, got {got}: {s:?}")))
}

/// Exactly `N` bytes of hex in a configuration value or key file: surrounding
/// whitespace ignored, `0x` optional, either case; `None` otherwise.
pub fn parse_config_hex<const N: usize>(s: &str) -> Option<[u8; N]> {
    let s = s.trim();
    let digits = strip_0x(s).unwrap_or(s);
    hex::decode(digits).ok()?.try_into().ok()
}

/// Lowercase hex digits by value.
const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Lowercase `0x` hex.
///
/// Pushes the digits straight into the one `String`: every answer with a block id or a hex
/// field comes through here, and `hex::encode` collects a second `String` char by char.
pub fn to_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 + bytes.len() * 2);
    s.push_str("0x");
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_hex_is_hex_encode_with_prefix() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(to_hex(&all), format!("0x{}", hex::encode(&all)));
        assert_eq!(to_hex(&[]), "0x");
        assert_eq!(to_hex(&[0xab, 0x01]), "0xab01");
    }
}
