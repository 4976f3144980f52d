//! `ledger-node tools decode|encode|id`: v2 blocks between binary, hex and JSON, and their ids.
//!
//! Each tool is a pure function from the bytes read on stdin (and optional protocol
//! parameters) to the text to print, so the binary only does I/O and exit codes. Input
//! forms: hex text (`0x…` or bare hex digits, either case, surrounding whitespace allowed; bad
//! hex is an error) or raw block bytes;
//! `tools id` and `tools encode` also take block JSON.

use std::{
    fmt,
    io::Read,
    path::{Path, PathBuf},
};

use ledger_codec::{
    pow,
    stardust::{Block, OutputId, Payload, ProtocolParameters},
    types::to_hex,
    Codec,
};
use serde::Serialize;

/// Most bytes a tool reads from stdin (a block is at most 32 KiB; its pretty JSON is larger).
pub const MAX_INPUT: u64 = 4 * 1024 * 1024;

/// Why a tool failed, and with which exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// The input is not a valid block (exit code 1); the text names the rule and location.
    Invalid(String),
    /// The command was used wrongly, e.g. an unreadable parameters file (exit code 2).
    Usage(String),
}

impl ToolError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Invalid(_) => 1,
            Self::Usage(_) => 2,
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(m) | Self::Usage(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ToolError {}

impl From<ledger_codec::Error> for ToolError {
    fn from(e: ledger_codec::Error) -> Self {
        Self::Invalid(format!("invalid block: {e}"))
    }
}

/// Reads all of `input` (at most [`MAX_INPUT`] bytes).
///
/// # Errors
/// A read error or input over the limit ([`ToolError::Invalid`]).
pub fn read_input(input: impl Read) -> Result<Vec<u8>, ToolError> {
    let mut buf = Vec::new();
    input
        .take(MAX_INPUT + 1)
        .read_to_end(&mut buf)
        .map_err(|e| ToolError::Invalid(format!("cannot read stdin: {e}")))?;
    if buf.len() as u64 > MAX_INPUT {
        return Err(ToolError::Invalid(format!(
            "input is larger than {MAX_INPUT} bytes"
        )));
    }
    Ok(buf)
}

/// Loads protocol parameters from a JSON file: the `/info` `protocol` object (version,
/// networkName, bech32Hrp, minPowScore, belowMaxDepth, rentStructure, tokenSupply), or a
/// whole `/info` answer holding it under `protocol`.
///
/// # Errors
/// Unreadable file or JSON that is not protocol parameters ([`ToolError::Usage`]).
pub fn load_parameters(path: &Path) -> Result<ProtocolParameters, ToolError> {
    let usage = |what: String| ToolError::Usage(format!("{}: {what}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| usage(e.to_string()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| usage(format!("not JSON: {e}")))?;
    let value = match value.get("protocol") {
        Some(inner) if inner.is_object() => inner.clone(),
        _ => value,
    };
    serde_json::from_value(value).map_err(|e| usage(format!("not protocol parameters: {e}")))
}

/// Loads the parameters named by `--protocol-parameters`, if given.
///
/// # Errors
/// See [`load_parameters`].
pub fn parameters_from(path: Option<&PathBuf>) -> Result<Option<ProtocolParameters>, ToolError> {
    path.map(|p| load_parameters(p)).transpose()
}

/// The block bytes in `input`: hex text (see [`hex_text`]) decoded, else the input itself
/// as raw bytes.
///
/// # Errors
/// Input that is hex text but not valid hex.
pub fn block_bytes(input: &[u8]) -> Result<Vec<u8>, ToolError> {
    Ok(hex_text(input)?.unwrap_or_else(|| input.to_vec()))
}

/// Hex text, decoded: surrounding whitespace, then `0x`/`0X` and anything after it, or only
/// hex digits (either case). Raw v2 block bytes never look like that: they start with the
/// protocol version byte 2, which is not a printable character. `None` for other input.
///
/// # Errors
/// Input that is hex text with a bad digit or an odd number of digits.
fn hex_text(input: &[u8]) -> Result<Option<Vec<u8>>, ToolError> {
    let Ok(text) = std::str::from_utf8(input) else {
        return Ok(None);
    };
    let text = text.trim();
    let digits = match ledger_codec::hexstr::strip_0x(text) {
        Some(digits) => digits,
        None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_hexdigit()) => text,
        None => return Ok(None),
    };
    hex::decode(digits)
        .map(Some)
        .map_err(|e| ToolError::Invalid(format!("input is hex text but not valid hex: {e}")))
}

/// JSON text of a block, if the input looks like JSON (first non-blank character `{`).
fn json_text(input: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(input).ok()?;
    text.trim_start().starts_with('{').then_some(text)
}

fn check(block: &Block<'_>, params: Option<&ProtocolParameters>) -> Result<(), ToolError> {
    match params {
        Some(p) => Ok(block.validate(p)?),
        None => Ok(()),
    }
}

/// `tools decode`: a block (hex or raw bytes) to pretty JSON.
///
/// # Errors
/// Input that does not decode strictly, or (with parameters) does not validate.
pub fn decode(input: &[u8], params: Option<&ProtocolParameters>) -> Result<String, ToolError> {
    if input.iter().all(u8::is_ascii_whitespace) {
        return Err(ToolError::Invalid(
            "no input: expected a block on stdin".into(),
        ));
    }
    let bytes = block_bytes(input)?;
    let block = Block::decode(&bytes)?;
    check(&block, params)?;
    serde_json::to_string_pretty(&block)
        .map_err(|e| ToolError::Invalid(format!("cannot print the block as JSON: {e}")))
}

/// `tools encode`: block JSON to `0x…` hex of its bytes.
///
/// # Errors
/// Input that is not UTF-8 or not a valid block's JSON, or (with parameters) does not
/// validate.
pub fn encode(input: &[u8], params: Option<&ProtocolParameters>) -> Result<String, ToolError> {
    let text = std::str::from_utf8(input)
        .map_err(|e| ToolError::Invalid(format!("input is not UTF-8 text: {e}")))?;
    if text.trim().is_empty() {
        return Err(ToolError::Invalid(
            "no input: expected block JSON on stdin".into(),
        ));
    }
    let block = Block::from_json(text)?;
    check(&block, params)?;
    Ok(to_hex(&block.to_bytes()?))
}

/// The ids of a block, as printed by `tools id`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockIds {
    /// BLAKE2b-256 of the block bytes.
    pub block_id: String,
    /// Id of the transaction payload, if the block carries one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
    /// Ids of the outputs the transaction creates (present only with a transaction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_ids: Option<Vec<OutputId>>,
    /// Id of the milestone payload, if the block carries one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub milestone_id: Option<String>,
    /// TIP-12 PoW score of the block bytes.
    pub pow_score: f64,
}

impl BlockIds {
    /// The ids of `block` whose serialized form is `bytes`.
    ///
    /// # Errors
    /// A payload with no wire form (only possible for a block built in memory).
    pub fn of(block: &Block<'_>, bytes: &[u8]) -> Result<Self, ledger_codec::Error> {
        let (transaction_id, output_ids, milestone_id) = match &block.payload {
            Some(Payload::Transaction(t)) => (Some(to_hex(&t.id()?)), Some(t.output_ids()?), None),
            Some(Payload::Milestone(m)) => (None, None, Some(to_hex(&m.id()?))),
            _ => (None, None, None),
        };
        Ok(Self {
            block_id: to_hex(&Block::id_of(bytes)),
            transaction_id,
            output_ids,
            milestone_id,
            pow_score: pow::pow_score(bytes),
        })
    }
}

/// `tools id`: a block (hex, JSON or raw bytes) to its [`BlockIds`] as pretty JSON.
///
/// # Errors
/// Input that is not a valid block, or (with parameters) does not validate.
pub fn id(input: &[u8], params: Option<&ProtocolParameters>) -> Result<String, ToolError> {
    if input.iter().all(u8::is_ascii_whitespace) {
        return Err(ToolError::Invalid(
            "no input: expected a block on stdin".into(),
        ));
    }
    let ids = if let Some(bytes) = hex_text(input)? {
        let block = Block::decode(&bytes)?;
        check(&block, params)?;
        BlockIds::of(&block, &bytes)?
    } else if let Some(text) = json_text(input) {
        let block = Block::from_json(text)?;
        check(&block, params)?;
        BlockIds::of(&block, &block.to_bytes()?)?
    } else {
        let block = Block::decode(input)?;
        check(&block, params)?;
        BlockIds::of(&block, input)?
    };
    serde_json::to_string_pretty(&ids)
        .map_err(|e| ToolError::Invalid(format!("cannot print the ids: {e}")))
}

/// Files of a data dir that `tools salvage` copies as they are, if present.
const SALVAGED_FILES: &[&str] = &["coordinator.key", "coordinator.key.issued", "jwt-secret"];

/// `tools salvage`: the intact records of `from/log` into a new data dir `into`, with the key
/// files; `confirmed-index` is left behind, since the salvaged log may end earlier. Returns a
/// report to print.
///
/// # Errors
/// `into` is not empty, I/O failures.
pub fn salvage(from: &Path, into: &Path) -> Result<String, ToolError> {
    let fail = |e: &dyn fmt::Display| ToolError::Invalid(format!("salvage: {e}"));
    if !from.join("log").is_dir() {
        return Err(fail(&format!("{} has no log directory", from.display())));
    }
    let report =
        ledger_engine::salvage(&from.join("log"), &into.join("log")).map_err(|e| fail(&e))?;
    for name in SALVAGED_FILES {
        let src = from.join(name);
        if src.exists() {
            std::fs::copy(&src, into.join(name)).map_err(|e| fail(&e))?;
        }
    }
    let mut out = format!(
        "copied {} records from {} into {}\n",
        report.records,
        from.display(),
        into.display()
    );
    for (segment, start, end) in &report.skipped {
        out.push_str(&format!(
            "skipped damaged bytes {start}..{end} of segment {segment}\n"
        ));
    }
    Ok(out.trim_end().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The TIP-24 example block without payload (iota-sdk unpack_valid_no_remaining_bytes).
    const EMPTY: &str = "0x02028c1cba349391600969594e8b0347f96195be3feea8ca528ce342ad136e5d7522e1c\
                         afb0a9c3a90e1364f3e2614795f5a706d06a67e910d3e3444f887df77890d0000000015cd5b0700000000";

    #[test]
    fn hex_is_detected_in_either_case_with_whitespace() {
        let raw = [2u8, 0xff, b'a', b'b'];
        assert_eq!(block_bytes(&raw).ok(), Some(raw.to_vec()));
        assert_eq!(block_bytes(b"  0xAbCd\n").ok(), Some(vec![0xab, 0xcd]));
        assert_eq!(block_bytes(b"0XABCD").ok(), Some(vec![0xab, 0xcd]));
        assert_eq!(block_bytes(b"abCD\n").ok(), Some(vec![0xab, 0xcd]));
        // Hex text with an odd digit count or a non-hex digit: an error, not raw bytes.
        for bad in [&b"0xabc"[..], b"0xzz", b"abc"] {
            let err = block_bytes(bad).expect_err("bad hex");
            assert!(err.to_string().contains("not valid hex"), "{err}");
        }
    }

    #[test]
    fn empty_and_blank_input_are_invalid() {
        for input in [&b""[..], b"  \n"] {
            assert!(matches!(decode(input, None), Err(ToolError::Invalid(_))));
            assert!(matches!(encode(input, None), Err(ToolError::Invalid(_))));
            assert!(matches!(id(input, None), Err(ToolError::Invalid(_))));
        }
    }

    #[test]
    fn truncated_block_error_names_its_location() {
        let e = decode(&EMPTY.as_bytes()[..EMPTY.len() - 4], None).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert!(e.to_string().contains("nonce"), "{e}");
    }

    #[test]
    fn decode_encode_round_trip() {
        let json = decode(EMPTY.as_bytes(), None).unwrap();
        assert_eq!(encode(json.as_bytes(), None).unwrap(), EMPTY);
    }

    #[test]
    fn read_input_refuses_oversized_input() {
        let big = std::io::repeat(b'0').take(MAX_INPUT + 10);
        assert!(matches!(read_input(big), Err(ToolError::Invalid(_))));
    }
}
