//! Importing a full snapshot file and an optional delta into one ledger state, with Hornet's
//! rules (docs/snapshots-pruning.md §1.7, §3.2-3.3): the full file's diffs above its target
//! rolled back, every diff scanned for protocol parameters options, the delta chained to the
//! full file and its diffs applied in ascending order, the solid entry points of the last
//! file, and the checks that the supply adds up and the ledger ends at the last target.
//!
//! Only the state and the diffs to roll back or apply are held: the full file's diffs at or
//! below its target are read one at a time and dropped. Nothing is returned unless every
//! check passed.

use std::{
    collections::{btree_map::Entry, BTreeMap, BTreeSet},
    fs::File,
    io::{BufReader, Read},
    path::Path,
};

use ledger_codec::stardust::ProtocolParameters;

use super::{
    format::{
        DeltaHeader, FullHeader, MilestoneDiff, ProtocolParametersOption, SnapshotOutput, Treasury,
    },
    read::{DeltaReader, FullReader},
    SnapshotError,
};

const FULL: &str = "full snapshot";
const DELTA: &str = "delta snapshot";

/// The ledger state a full snapshot file (and delta) describe, ready to seed a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedSnapshot {
    /// Network name of the active protocol parameters.
    pub network_name: String,
    /// Bech32 HRP of the active protocol parameters.
    pub bech32_hrp: String,
    /// Token supply of the active protocol parameters (= Σ unspent + treasury).
    pub token_supply: u64,
    /// The full file's genesis milestone index.
    pub genesis_milestone_index: u32,
    /// The last file's target milestone index (= ledger index, snapshot and pruning index).
    pub target_index: u32,
    /// The last file's target milestone timestamp.
    pub target_timestamp: u32,
    /// The target milestone's id: the full file's, or with a delta, the id of the delta's
    /// last milestone (the full file's if the delta has no diff).
    pub target_milestone_id: [u8; 32],
    /// Index of the ledger state (always `target_index` after a successful load).
    pub ledger_index: u32,
    /// The unspent treasury.
    pub treasury: Treasury,
    /// The protocol parameters active at the ledger index, decoded.
    pub parameters: ProtocolParameters,
    /// The protocol parameters options: the active one, then the pending ones (activation
    /// index above the ledger index), ascending by activation index.
    pub protocol_parameters: Vec<ProtocolParametersOption>,
    /// The unspent outputs, sorted by output id.
    pub unspent: Vec<SnapshotOutput>,
    /// The last file's solid entry points, sorted and without duplicates (a set).
    pub seps: Vec<[u8; 32]>,
    /// The delta's diffs that were applied, ascending.
    pub delta_diffs: Vec<MilestoneDiff>,
    /// The full file's header.
    pub full_header: FullHeader,
    /// The delta file's header, if one was loaded.
    pub delta_header: Option<DeltaHeader>,
}

/// Loads `full` and, if given, `delta`; with `network`, the full file's network name must be
/// it.
///
/// # Errors
/// A file that cannot be opened, is malformed, is for another network, does not chain, or
/// describes an inconsistent ledger.
pub fn load(
    full: &Path,
    delta: Option<&Path>,
    network: Option<&str>,
) -> Result<LoadedSnapshot, SnapshotError> {
    let open = |path: &Path| {
        File::open(path)
            .map(|f| BufReader::with_capacity(1 << 20, f))
            .map_err(|source| SnapshotError::File {
                path: path.to_owned(),
                source,
            })
    };
    let full = open(full)?;
    let delta = delta.map(open).transpose()?;
    load_from(full, delta, network)
}

/// [`load`] over readers (in-memory files for tests and fuzzing).
///
/// # Errors
/// As [`load`].
pub fn load_from<F: Read, D: Read>(
    full: F,
    delta: Option<D>,
    network: Option<&str>,
) -> Result<LoadedSnapshot, SnapshotError> {
    let mut full = FullReader::new(full)?;
    if let Some(expected) = network {
        let found = &full.parameters().network_name;
        if found != expected {
            return Err(SnapshotError::WrongNetwork {
                expected: expected.to_owned(),
                found: found.clone(),
            });
        }
    }
    let full_header = full.header().clone();
    let mut delta = delta.map(DeltaReader::new).transpose()?;
    if let Some(d) = &delta {
        let link = d.header().full_snapshot_target_milestone_id;
        if link != full_header.target_milestone_id {
            return Err(SnapshotError::NotMergeable {
                delta: link,
                full: full_header.target_milestone_id,
            });
        }
    }
    let mut state = State::from_full(&mut full)?;
    let mut loaded_delta = None;
    if let Some(reader) = delta.as_mut() {
        loaded_delta = Some(state.apply_delta(reader)?);
    }
    if let Some(d) = delta.as_mut() {
        d.finish()?;
    }
    state.into_loaded(full_header, loaded_delta)
}

