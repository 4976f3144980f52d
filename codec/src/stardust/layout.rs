//! Where the parts of a v2 block sit in its wire bytes, for a caller that needs one part (or
//! its place) without decoding the whole block: the protocol version and parent count, the
//! payload's type and bytes, the id of the transaction it carries, the spans of that
//! transaction's outputs, and the parents put into a block a client sent without them.
//!
//! The layout is the one the decoders declare (TIP-24 `protocolVersion u8 ‖ parents
//! ([`PARENTS`]) ‖ payload (`u32` length, 0 = none) ‖ nonce u64`; the payload's `u32` type
//! first): each function reads it with the [`Reader`], or sums the widths of a decoded
//! value's fields. These functions only peek: they answer `None` (or an error) for bytes too
//! short or malformed to say, never panic, and do not check the syntax rules; a block is
//! judged by [`Block::decode`](crate::Codec::decode).

use std::mem::{size_of, size_of_val};
use std::ops::Range;

use super::block::{Block, PARENTS};
use super::payload::{Essence, Payload, Transaction, INPUTS, OUTPUTS};
use crate::error::{Context, Error, Result};
use crate::hash::blake2b256;
use crate::pow::NONCE_LEN;
use crate::wire::{Len, Reader};

/// The parent count as declared (prefix of [`PARENTS`]) with no range: peeking reads what a
/// block says, and decoding refuses a count out of range.
const ANY_PARENTS: Len = Len {
    min: 0,
    max: usize::MAX,
    ..PARENTS
};

/// Width of the `u32` length before an optional payload ([`crate::wire::read_optional`]).
const PAYLOAD_LENGTH: usize = size_of::<u32>();

/// Reads the version and the parents; the reader is left at the payload length.
fn skip_parents(r: &mut Reader<'_>) -> Option<()> {
    r.u8().ok()?;
    let n = r.len(&ANY_PARENTS).ok()?;
    r.slice_of::<[u8; 32]>(n).ok()?;
    Some(())
}

/// The protocol version: the first byte; `None` for empty bytes.
pub fn protocol_version(block: &[u8]) -> Option<u8> {
    Reader::new(block).u8().ok()
}

/// The parent count as declared (not checked against 1..=8); `None` when the bytes end first.
pub fn parent_count(block: &[u8]) -> Option<usize> {
    let mut r = Reader::new(block);
    r.u8().ok()?;
    r.len(&ANY_PARENTS).ok()
}

/// The nonce, the last 8 bytes, where they follow the version and the declared parents
/// (`None` when the bytes are too short to hold all three).
pub fn nonce(block: &[u8]) -> Option<u64> {
    let mut r = Reader::new(block);
    skip_parents(&mut r)?;
    let before = r.remaining().checked_sub(NONCE_LEN)?;
    r.take(before).ok()?;
    r.u64().ok()
}

/// The payload type, read after the version, the parents and a non-zero payload length;
/// `None` without a payload, or when the bytes end before the type. The payload's length is
/// not checked against the bytes (strict decoding does that).
pub fn payload_kind(block: &[u8]) -> Option<u32> {
    let mut r = Reader::new(block);
    skip_parents(&mut r)?;
    match r.u32().ok()? {
        0 => None,
        _ => r.u32().ok(),
    }
}

/// The payload's bytes inside a block's bytes, its `u32` type first: what the payload's id
/// is hashed over. `None` without a payload, or when the bytes end before its declared length.
pub fn payload_bytes(block: &[u8]) -> Option<&[u8]> {
    let mut r = Reader::new(block);
    skip_parents(&mut r)?;
    let n = usize::try_from(r.u32().ok()?).ok()?;
    if n == 0 {
        return None;
    }
    r.take(n).ok()
}

/// The id of the transaction a block carries, hashed straight from the payload's bytes
/// (nothing is encoded again): BLAKE2b-256 of [`payload_bytes`]. `None` when the block
/// carries no transaction (another payload type, none, or bytes too short to hold it).
pub fn transaction_id_of_block(block: &[u8]) -> Option<[u8; 32]> {
    let payload = payload_bytes(block)?;
    let kind = Reader::new(payload).u32().ok()?;
    (kind == Transaction::KIND).then(|| blake2b256(payload))
}

