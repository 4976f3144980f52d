//! The genesis ledger: protocol parameters, solid entry points and the
//! outputs the ledger starts from (a JSON file, or the embedded dev genesis).

use serde::Deserialize;

use ledger_codec::stardust::{payload::validate_output, Output, ProtocolParameters};
use ledger_codec::types::{Fixed, Hash32};
use ledger_codec::Codec;

use crate::error::{EngineError, GenesisError, GenesisOutputError};

/// The embedded dev genesis: the whole token supply on address 0 of the
/// public test mnemonic `abandon ×23 art` (see the README).
pub const DEV_GENESIS_JSON: &str = include_str!("dev-genesis.json");

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GenesisJson {
    protocol_parameters: ProtocolParameters,
    milestone_index: u32,
    #[serde(default)]
    milestone_timestamp: u32,
    solid_entry_points: Vec<Hash32<'static>>,
    outputs: Vec<GenesisOutputJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GenesisOutputJson {
    output_id: Fixed<'static, 34>,
    output: Output<'static>,
    #[serde(default)]
    block_id: Option<Hash32<'static>>,
}

/// One genesis output; its bytes are in [`Genesis::blob`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenesisOutput {
    /// Output id (transaction id ‖ index).
    pub output_id: [u8; 34],
    /// Block id from the file (zero when absent).
    pub block_id: [u8; 32],
    /// Offset of the serialized output in the blob.
    pub offset: u32,
    /// Length of the serialized output.
    pub len: u32,
    /// Milestone that booked it (the genesis index, or the index a snapshot names).
    pub booked_index: u32,
    /// That milestone's timestamp.
    pub booked_timestamp: u32,
}

/// A parsed and validated genesis.
#[derive(Debug, Clone)]
pub struct Genesis {
    /// v2 protocol parameters of the network.
    pub params: ProtocolParameters,
    /// Ledger index the genesis outputs are booked at.
    pub milestone_index: u32,
    /// Timestamp of that index.
    pub milestone_timestamp: u32,
    /// Id of the milestone at that index: zero for a genesis document, the target milestone's
    /// for a snapshot (the next milestone names it as its previous one).
    pub milestone_id: [u8; 32],
    /// The unspent treasury output (milestone id, amount): zero and 0 when there is none.
    pub treasury: ([u8; 32], u64),
    /// Blocks treated as solid and confirmed at the genesis index.
    pub solid_entry_points: Vec<[u8; 32]>,
    /// The outputs.
    pub outputs: Vec<GenesisOutput>,
    /// Serialized outputs, back to back.
    pub blob: Vec<u8>,
}

impl Genesis {
    /// The embedded dev genesis.
    pub fn dev() -> Self {
        // The embedded file is tested; failing here would be a build defect.
        Self::from_json(DEV_GENESIS_JSON).unwrap_or_else(|e| panic!("embedded dev genesis: {e}"))
    }

    /// Parses and validates a genesis JSON document.
    ///
    /// # Errors
    /// [`EngineError::Genesis`] naming what is wrong ([`GenesisError`]).
    pub fn from_json(text: &str) -> Result<Self, EngineError> {
        let g: GenesisJson = serde_json::from_str(text).map_err(GenesisError::Json)?;
        if g.solid_entry_points.is_empty() {
            return Err(GenesisError::NoSolidEntryPoints.into());
        }
        let mut blob = Vec::new();
        let mut outputs = Vec::with_capacity(g.outputs.len());
        let mut total: u64 = 0;
        let mut seen = std::collections::HashSet::new();
        for (i, o) in g.outputs.iter().enumerate() {
            let at = |problem| GenesisError::Output { index: i, problem };
            let output_id = o.output_id.to_array();
            if !seen.insert(output_id) {
                return Err(at(GenesisOutputError::DuplicateId).into());
            }
            let index = ledger_codec::stardust::OutputId::from_array(&output_id).index;
            if index > ledger_codec::stardust::ids::MAX_OUTPUT_INDEX {
                return Err(at(GenesisOutputError::IndexTooHigh).into());
            }
            let bytes = o
                .output
                .to_bytes()
                .map_err(|e| at(GenesisOutputError::Encode(e)))?;
            // Re-read the bytes: JSON input gets the same syntax rules as the wire.
            let output = Output::decode(&bytes).map_err(|e| at(GenesisOutputError::Decode(e)))?;
            validate_output(&output, &g.protocol_parameters)
                .map_err(|e| at(GenesisOutputError::Invalid(e)))?;
            total = total
                .checked_add(output.amount())
                .filter(|t| *t <= g.protocol_parameters.token_supply)
                .ok_or_else(|| at(GenesisOutputError::ExceedsSupply))?;
            let offset =
                u32::try_from(blob.len()).map_err(|_| at(GenesisOutputError::GenesisTooLarge))?;
            let len =
                u32::try_from(bytes.len()).map_err(|_| at(GenesisOutputError::OutputTooLarge))?;
            blob.extend_from_slice(&bytes);
            outputs.push(GenesisOutput {
                output_id,
                block_id: o.block_id.as_ref().map_or([0; 32], Hash32::to_array),
                offset,
                len,
                booked_index: g.milestone_index,
                booked_timestamp: g.milestone_timestamp,
            });
        }
        Ok(Self {
            params: g.protocol_parameters,
            milestone_index: g.milestone_index,
            milestone_timestamp: g.milestone_timestamp,
            milestone_id: [0; 32],
            treasury: ([0; 32], 0),
            solid_entry_points: g.solid_entry_points.iter().map(Hash32::to_array).collect(),
            outputs,
            blob,
        })
    }