/// The ledger being imported.
struct State {
    file: &'static str,
    index: u32,
    treasury: Treasury,
    unspent: BTreeMap<[u8; 34], SnapshotOutput>,
    /// Every protocol parameters option seen, by activation index.
    options: BTreeMap<u32, ProtocolParametersOption>,
    header_activation: u32,
    seps: Vec<[u8; 32]>,
}

/// What the delta file added.
struct LoadedDelta {
    header: DeltaHeader,
    diffs: Vec<MilestoneDiff>,
}

impl State {
    fn error(&self, reason: impl Into<String>) -> SnapshotError {
        SnapshotError::Ledger {
            file: self.file,
            reason: reason.into(),
        }
    }

    /// Reads the whole full file: outputs, diffs (rolling back those above the target after
    /// all options are known), SEPs, end of file.
    fn from_full<R: Read>(reader: &mut FullReader<R>) -> Result<Self, SnapshotError> {
        let header = reader.header().clone();
        let mut state = Self {
            file: FULL,
            index: header.ledger_milestone_index,
            treasury: header.treasury,
            unspent: BTreeMap::new(),
            options: BTreeMap::new(),
            header_activation: header.protocol_parameters.activation_index,
            seps: Vec::new(),
        };
        state.options.insert(
            header.protocol_parameters.activation_index,
            header.protocol_parameters.clone(),
        );
        while let Some(output) = reader.next_output()? {
            match state.unspent.entry(output.output_id) {
                Entry::Occupied(_) => {
                    return Err(state.error(format!(
                        "output 0x{} appears twice in the ledger",
                        hex::encode(output.output_id)
                    )))
                }
                Entry::Vacant(v) => {
                    v.insert(output);
                }
            }
        }
        let mut to_roll_back = Vec::new();
        while let Some(diff) = reader.next_diff()? {
            let index = state.scan_options(&diff)?;
            if index > header.target_milestone_index {
                to_roll_back.push(diff);
            }
        }
        while let Some(sep) = reader.next_sep()? {
            state.seps.push(sep);
        }
        reader.finish()?;
        for diff in &to_roll_back {
            let index = state.checked_index(diff)?;
            if index != state.index {
                return Err(state.error(format!(
                    "milestone diff {index} cannot be rolled back from ledger index {}: the \
                     diffs above the target must be ledger index, ledger index − 1, …",
                    state.index
                )));
            }
            state.validate_outputs(diff, index)?;
            state.roll_back(diff, index)?;
        }
        if state.index != header.target_milestone_index {
            return Err(state.error(format!(
                "final ledger index {} does not match the target index {} (diffs missing \
                 between them)",
                state.index, header.target_milestone_index
            )));
        }
        state.check_supply()?;
        Ok(state)
    }

    /// Reads the delta file's diffs and SEPs onto the full file's state.
    fn apply_delta<R: Read>(
        &mut self,
        reader: &mut DeltaReader<R>,
    ) -> Result<LoadedDelta, SnapshotError> {
        self.file = DELTA;
        let header = *reader.header();
        let mut diffs: Vec<MilestoneDiff> = Vec::new();
        while let Some(diff) = reader.next_diff()? {
            let index = self.scan_options(&diff)?;
            self.validate_outputs(&diff, index)?;
            if index == self.index.wrapping_add(1) {
                self.apply(&diff, index)?;
                diffs.push(diff);
            } else if index == self.index {
                // Hornet's rule (`NewMsDiffConsumer`): a diff at the ledger index is undone.
                self.roll_back(&diff, index)?;
                if diffs.last().and_then(|d| d.index().ok()) == Some(index) {
                    diffs.pop();
                }
            } else {
                return Err(self.error(format!(
                    "wrong milestone diff index {index} at ledger index {} (expected {})",
                    self.index,
                    self.index.wrapping_add(1)
                )));
            }
        }
        self.seps.clear();
        while let Some(sep) = reader.next_sep()? {
            self.seps.push(sep);
        }
        if self.index != header.target_milestone_index {
            return Err(self.error(format!(
                "final ledger index {} does not match the target index {}",
                self.index, header.target_milestone_index
            )));
        }
        self.check_supply()?;
        Ok(LoadedDelta { header, diffs })
    }

