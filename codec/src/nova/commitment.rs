//! Slot commitments (TIP-46 §slot commitment) and their ids.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::hash::blake2b256;
use crate::nova::json::u64_str;
use crate::nova::transaction::with_slot;
use crate::types::{Fixed, Hash32};
use crate::wire::{Codec, Reader};

/// A slot commitment (85 bytes on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Commitment<'a> {
    /// Protocol version.
    pub protocol_version: u8,
    /// Committed slot.
    pub slot: u32,
    /// Previous commitment id.
    pub previous_commitment_id: Fixed<'a, 36>,
    /// Roots id.
    pub roots_id: Hash32<'a>,
    /// Cumulative weight.
    #[serde(with = "u64_str")]
    pub cumulative_weight: u64,
    /// Reference mana cost.
    #[serde(with = "u64_str")]
    pub reference_mana_cost: u64,
}

impl<'a> Codec<'a> for Commitment<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            protocol_version: r.u8()?,
            slot: r.u32()?,
            previous_commitment_id: Fixed::borrowed(r.array()?),
            roots_id: Hash32::borrowed(r.array()?),
            cumulative_weight: r.u64()?,
            reference_mana_cost: r.u64()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(self.protocol_version);
        out.extend_from_slice(&self.slot.to_le_bytes());
        out.extend_from_slice(self.previous_commitment_id.as_array());
        out.extend_from_slice(self.roots_id.as_array());
        out.extend_from_slice(&self.cumulative_weight.to_le_bytes());
        out.extend_from_slice(&self.reference_mana_cost.to_le_bytes());
        Ok(())
    }
}

impl Commitment<'_> {
    /// Commitment id: `BLAKE2b-256(bytes) || slot`.
    ///
    /// # Errors
    /// As [`Codec::encode`].
    pub fn id(&self) -> Result<[u8; 36]> {
        Ok(with_slot(blake2b256(&self.to_bytes()?), self.slot))
    }

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Commitment<'static> {
        Commitment {
            protocol_version: self.protocol_version,
            slot: self.slot,
            previous_commitment_id: self.previous_commitment_id.into_owned(),
            roots_id: self.roots_id.into_owned(),
            cumulative_weight: self.cumulative_weight,
            reference_mana_cost: self.reference_mana_cost,
        }
    }
}
