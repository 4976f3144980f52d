//! Fuzz entry point for v3 block decoding.

use crate::nova::Block;
use crate::wire::Codec;

/// Decodes `data` as a v3 block; when it decodes, encoding must give the same
/// bytes, and a JSON round trip must give the same bytes too. Panics on any
/// violation (that is the fuzz finding).
pub fn fuzz_v3_block(data: &[u8]) {
    let Ok(block) = Block::decode(data) else {
        return;
    };
    assert_eq!(
        block.to_bytes().ok().as_deref(),
        Some(data),
        "re-encoding differs from the input"
    );
    let json = serde_json::to_string(&block).expect("a decoded block serializes to JSON"); // ok: fuzz oracle, a panic is the finding
    let back = Block::from_json(&json).expect("JSON of a decoded block parses again"); // ok: fuzz oracle, a panic is the finding
    assert_eq!(
        back.to_bytes().ok().as_deref(),
        Some(data),
        "JSON round trip changes the bytes"
    );
}
