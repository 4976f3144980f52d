//! Entry points for the fuzz targets (kept in the library so they refactor with it).
//!
//! Each function is an oracle: it returns normally for any input the codec
//! handles correctly (accepted or rejected) and panics on a codec bug.

use crate::stardust::Block;
use crate::wire::Codec;

/// v2 block bytes: if they decode, re-encoding gives the same bytes, and the
/// JSON round trip (serialize, parse with re-validation, encode) gives the
/// same bytes too.
pub fn fuzz_v2_block(data: &[u8]) {
    let Ok(block) = Block::decode(data) else {
        return;
    };
    let encoded = block.to_bytes();
    assert_eq!(encoded, data, "decode → encode changed the bytes");
    let json = serde_json::to_string(&block).expect("a decoded block serializes to JSON"); // ok: fuzz oracle, a panic is the finding
    let back = match Block::from_json_str(&json) {
        Ok(b) => b,
        Err(e) => panic!("JSON of a valid block is rejected: {e}\n{json}"),
    };
    assert_eq!(
        back.to_bytes(),
        data,
        "bytes → JSON → bytes changed the bytes"
    );
}

/// v2 block JSON: if it parses (with re-validation), encoding then decoding
/// gives an equal block, and re-serializing gives JSON that parses to it again.
pub fn fuzz_v2_block_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(block) = Block::from_json_str(text) else {
        return;
    };
    let bytes = block.to_bytes();
    let decoded = match Block::decode(&bytes) {
        Ok(b) => b,
        Err(e) => panic!("accepted JSON encodes to bytes that do not decode: {e}"),
    };
    assert_eq!(
        decoded.into_owned(),
        block,
        "JSON → bytes → block changed the block"
    );
    let json = serde_json::to_string(&block).expect("serializes"); // ok: fuzz oracle, a panic is the finding
    let again = Block::from_json_str(&json).expect("re-serialized JSON parses"); // ok: fuzz oracle, a panic is the finding
    assert_eq!(
        again, block,
        "JSON → block → JSON → block changed the block"
    );
}
