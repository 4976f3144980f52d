//! Slot commitments (TIP-46 §slot commitment) and their ids.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::hash::blake2b256;
use crate::nova::json::u64_str;
use crate::nova::transaction::with_slot;
use crate::types::{Fixed, Hash32};
use crate::wire::{fields_codec, Codec};

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

fields_codec!(Commitment<'a> { protocol_version: "protocolVersion", slot: "slot", previous_commitment_id: "previousCommitmentId", roots_id: "rootsId", cumulative_weight: "cumulativeWeight", reference_mana_cost: "referenceManaCost" });

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