    fn checked_index(&self, diff: &MilestoneDiff) -> Result<u32, SnapshotError> {
        diff.index()
            .map_err(|e| self.error(format!("milestone payload: {e}")))
    }

    /// Records the diff's protocol parameters options and returns its index. An option for
    /// the header's activation index is the header's own (Hornet skips it); an identical
    /// repeat (a delta overlapping the full file's diffs) is ignored; a different option for
    /// an index already taken is an error.
    fn scan_options(&mut self, diff: &MilestoneDiff) -> Result<u32, SnapshotError> {
        let index = self.checked_index(diff)?;
        let options = diff
            .protocol_parameters_options()
            .map_err(|e| self.error(format!("milestone {index}: {e}")))?;
        for option in options {
            if option.activation_index == self.header_activation {
                continue;
            }
            if let Err(e) = option.parameters() {
                return Err(self.error(format!(
                    "milestone {index}: protocol parameters option for index {}: {e}",
                    option.activation_index
                )));
            }
            match self.options.entry(option.activation_index) {
                Entry::Vacant(v) => {
                    v.insert(option);
                }
                Entry::Occupied(o) if *o.get() == option => {}
                Entry::Occupied(o) => {
                    let key = *o.key();
                    return Err(self.error(format!(
                        "milestone {index}: a second, different protocol parameters option for \
                         activation index {key}"
                    )));
                }
            }
        }
        Ok(index)
    }

    /// The option active at `index`: the newest activated at or before it, else the oldest.
    fn option_at(&self, index: u32) -> Option<&ProtocolParametersOption> {
        self.options
            .range(..=index)
            .next_back()
            .or_else(|| self.options.iter().next())
            .map(|(_, o)| o)
    }

    fn parameters_at(&self, index: u32) -> Result<ProtocolParameters, SnapshotError> {
        let option = self
            .option_at(index)
            .ok_or_else(|| self.error("no protocol parameters"))?;
        option.parameters().map_err(|e| {
            self.error(format!(
                "protocol parameters for index {}: {e}",
                option.activation_index
            ))
        })
    }

    /// Checks the diff's outputs against the parameters active at its milestone (Hornet
    /// `ReadMilestoneDiff`).
    fn validate_outputs(&self, diff: &MilestoneDiff, index: u32) -> Result<(), SnapshotError> {
        let params = self.parameters_at(index)?;
        let consumed = diff.consumed.iter().map(|s| &s.output);
        for (what, output) in diff
            .created
            .iter()
            .map(|o| ("created", o))
            .chain(consumed.map(|o| ("consumed", o)))
        {
            if let Err(e) = output.validated(&params) {
                return Err(self.error(format!(
                    "milestone diff {index}: {what} output 0x{}: {e}",
                    hex::encode(output.output_id)
                )));
            }
        }
        Ok(())
    }

    fn new_treasury(
        &self,
        diff: &MilestoneDiff,
        index: u32,
    ) -> Result<Option<Treasury>, SnapshotError> {
        diff.new_treasury()
            .map_err(|e| self.error(format!("milestone {index}: {e}")))
    }

    /// Replaces the unspent treasury `from` by `to`; the diff at `index` that does it (`doing`
    /// names how) is refused when the unspent treasury is not `from`.
    fn move_treasury(
        &mut self,
        from: Treasury,
        to: Treasury,
        index: u32,
        doing: &str,
    ) -> Result<(), SnapshotError> {
        if from != self.treasury {
            return Err(self.error(format!(
                "milestone diff {index}: {doing} treasury 0x{} ({}), but the unspent treasury \
                 is 0x{} ({})",
                hex::encode(from.milestone_id),
                from.amount,
                hex::encode(self.treasury.milestone_id),
                self.treasury.amount
            )));
        }
        self.treasury = to;
        Ok(())
    }

    /// Applies a diff at ledger index + 1: created outputs added, consumed ones removed, the
    /// receipt's treasury output replacing the one it spent.
    fn apply(&mut self, diff: &MilestoneDiff, index: u32) -> Result<(), SnapshotError> {
        if let (Some(spent), Some(new)) = (diff.treasury_input, self.new_treasury(diff, index)?) {
            self.move_treasury(spent, new, index, "its receipt spends")?;
        }
        for output in &diff.created {
            self.add(output.clone(), index, "created")?;
        }
        for spent in &diff.consumed {
            self.remove(&spent.output.output_id, index, "consumed")?;
        }
        self.index = index;
        Ok(())
    }