/// Where each output of the transaction a block carries sits in the block's wire bytes, in
/// output order: for a block decoded from `bytes`, `bytes[span]` is that output's encoding.
/// `None` when the block carries no transaction.
///
/// Summed from the decoded fields' wire widths (version, parents with their prefix, payload
/// length and type, essence type, network id, inputs with their prefix, inputs commitment,
/// the outputs' prefix, then each output's [`encoded_len`](super::Output::encoded_len)):
/// nothing is read or encoded again.
pub fn output_spans(block: &Block<'_>) -> Option<Vec<Range<usize>>> {
    let Some(Payload::Transaction(tx)) = &block.payload else {
        return None;
    };
    let essence = &tx.essence;
    let mut at = size_of_val(&block.protocol_version)
        + PARENTS.width()
        + size_of_val(block.parents.as_ref())
        + PAYLOAD_LENGTH
        + size_of_val(&Transaction::KIND)
        + size_of_val(&Essence::KIND)
        + size_of_val(&essence.network_id)
        + INPUTS.width()
        + size_of_val(essence.inputs.as_ref())
        + size_of_val(essence.inputs_commitment.as_array())
        + OUTPUTS.width();
    Some(
        essence
            .outputs
            .iter()
            .map(|o| {
                let start = at;
                at = at.saturating_add(o.encoded_len());
                start..at
            })
            .collect(),
    )
}

