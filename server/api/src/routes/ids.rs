//! Path and response helpers shared by the v2 endpoints: hex ids in paths, hex in JSON.

use axum::{
    body::Bytes,
    http::{header, HeaderValue},
    response::{IntoResponse, Response},
};
use serde::Serialize;

use crate::{
    error::ApiError,
    media::{Encoding, MediaType},
};

/// Longest piece of a bad path parameter echoed back in an error message.
const MAX_ECHO: usize = 80;

/// Parses a `0x`-prefixed hex id of exactly `N` bytes (either case) from the path parameter
/// `name`; anything else is a 400 naming the parameter.
///
/// # Errors
/// [`ApiError::BadRequest`] for a missing prefix, a wrong length or a non-hex character.
pub fn parse_hex_id<const N: usize>(name: &str, value: &str) -> Result<[u8; N], ApiError> {
    let bad = |why: String| {
        let shown: String = value.chars().take(MAX_ECHO).collect();
        let more = if value.chars().count() > MAX_ECHO {
            "…"
        } else {
            ""
        };
        ApiError::bad_request(format!("invalid {name} {shown:?}{more}: {why}"))
    };
    let digits = ledger_codec::hexstr::strip_0x(value)
        .ok_or_else(|| bad("must start with 0x".to_owned()))?;
    if digits.len() != 2 * N {
        return Err(bad(format!(
            "expected {} hex characters after 0x ({N} bytes), got {}",
            2 * N,
            digits.len()
        )));
    }
    let mut out = [0u8; N];
    hex::decode_to_slice(digits, &mut out).map_err(|e| bad(format!("not hex: {e}")))?;
    Ok(out)
}

/// Parses a decimal `u32` path parameter (a milestone index); anything else is a 400.
///
/// # Errors
/// [`ApiError::BadRequest`] naming the parameter.
pub fn parse_index(name: &str, value: &str) -> Result<u32, ApiError> {
    value.parse::<u32>().map_err(|_| {
        let shown: String = value.chars().take(MAX_ECHO).collect();
        ApiError::bad_request(format!(
            "invalid {name} {shown:?}: expected a decimal number from 0 to {}",
            u32::MAX
        ))
    })
}

pub use ledger_codec::hexstr::to_hex;

/// The v2 binary media type the client asked for in `Accept`, if it asked for one (v3 binary
/// or anything else gets JSON on a v2 endpoint).
pub fn v2_binary(accept: MediaType) -> Option<MediaType> {
    (accept.encoding() == Encoding::V2Binary).then_some(accept)
}

/// Room first given to a JSON answer: most answers fit (an output with its metadata is
/// about 460 bytes), so the buffer is not grown and copied from 8 bytes up while writing.
const JSON_CAPACITY: usize = 512;

/// A JSON `200` response with `application/json`.
///
/// # Errors
/// [`ApiError::Internal`] when serialising fails (never for the types used here).
pub fn json_response<T: Serialize>(value: &T) -> Result<Response, ApiError> {
    let mut body = Vec::with_capacity(JSON_CAPACITY);
    serde_json::to_writer(&mut body, value).map_err(ApiError::internal)?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        Bytes::from(body),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_ids_accept_either_case_and_need_prefix_and_length() {
        let lower = format!("0x{}", "ab".repeat(32));
        let upper = format!("0X{}", "AB".repeat(32));
        assert_eq!(parse_hex_id::<32>("blockId", &lower).ok(), Some([0xab; 32]));
        assert_eq!(parse_hex_id::<32>("blockId", &upper).ok(), Some([0xab; 32]));
        for (bad, needle) in [
            ("ab".repeat(32), "0x"),
            (format!("0x{}", "ab".repeat(31)), "64 hex"),
            (format!("0x{}", "ab".repeat(33)), "64 hex"),
            (format!("0x{}", "zz".repeat(32)), "not hex"),
            ("0x".to_owned(), "64 hex"),
            (String::new(), "0x"),
            (format!("0x{}é", "a".repeat(62)), "not hex"),
        ] {
            let err = parse_hex_id::<32>("blockId", &bad)
                .err()
                .map(|e| e.to_string());
            let err = err.unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert!(
                err.contains("blockId") && err.contains(needle),
                "{bad:?}: {err}"
            );
        }
    }

    #[test]
    fn indices_are_decimal_u32() {
        assert_eq!(parse_index("index", "7").ok(), Some(7));
        assert_eq!(parse_index("index", "4294967295").ok(), Some(u32::MAX));
        for bad in ["", "-1", "4294967296", "0x1", "1.0", " 1"] {
            assert!(parse_index("index", bad).is_err(), "{bad:?}");
        }
    }
}
