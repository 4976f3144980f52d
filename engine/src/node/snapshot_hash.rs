//! Hornet's ledger hashes of the running node's own state (docs/snapshots-pruning.md §6.3,
//! Hornet `pkg/toolset/database_hash.go`): the same object `tools snap-hash` prints for files,
//! so that a file written at ledger index L and the node at L hash alike.

use crate::snapshot::{
    ledger_state_hashes, protocol_parameters_hash, rfc3339_utc, ProtocolParametersOption, SnapHash,
    SnapshotOutput, Treasury, TreasuryJson,
};

use super::snapshot::{failed, SnapshotCreateError};
use super::*;

impl Engine {
    /// The unspent set at the confirmed milestone as snapshot records, sorted by output id.
    pub(super) fn unspent_records(
        &self,
        st: &State,
    ) -> Result<Vec<SnapshotOutput>, SnapshotCreateError> {
        let mut outputs = Vec::with_capacity(st.ledger.unspent_count());
        for r in 0..st.ledger.rows() {
            let Some(row) = u32::try_from(r).ok().and_then(|r| st.ledger.row(r)) else {
                continue;
            };
            if row.spent.is_none() {
                outputs.push(self.snapshot_output(st, &row)?);
            }
        }
        outputs.sort_unstable_by_key(|o| o.output_id);
        Ok(outputs)
    }

    /// Hornet's `snap-hash` object of the node's ledger at its confirmed milestone. The solid
    /// entry points are the genesis' (the start's) until the node pruned, then those of the
    /// pruning index (§2.6); the snapshot and pruning indexes are at least the start's.
    ///
    /// # Errors
    /// An output's bytes or a block the entry points need cannot be read.
    pub fn ledger_snap_hash(&self) -> Result<SnapHash, SnapshotCreateError> {
        let st = self.read();
        let cmi = st.ledger.ledger_index();
        let start = self.genesis.milestone_index;
        let pruning_index = self.pruning_index().max(start);
        let snapshot_index = self.snapshot_index().max(start);
        let unspent = self.unspent_records(&st)?;
        let seps = if self.pruning_index() > start {
            Self::solid_entry_points(&st, &self.log, pruning_index, cmi)?
        } else {
            self.genesis.solid_entry_points.clone()
        };
        let snapshot_time = match st.milestones.get(snapshot_index, &st.journal) {
            Some(m) => m.timestamp,
            None if snapshot_index == start => self.genesis.milestone_timestamp,
            None => return Err(failed(format!("milestone {snapshot_index} is not known"))),
        };
        drop(st);
        let treasury = Treasury {
            milestone_id: self.genesis.treasury.0,
            amount: self.genesis.treasury.1,
        };
        let (ledger, with_seps) = ledger_state_hashes(cmi, &treasury, &unspent, &seps);
        let option = ProtocolParametersOption {
            activation_index: 0,
            protocol_version: self.genesis.params.version,
            params: self.genesis.params.to_bytes().map_err(failed)?,
        };
        let supply = unspent
            .iter()
            .filter_map(SnapshotOutput::amount)
            .fold(treasury.amount, u64::saturating_add);
        let mut distinct = seps.clone();
        distinct.sort_unstable();
        distinct.dedup();
        Ok(SnapHash {
            healthy: true,
            tainted: false,
            snapshot_time: rfc3339_utc(snapshot_time),
            network_id: self.genesis.params.network_id(),
            treasury: TreasuryJson {
                milestone_id: hex32(&treasury.milestone_id),
                tokens: treasury.amount,
            },
            ledger_index: cmi,
            snapshot_index,
            pruning_index,
            utxos_count: unspent.len(),
            solid_entry_points_count: distinct.len(),
            ledger_token_supply: supply,
            ledger_state_hash: hex::encode(ledger),
            ledger_state_hash_with_solid_entry_points: hex::encode(with_seps),
            protocol_parameters_hash: hex::encode(protocol_parameters_hash(&[option], cmi)),
        })
    }
}
