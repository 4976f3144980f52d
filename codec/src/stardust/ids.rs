//! Id derivations (TIP-18, 20, 22, 29) and the TIP-4 Merkle tree hash.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::output::Output;
use crate::error::{Error, Result};
use crate::hash::{blake2b256, Blake2b256};
use crate::types::{parse_hex_array, to_hex};
use crate::wire::{Codec, Reader};

/// Largest output index in a transaction.
pub const MAX_OUTPUT_INDEX: u16 = 127;

/// An output id: transaction id ‖ output index (u16 LE, 0..=127). 34 bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OutputId {
    /// The creating transaction (or, for migrated funds, the milestone).
    pub transaction_id: [u8; 32],
    /// Index of the output in the transaction.
    pub index: u16,
}

impl OutputId {
    /// An output id; `index` must be ≤ 127.
    ///
    /// # Errors
    /// Index out of range.
    pub fn new(transaction_id: [u8; 32], index: u16) -> Result<Self> {
        if index > MAX_OUTPUT_INDEX {
            return Err(Error::invalid(format!(
                "output index {index} out of range 0..=127"
            )));
        }
        Ok(Self {
            transaction_id,
            index,
        })
    }

    /// The output id of its 34 bytes, as [`OutputId::to_array`] writes them (the index is
    /// not checked: [`OutputId::decode`](Codec::decode) does that).
    pub fn from_array(a: &[u8; 34]) -> Self {
        let mut r = Reader::new(a);
        let (transaction_id, index) = match (r.array::<32>(), r.u16()) {
            (Ok(t), Ok(i)) => (*t, i),
            // 34 bytes always hold both.
            _ => ([0; 32], 0),
        };
        Self {
            transaction_id,
            index,
        }
    }

    /// The 34 bytes.
    pub fn to_array(&self) -> [u8; 34] {
        let mut a = [0u8; 34];
        a[..32].copy_from_slice(&self.transaction_id);
        a[32..].copy_from_slice(&self.index.to_le_bytes());
        a
    }
}

impl fmt::Debug for OutputId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_hex(&self.to_array()))
    }
}

impl fmt::Display for OutputId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_hex(&self.to_array()))
    }
}

impl<'a> Codec<'a> for OutputId {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let tx = *r.array::<32>()?;
        let index = r.u16()?;
        Self::new(tx, index)
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.to_array());
        Ok(())
    }
}

impl Serialize for OutputId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&to_hex(&self.to_array()))
    }
}

impl<'de> Deserialize<'de> for OutputId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        let a = parse_hex_array::<34>(&s).map_err(serde::de::Error::custom)?;
        Self::decode(&a).map_err(serde::de::Error::custom)
    }
}

pub use crate::hash::network_id;

/// Alias id of the alias created by output `output_id`: BLAKE2b-256(output id).
pub fn alias_id(output_id: &OutputId) -> [u8; 32] {
    blake2b256(&output_id.to_array())
}

/// NFT id of the NFT created by output `output_id`: BLAKE2b-256(output id).
pub fn nft_id(output_id: &OutputId) -> [u8; 32] {
    blake2b256(&output_id.to_array())
}

/// Foundry id (= token id): 0x08 ‖ alias id ‖ serial u32 LE ‖ token scheme type.
pub fn foundry_id(alias_id: &[u8; 32], serial_number: u32, token_scheme_type: u8) -> [u8; 38] {
    let mut a = [0u8; 38];
    a[0] = super::Address::ALIAS;
    a[1..33].copy_from_slice(alias_id);
    a[33..37].copy_from_slice(&serial_number.to_le_bytes());
    a[37] = token_scheme_type;
    a
}

/// Inputs commitment: BLAKE2b-256 over the BLAKE2b-256 of each consumed
/// output's bytes, in input order.
///
/// # Errors
/// As [`Codec::encode`], for an output with no wire form.
pub fn inputs_commitment<'o, 'a: 'o>(
    consumed: impl IntoIterator<Item = &'o Output<'a>>,
) -> Result<[u8; 32]> {
    let mut buf = Vec::with_capacity(256);
    let hashes = consumed
        .into_iter()
        .map(|o| {
            buf.clear();
            o.encode(&mut buf)?;
            Ok(blake2b256(&buf))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(commitment_of_hashes(hashes))
}

/// [`inputs_commitment`] from the consumed outputs' serialized bytes, as stored (nothing is
/// encoded again).
pub fn inputs_commitment_of_bytes<'b>(consumed: impl IntoIterator<Item = &'b [u8]>) -> [u8; 32] {
    commitment_of_hashes(consumed.into_iter().map(blake2b256))
}

/// The commitment rule, once: BLAKE2b-256 over the consumed outputs' hashes, in input order.
fn commitment_of_hashes(hashes: impl IntoIterator<Item = [u8; 32]>) -> [u8; 32] {
    use blake2::Digest;
    let mut outer = Blake2b256::new();
    for h in hashes {
        outer.update(h);
    }
    outer.finalize().into()
}

/// TIP-4 Merkle tree hash of `leaves` (block ids in white-flag order).
pub fn merkle_root(leaves: &[[u8; 32]]) -> [u8; 32] {
    crate::merkle::root(leaves)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_id_arrays_round_trip() {
        for index in [0, 1, 127, 128, u16::MAX] {
            let id = OutputId {
                transaction_id: [7; 32],
                index,
            };
            assert_eq!(OutputId::from_array(&id.to_array()), id);
        }
        let mut bytes = [1u8; 34];
        bytes[32..].copy_from_slice(&300u16.to_le_bytes());
        assert_eq!(OutputId::from_array(&bytes).index, 300, "not range-checked");
        assert!(
            OutputId::decode(&bytes).is_err(),
            "decoding checks the range"
        );
    }
}
