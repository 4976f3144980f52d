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
    let encoded = block.to_bytes().expect("a decoded block encodes"); // ok: fuzz oracle, a panic is the finding
    assert_eq!(encoded, data, "decode → encode changed the bytes");
    let json = serde_json::to_string(&block).expect("a decoded block serializes to JSON"); // ok: fuzz oracle, a panic is the finding
    let back = match Block::from_json(&json) {
        Ok(b) => b,
        Err(e) => panic!("JSON of a valid block is rejected: {e}\n{json}"),
    };
    assert_eq!(
        back.to_bytes().ok().as_deref(),
        Some(data),
        "bytes → JSON → bytes changed the bytes"
    );
}

/// v2 block JSON: if it parses (with re-validation), encoding then decoding
/// gives an equal block, and re-serializing gives JSON that parses to it again.
pub fn fuzz_v2_block_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(block) = Block::from_json(text) else {
        return;
    };
    let bytes = match block.to_bytes() {
        Ok(b) => b,
        Err(e) => panic!("accepted JSON has no wire form: {e}"),
    };
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
    let again = Block::from_json(&json).expect("re-serialized JSON parses"); // ok: fuzz oracle, a panic is the finding
    assert_eq!(
        again, block,
        "JSON → block → JSON → block changed the block"
    );
}

/// A gossip byte stream read in chunks: the first input byte picks the chunk
/// size (`n + 1` bytes, 255 = the whole stream at once), the rest is the
/// stream, fed to a [`FrameReader`](crate::gossip::FrameReader).
///
/// Every message the reader yields re-encodes to exactly the frame bytes it
/// was read from, and [`decode_frame`](crate::gossip::decode_frame) reads the
/// same message from them; an error is the one `decode_frame` reports for the
/// rest of the stream, and the reader stays failed. The reader never holds
/// more than the unfinished frame, which at the end is exactly the unread tail
/// (which `decode_frame` calls incomplete).
pub fn fuzz_gossip_frames(data: &[u8]) {
    use crate::gossip::{decode_frame, FrameReader, MAX_BLOCK_LEN, MAX_FRAME_LEN};

    let Some((&selector, stream)) = data.split_first() else {
        return;
    };
    let chunk = if selector == u8::MAX {
        stream.len().max(1)
    } else {
        usize::from(selector) + 1
    };
    let mut reader = FrameReader::new();
    // Stream offsets: bytes the reader has consumed, and where the frame it is
    // reading began.
    let mut consumed = 0usize;
    let mut frame_start = 0usize;
    for piece in stream.chunks(chunk) {
        let mut input = piece;
        loop {
            let before = input.len();
            let result = reader.feed(&mut input);
            consumed += before - input.len();
            assert!(
                reader.buffered() <= MAX_FRAME_LEN,
                "reader holds more than a frame"
            );
            assert!(
                reader.allocated() <= MAX_BLOCK_LEN,
                "reader allocated more than a payload"
            );
            match result {
                Ok(Some(msg)) => {
                    let frame = stream
                        .get(frame_start..consumed)
                        .expect("offsets in the stream"); // ok: fuzz oracle, a panic is the finding
                    let encoded = msg.to_bytes().expect("a decoded message encodes"); // ok: fuzz oracle, a panic is the finding
                    assert_eq!(encoded, frame, "decode → encode changed the frame bytes");
                    match decode_frame(frame) {
                        Ok(Some((again, rest))) => {
                            assert_eq!(again, msg, "decode_frame reads another message");
                            assert!(rest.is_empty(), "decode_frame leaves frame bytes over");
                        }
                        other => panic!("decode_frame rejects a frame the reader read: {other:?}"),
                    }
                    frame_start = consumed;
                }
                Ok(None) => {
                    assert!(input.is_empty(), "reader stopped before the end of a chunk");
                    break;
                }
                Err(e) => {
                    let rest = stream.get(frame_start..).expect("offset in the stream"); // ok: fuzz oracle, a panic is the finding
                    assert_eq!(
                        decode_frame(rest).err().as_ref(),
                        Some(&e),
                        "decode_frame disagrees with the reader's error"
                    );
                    let mut valid: &[u8] = &[1, 4, 0, 0, 0, 0, 0];
                    assert_eq!(reader.feed(&mut valid), Err(e), "a failed reader recovered");
                    assert_eq!(valid.len(), 7, "a failed reader consumed input");
                    return;
                }
            }
        }
    }
    let rest = stream.get(frame_start..).expect("offset in the stream"); // ok: fuzz oracle, a panic is the finding
    assert_eq!(
        reader.buffered(),
        rest.len(),
        "reader holds other than the unread tail"
    );
    assert_eq!(reader.at_frame_boundary(), rest.is_empty());
    assert!(
        matches!(decode_frame(rest), Ok(None)),
        "decode_frame does not see the tail as incomplete"
    );
}