/// A block sent without parents (a parent count of 0, which asks the node to choose them)
/// with `parents` put in after the version: the same bytes otherwise.
///
/// # Errors
/// A block that declares parents, or is too short to hold a version, the count and a nonce
/// ([`ErrorKind::UnexpectedEnd`](crate::ErrorKind::UnexpectedEnd)); more parents than the
/// count prefix can hold ([`ErrorKind::TooLongToEncode`](crate::ErrorKind::TooLongToEncode)).
pub fn fill_parents(block: &[u8], parents: &[[u8; 32]]) -> Result<Vec<u8>> {
    let mut r = Reader::new(block);
    let version = r.u8().at("protocolVersion")?;
    let n = r.len(&ANY_PARENTS).at("parents")?;
    if n != 0 {
        return Err(Error::invalid(format!("the block has {n} parents already")).at("parents"));
    }
    let rest = r.rest();
    if rest.len() < NONCE_LEN {
        // What would be read as the nonce overlaps the version or the count.
        r.take(NONCE_LEN).at("nonce")?;
    }
    let mut out = Vec::with_capacity(block.len() + size_of_val(parents));
    out.push(version);
    PARENTS.put(parents.len(), &mut out).at("parents")?;
    for p in parents {
        out.extend_from_slice(p);
    }
    out.extend_from_slice(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stardust::{Milestone, Output, TaggedData};
    use crate::Codec;

    /// A block around `payload` (its bytes with the type) with `parents` parents.
    fn block(parents: u8, payload: &[u8], nonce: u64) -> Vec<u8> {
        let mut b = vec![2, parents];
        for i in 0..parents {
            b.extend_from_slice(&[i + 1; 32]);
        }
        b.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_le_bytes()); // ok: test code
        b.extend_from_slice(payload);
        b.extend_from_slice(&nonce.to_le_bytes());
        b
    }

    fn tagged_data() -> Vec<u8> {
        TaggedData {
            tag: crate::types::Bytes::borrowed(b"tag"),
            data: crate::types::Bytes::borrowed(b"data"),
        }
        .to_bytes()
        .unwrap() // ok: test code
    }

    /// The signed transaction of the vendored vectors.
    fn transaction() -> Vec<u8> {
        let v = ledger_test_support::load("stardust", "transaction_payloads.json");
        let hex_tx = v[0]["bytes"].as_str().unwrap(); // ok: test code
        hex::decode(hex_tx.trim_start_matches("0x")).unwrap() // ok: test code
    }

    /// Every prefix of `bytes`, the empty one included.
    fn prefixes(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
        (0..=bytes.len()).map(|n| &bytes[..n])
    }

    #[test]
    fn version_count_and_nonce_are_read_where_declared() {
        let b = block(3, &tagged_data(), 0x0102_0304_0506_0708);
        assert_eq!(protocol_version(&b), Some(2));
        assert_eq!(parent_count(&b), Some(3));
        assert_eq!(nonce(&b), Some(0x0102_0304_0506_0708));
        assert_eq!(protocol_version(&[]), None);
        assert_eq!(parent_count(&[2]), None);
        assert_eq!(parent_count(&[2, 0]), Some(0));
        // A parentless block needs 8 bytes after the count for its nonce.
        assert_eq!(nonce(&[2, 0, 1, 0, 0, 0, 0, 0, 0]), None);
        assert_eq!(nonce(&[2, 0, 1, 0, 0, 0, 0, 0, 0, 0]), Some(1));
        // Parents declared but missing: no nonce.
        assert_eq!(nonce(&[2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), None);
    }

    #[test]
    fn payload_kind_names_each_payload_type() {
        assert_eq!(
            payload_kind(&block(1, &tagged_data(), 0)),
            Some(TaggedData::KIND)
        );
        assert_eq!(
            payload_kind(&block(2, &transaction(), 0)),
            Some(Transaction::KIND)
        );
        let milestone_head = Milestone::KIND.to_le_bytes();
        assert_eq!(
            payload_kind(&block(8, &milestone_head, 0)),
            Some(Milestone::KIND)
        );
        assert_eq!(payload_kind(&block(1, &[], 0)), None, "no payload");
    }

    #[test]
    fn payload_kind_agrees_with_decoding() {
        for b in [block(1, &tagged_data(), 0), block(4, &transaction(), 7)] {
            let decoded = Block::decode(&b).unwrap(); // ok: test code
            assert_eq!(payload_kind(&b), decoded.payload.map(|p| p.kind()));
        }
    }

    #[test]
    fn short_or_malformed_bytes_answer_none() {
        let tx_len = transaction().len();
        let whole = block(2, &transaction(), 0);
        let payload_at = 2 + 2 * 32 + PAYLOAD_LENGTH;
        for p in prefixes(&whole) {
            let kind = payload_kind(p);
            assert_eq!(
                kind.is_some(),
                p.len() >= payload_at + 4,
                "{} bytes",
                p.len()
            );
            let full = p.len() >= payload_at + tx_len;
            assert_eq!(payload_bytes(p).is_some(), full, "{} bytes", p.len());
            assert_eq!(transaction_id_of_block(p).is_some(), full);
            let _ = (protocol_version(p), parent_count(p), nonce(p));
        }
        // A count of 255 parents over a few bytes; a payload length beyond the end.
        assert_eq!(payload_kind(&[2, 255, 0, 0]), None);
        let mut huge = vec![2, 0];
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        huge.extend_from_slice(&TaggedData::KIND.to_le_bytes());
        assert_eq!(payload_kind(&huge), Some(TaggedData::KIND));
        assert_eq!(payload_bytes(&huge), None);
        assert_eq!(transaction_id_of_block(&huge), None);
    }

    #[test]
    fn transaction_id_is_the_payloads_id() {
        let tx_bytes = transaction();
        let tx = Transaction::decode(&tx_bytes).unwrap(); // ok: test code
        for parents in [1, 2, 8] {
            let b = block(parents, &tx_bytes, 9);
            assert_eq!(payload_bytes(&b), Some(tx_bytes.as_slice()));
            assert_eq!(transaction_id_of_block(&b), Some(tx.id().unwrap())); // ok: test code
        }
        let data = block(1, &tagged_data(), 0);
        assert!(payload_bytes(&data).is_some());
        assert_eq!(transaction_id_of_block(&data), None, "tagged data");
        assert_eq!(
            transaction_id_of_block(&block(1, &[], 0)),
            None,
            "no payload"
        );
    }

    #[test]
    fn output_spans_point_at_the_outputs() {
        let tx_bytes = transaction();
        for parents in [1, 3, 8] {
            let bytes = block(parents, &tx_bytes, 0);
            let b = Block::decode(&bytes).unwrap(); // ok: test code
            let Some(Payload::Transaction(tx)) = &b.payload else {
                panic!("not a transaction")
            };
            let spans = output_spans(&b).unwrap(); // ok: test code
            assert_eq!(spans.len(), tx.essence.outputs.len());
            for (span, o) in spans.into_iter().zip(&tx.essence.outputs) {
                assert_eq!(&Output::decode(&bytes[span]).unwrap(), o); // ok: test code
            }
        }
        let data = block(1, &tagged_data(), 0);
        assert_eq!(output_spans(&Block::decode(&data).unwrap()), None); // ok: test code
    }

    #[test]
    fn fill_parents_puts_them_after_the_version() {
        let parentless = block(0, &tagged_data(), 0);
        let parents = [[1u8; 32], [2; 32]];
        let filled = fill_parents(&parentless, &parents).unwrap(); // ok: test code
        assert_eq!(filled, block(2, &tagged_data(), 0));
        let decoded = Block::decode(&filled).unwrap(); // ok: test code
        assert_eq!(decoded.parents.as_ref(), &parents);

        assert!(
            fill_parents(&block(1, &[], 0), &parents).is_err(),
            "has parents"
        );
        for p in prefixes(&[2, 0, 0, 0, 0, 0, 0, 0, 0]) {
            assert!(fill_parents(p, &parents).is_err(), "{} bytes", p.len());
        }
        assert!(fill_parents(&[2, 0, 0, 0, 0, 0, 0, 0, 0, 0], &parents).is_ok());
        let too_many = vec![[0u8; 32]; 256];
        assert!(fill_parents(&parentless, &too_many).is_err());
    }
}