    /// Undoes the diff at the ledger index: consumed outputs back, created ones removed, the
    /// spent treasury restored.
    fn roll_back(&mut self, diff: &MilestoneDiff, index: u32) -> Result<(), SnapshotError> {
        if let (Some(spent), Some(new)) = (diff.treasury_input, self.new_treasury(diff, index)?) {
            self.move_treasury(new, spent, index, "rolling back its receipt expects")?;
        }
        for spent in &diff.consumed {
            self.add(spent.output.clone(), index, "consumed")?;
        }
        for output in &diff.created {
            self.remove(&output.output_id, index, "created")?;
        }
        self.index = index.wrapping_sub(1);
        Ok(())
    }

    fn add(&mut self, output: SnapshotOutput, index: u32, what: &str) -> Result<(), SnapshotError> {
        let id = output.output_id;
        if let Entry::Vacant(v) = self.unspent.entry(id) {
            v.insert(output);
            return Ok(());
        }
        Err(self.error(format!(
            "milestone diff {index}: {what} output 0x{} is already unspent",
            hex::encode(id)
        )))
    }

    fn remove(&mut self, id: &[u8; 34], index: u32, what: &str) -> Result<(), SnapshotError> {
        match self.unspent.remove(id) {
            Some(_) => Ok(()),
            None => Err(self.error(format!(
                "milestone diff {index}: {what} output 0x{} is not unspent",
                hex::encode(id)
            ))),
        }
    }

    /// Σ unspent amounts + treasury = the token supply active at the ledger index (Hornet
    /// `CheckLedgerState`).
    fn check_supply(&self) -> Result<(), SnapshotError> {
        let supply = self.parameters_at(self.index)?.token_supply;
        let mut sum = u128::from(self.treasury.amount);
        for output in self.unspent.values() {
            let amount = output.amount().ok_or_else(|| {
                self.error(format!(
                    "output 0x{} does not decode",
                    hex::encode(output.output_id)
                ))
            })?;
            sum += u128::from(amount);
        }
        if sum != u128::from(supply) {
            return Err(self.error(format!(
                "the ledger holds {sum} tokens (outputs and treasury {}), the token supply is \
                 {supply}",
                self.treasury.amount
            )));
        }
        Ok(())
    }

    fn into_loaded(
        self,
        full_header: FullHeader,
        delta: Option<LoadedDelta>,
    ) -> Result<LoadedSnapshot, SnapshotError> {
        let parameters = self.parameters_at(self.index)?;
        let active = self
            .option_at(self.index)
            .map(|o| o.activation_index)
            .unwrap_or_default();
        let protocol_parameters = self
            .options
            .values()
            .filter(|o| o.activation_index >= active)
            .cloned()
            .collect();
        let (target_index, target_timestamp, target_milestone_id) = match &delta {
            Some(d) => {
                let id = match d.diffs.last() {
                    Some(last) => last
                        .milestone_id()
                        .map_err(|e| self.error(format!("milestone payload: {e}")))?,
                    None => full_header.target_milestone_id,
                };
                (
                    d.header.target_milestone_index,
                    d.header.target_milestone_timestamp,
                    id,
                )
            }
            None => (
                full_header.target_milestone_index,
                full_header.target_milestone_timestamp,
                full_header.target_milestone_id,
            ),
        };
        let seps: BTreeSet<[u8; 32]> = self.seps.into_iter().collect();
        Ok(LoadedSnapshot {
            network_name: parameters.network_name.clone(),
            bech32_hrp: parameters.bech32_hrp.clone(),
            token_supply: parameters.token_supply,
            genesis_milestone_index: full_header.genesis_milestone_index,
            target_index,
            target_timestamp,
            target_milestone_id,
            ledger_index: self.index,
            treasury: self.treasury,
            parameters,
            protocol_parameters,
            unspent: self.unspent.into_values().collect(),
            seps: seps.into_iter().collect(),
            delta_header: delta.as_ref().map(|d| d.header),
            delta_diffs: delta.map(|d| d.diffs).unwrap_or_default(),
            full_header,
        })
    }
}