    /// The ledger a TIP-35 snapshot describes (files loaded by [`crate::snapshot::load`]): its
    /// unspent outputs with their booking metadata, treasury, solid entry points and target
    /// milestone, at its ledger index. (`load` checked the outputs and the supply.)
    ///
    /// # Errors
    /// [`GenesisError::Output`] for an output that does not fit the blob's 32-bit offsets.
    pub fn from_snapshot(s: &crate::snapshot::LoadedSnapshot) -> Result<Self, EngineError> {
        let mut blob = Vec::new();
        let mut outputs = Vec::with_capacity(s.unspent.len());
        for (i, o) in s.unspent.iter().enumerate() {
            let at = |problem| GenesisError::Output { index: i, problem };
            let offset =
                u32::try_from(blob.len()).map_err(|_| at(GenesisOutputError::GenesisTooLarge))?;
            let len = u32::try_from(o.output.len())
                .map_err(|_| at(GenesisOutputError::OutputTooLarge))?;
            blob.extend_from_slice(&o.output);
            outputs.push(GenesisOutput {
                output_id: o.output_id,
                block_id: o.block_id,
                offset,
                len,
                booked_index: o.booked_index,
                booked_timestamp: o.booked_timestamp,
            });
        }
        let solid_entry_points = match s.seps.is_empty() {
            true => return Err(GenesisError::NoSolidEntryPoints.into()),
            false => s.seps.clone(),
        };
        Ok(Self {
            params: s.parameters.clone(),
            milestone_index: s.ledger_index,
            milestone_timestamp: s.target_timestamp,
            milestone_id: s.target_milestone_id,
            treasury: (s.treasury.milestone_id, s.treasury.amount),
            solid_entry_points,
            outputs,
            blob,
        })
    }

    /// The serialized bytes of genesis output `o`.
    pub fn output_bytes(&self, o: &GenesisOutput) -> &[u8] {
        self.blob
            .get(o.offset as usize..(o.offset as usize).saturating_add(o.len as usize))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_genesis_puts_the_supply_on_the_test_mnemonic_address() {
        let g = Genesis::dev();
        assert_eq!(g.outputs.len(), 1);
        let o = Output::decode(g.output_bytes(&g.outputs[0])).unwrap();
        assert_eq!(o.amount(), g.params.token_supply);
        let json = serde_json::to_string(&o).unwrap();
        assert!(json.contains("0xd18f653d669d2267974caac6ff6254effd5e6c0eeebe3e25944193fbfcafb9c0"));
    }

    #[test]
    fn rejects_outputs_above_the_token_supply() {
        let text = DEV_GENESIS_JSON.replace(
            "\"amount\": \"1813620509061365\"",
            "\"amount\": \"1813620509061366\"",
        );
        let err = Genesis::from_json(&text).unwrap_err();
        assert!(
            matches!(
                err,
                EngineError::Genesis(GenesisError::Output {
                    index: 0,
                    problem: GenesisOutputError::Invalid(_)
                })
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "genesis: outputs[0]: amount: amount 1813620509061366 exceeds the token supply"
        );
    }

    #[test]
    fn rejects_unknown_fields_and_bad_json() {
        let err = Genesis::from_json("{").unwrap_err();
        assert!(
            matches!(err, EngineError::Genesis(GenesisError::Json(_))),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .starts_with("genesis: invalid genesis JSON: "),
            "{err}"
        );
        let text =
            DEV_GENESIS_JSON.replace("\"milestoneIndex\"", "\"bogus\": 1, \"milestoneIndex\"");
        assert!(Genesis::from_json(&text).is_err());
    }
}
