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

/// Lowercase `0x` hex.
pub fn to_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 + bytes.len() * 2);
    s.push_str("0x");
    s.push_str(&hex::encode(bytes));
    s
}
