//! The records of a TIP-35 version 2 snapshot file as Hornet writes them
//! (docs/snapshots-pruning.md §1; engine/FORMAT-snapshot.md): the two headers, output and
//! consumed records, milestone diffs, and their exact byte encodings. All integers are
//! little-endian.

use ledger_codec::{
    stardust::{Milestone, MilestoneOption, Output, ProtocolParameters},
    Codec,
};

/// The only supported file format version (byte 0).
pub const FORMAT_VERSION: u8 = 2;
/// Type byte of a full snapshot file.
pub const TYPE_FULL: u8 = 0;
/// Type byte of a delta snapshot file.
pub const TYPE_DELTA: u8 = 1;
/// Length of a delta header.
pub const DELTA_HEADER_LEN: u64 = 56;
/// Fixed part of a full header; the protocol parameters add their length P (= 114 + P).
pub const FULL_HEADER_FIXED_LEN: u64 = 114;
/// Fixed part of an output record (id, block id, booked index and timestamp, length).
pub const OUTPUT_RECORD_FIXED_LEN: u64 = 78;
/// Fixed part of a consumed record (an output record and the spending transaction id).
pub const SPENT_RECORD_FIXED_LEN: u64 = 110;
/// Largest serialized output or milestone payload accepted: a v2 block is at most 32 KiB
/// (TIP-24), and neither can be larger than the block carrying it.
pub const MAX_OBJECT_LEN: u32 = 32 * 1024;
/// Offset of a delta header's SEP File Offset field, followed by the Milestone Diffs Count and
/// SEPs Count fields: the 14 bytes the writer patches (docs/snapshots-pruning.md §1.3).
pub(crate) const DELTA_SEP_OFFSET_AT: u64 = 42;
/// Milestone option type of protocol parameters (TIP-29).
const PARAMS_OPTION_TYPE: u8 = 1;

/// The unspent treasury output: the milestone that created it and its amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Treasury {
    /// Id of the milestone whose receipt created the output (zero if none).
    pub milestone_id: [u8; 32],
    /// Tokens in the treasury.
    pub amount: u64,
}

/// A protocol parameters milestone option (TIP-29 type 1) as the full header carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolParametersOption {
    /// Milestone index from which the parameters apply.
    pub activation_index: u32,
    /// Protocol version from then on.
    pub protocol_version: u8,
    /// Serialized protocol parameters.
    pub params: Vec<u8>,
}

impl ProtocolParametersOption {
    /// The carried parameters, decoded.
    ///
    /// # Errors
    /// Bytes that are not protocol parameters.
    pub fn parameters(&self) -> Result<ProtocolParameters, ledger_codec::Error> {
        ProtocolParameters::decode(&self.params)
    }

    /// The option's wire bytes: type 1 ‖ u32 activation index ‖ u8 version ‖ u16 P ‖ params.
    /// Hornet hashes exactly these (`ActiveProtocolParameterMilestoneOptionsHash`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + self.params.len());
        out.push(PARAMS_OPTION_TYPE);
        out.extend_from_slice(&self.activation_index.to_le_bytes());
        out.push(self.protocol_version);
        out.extend_from_slice(&params_len(&self.params).to_le_bytes());
        out.extend_from_slice(&self.params);
        out
    }

    /// The option carried by a milestone payload option, if it is one.
    pub fn from_milestone_option(o: &MilestoneOption<'_>) -> Option<Self> {
        match o {
            MilestoneOption::ProtocolParams(p) => Some(Self {
                activation_index: p.target_milestone_index,
                protocol_version: p.protocol_version,
                params: p.params.as_slice().to_vec(),
            }),
            MilestoneOption::Receipt(_) => None,
        }
    }
}

/// The u16 length of serialized parameters. Longer parameters cannot be written and are never
/// built: a writer refuses them before this is reached ([`FullHeader::to_bytes`]).
fn params_len(params: &[u8]) -> u16 {
    u16::try_from(params.len()).unwrap_or(u16::MAX)
}

/// Longest serialized protocol parameters a full header can carry (its option length is u16
/// and counts 8 bytes besides the parameters).
pub const MAX_PARAMS_LEN: usize = u16::MAX as usize - 8;

/// The header of a full snapshot file (docs/snapshots-pruning.md §1.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullHeader {
    /// Genesis milestone index (the first milestone is genesis + 1).
    pub genesis_milestone_index: u32,
    /// Target milestone index: the ledger state after import.
    pub target_milestone_index: u32,
    /// Target milestone timestamp (unix seconds).
    pub target_milestone_timestamp: u32,
    /// Target milestone id: the link a delta file names.
    pub target_milestone_id: [u8; 32],
    /// Index of the UTXO set in the file (≥ target; the diffs above target roll it back).
    pub ledger_milestone_index: u32,
    /// The unspent treasury at the ledger index.
    pub treasury: Treasury,
    /// The protocol parameters option active at the ledger index.
    pub protocol_parameters: ProtocolParametersOption,
    /// Number of output records.
    pub output_count: u64,
    /// Number of milestone diffs.
    pub diff_count: u32,
    /// Number of solid entry points.
    pub sep_count: u16,
}

impl FullHeader {
    /// Header length: 114 + P.
    pub fn encoded_len(&self) -> u64 {
        FULL_HEADER_FIXED_LEN + self.protocol_parameters.params.len() as u64
    }

    /// Offset of the Outputs Count field (the counts the writer patches follow it).
    pub(crate) fn counts_offset(&self) -> u64 {
        self.encoded_len() - 14
    }

    /// The header bytes.
    ///
    /// # Errors
    /// Parameters longer than [`MAX_PARAMS_LEN`] (no u16 length can say so).
    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        let p = &self.protocol_parameters;
        if p.params.len() > MAX_PARAMS_LEN {
            return Err(format!(
                "protocol parameters of {} bytes: at most {MAX_PARAMS_LEN} fit the header",
                p.params.len()
            ));
        }
        let mut out = Vec::with_capacity(self.encoded_len() as usize);
        out.extend_from_slice(&[FORMAT_VERSION, TYPE_FULL]);
        out.extend_from_slice(&self.genesis_milestone_index.to_le_bytes());
        out.extend_from_slice(&self.target_milestone_index.to_le_bytes());
        out.extend_from_slice(&self.target_milestone_timestamp.to_le_bytes());
        out.extend_from_slice(&self.target_milestone_id);
        out.extend_from_slice(&self.ledger_milestone_index.to_le_bytes());
        out.extend_from_slice(&self.treasury.milestone_id);
        out.extend_from_slice(&self.treasury.amount.to_le_bytes());
        let option = p.to_bytes();
        out.extend_from_slice(&params_len(&option).to_le_bytes());
        out.extend_from_slice(&option);
        out.extend_from_slice(&self.output_count.to_le_bytes());
        out.extend_from_slice(&self.diff_count.to_le_bytes());
        out.extend_from_slice(&self.sep_count.to_le_bytes());
        Ok(out)
    }
}

/// The 56-byte header of a delta snapshot file (docs/snapshots-pruning.md §1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeltaHeader {
    /// Target milestone index (the ledger state after import).
    pub target_milestone_index: u32,
    /// Target milestone timestamp (unix seconds).
    pub target_milestone_timestamp: u32,
    /// The full file's target milestone id this delta continues.
    pub full_snapshot_target_milestone_id: [u8; 32],
    /// Absolute offset of the first solid entry point (Hornet: int64; TIP-35: uint64).
    pub sep_file_offset: i64,
    /// Number of milestone diffs.
    pub diff_count: u32,
    /// Number of solid entry points.
    pub sep_count: u16,
}

impl DeltaHeader {
    /// The header bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(DELTA_HEADER_LEN as usize);
        out.extend_from_slice(&[FORMAT_VERSION, TYPE_DELTA]);
        out.extend_from_slice(&self.target_milestone_index.to_le_bytes());
        out.extend_from_slice(&self.target_milestone_timestamp.to_le_bytes());
        out.extend_from_slice(&self.full_snapshot_target_milestone_id);
        out.extend_from_slice(&self.sep_file_offset.to_le_bytes());
        out.extend_from_slice(&self.diff_count.to_le_bytes());
        out.extend_from_slice(&self.sep_count.to_le_bytes());
        out
    }
}

/// An output record (docs/snapshots-pruning.md §1.4; Hornet `utxo.Output.SnapshotBytes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotOutput {
    /// Output id: transaction id ‖ u16 LE index.
    pub output_id: [u8; 34],
    /// Block that booked it (zero for genesis outputs).
    pub block_id: [u8; 32],
    /// Milestone index that booked it.
    pub booked_index: u32,
    /// Milestone timestamp that booked it.
    pub booked_timestamp: u32,
    /// The serialized output as on the wire (its type byte first).
    pub output: Vec<u8>,
}

impl SnapshotOutput {
    /// The record's length: 78 + output length.
    pub fn record_len(&self) -> u64 {
        OUTPUT_RECORD_FIXED_LEN + self.output.len() as u64
    }

    /// Appends the record bytes (also what Hornet's ledger state hash covers, §6.3).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.output_id);
        out.extend_from_slice(&self.block_id);
        out.extend_from_slice(&self.booked_index.to_le_bytes());
        out.extend_from_slice(&self.booked_timestamp.to_le_bytes());
        let len = u32::try_from(self.output.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&self.output);
    }

    /// The output, decoded with the syntactic rules (TIP-18).
    ///
    /// # Errors
    /// Bytes that are not a valid output.
    pub fn decode(&self) -> Result<Output<'_>, ledger_codec::Error> {
        Output::decode(&self.output)
    }

    /// The output decoded and checked against `params` (amount within the supply, storage
    /// deposit, storage deposit return), as Hornet deserializes snapshot outputs with
    /// validation (docs/snapshots-pruning.md §1.4). A treasury output (type 2) is refused: the
    /// treasury is carried apart from the ledger's outputs.
    ///
    /// # Errors
    /// The broken rule.
    pub fn validated(&self, params: &ProtocolParameters) -> Result<Output<'_>, String> {
        let output = self.decode().map_err(|e| e.to_string())?;
        if let Output::Treasury(_) = output {
            return Err("a treasury output (type 2) is not a ledger output".into());
        }
        ledger_codec::stardust::payload::validate_output(&output, params)
            .map_err(|e| e.to_string())?;
        Ok(output)
    }

    /// The output's amount, or `None` if the bytes are not an output.
    pub fn amount(&self) -> Option<u64> {
        self.decode().ok().map(|o| o.amount())
    }
}

/// A consumed record: an output and the transaction that spent it (§1.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSpent {
    /// The spent output.
    pub output: SnapshotOutput,
    /// Id of the spending transaction.
    pub spent_by: [u8; 32],
}

impl SnapshotSpent {
    /// The record's length: 110 + output length.
    pub fn record_len(&self) -> u64 {
        self.output.record_len() + 32
    }

    /// Appends the record bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.output.encode(out);
        out.extend_from_slice(&self.spent_by);
    }
}

/// A milestone diff (§1.6): the milestone payload, the treasury output its receipt spent, and
/// the outputs it created and consumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MilestoneDiff {
    /// The whole milestone payload (u32 type 7 … signatures).
    pub milestone_payload: Vec<u8>,
    /// The treasury output the payload's receipt spent: present exactly when the payload
    /// carries a receipt option.
    pub treasury_input: Option<Treasury>,
    /// Created outputs, in file order (Hornet's node writes them sorted by output id, as its
    /// store returns them; its test fixtures do not).
    pub created: Vec<SnapshotOutput>,
    /// Consumed outputs, in file order.
    pub consumed: Vec<SnapshotSpent>,
}

impl MilestoneDiff {
    /// The milestone payload, decoded.
    ///
    /// # Errors
    /// A payload that is not a valid milestone.
    pub fn milestone(&self) -> Result<Milestone<'_>, ledger_codec::Error> {
        Milestone::decode(&self.milestone_payload)
    }

    /// The milestone index.
    ///
    /// # Errors
    /// As [`MilestoneDiff::milestone`].
    pub fn index(&self) -> Result<u32, ledger_codec::Error> {
        Ok(self.milestone()?.index)
    }

    /// The milestone timestamp.
    ///
    /// # Errors
    /// As [`MilestoneDiff::milestone`].
    pub fn timestamp(&self) -> Result<u32, ledger_codec::Error> {
        Ok(self.milestone()?.timestamp)
    }

    /// The milestone id.
    ///
    /// # Errors
    /// As [`MilestoneDiff::milestone`].
    pub fn milestone_id(&self) -> Result<[u8; 32], ledger_codec::Error> {
        self.milestone()?.id()
    }

    /// The protocol parameters options the milestone carries.
    ///
    /// # Errors
    /// As [`MilestoneDiff::milestone`].
    pub fn protocol_parameters_options(
        &self,
    ) -> Result<Vec<ProtocolParametersOption>, ledger_codec::Error> {
        Ok(self
            .milestone()?
            .options
            .iter()
            .filter_map(ProtocolParametersOption::from_milestone_option)
            .collect())
    }

    /// The treasury output the milestone's receipt creates: (this milestone's id, the receipt
    /// transaction's output amount); `None` without a receipt (Hornet
    /// `MilestoneDiff.TreasuryOutput`).
    ///
    /// # Errors
    /// As [`MilestoneDiff::milestone`].
    pub fn new_treasury(&self) -> Result<Option<Treasury>, ledger_codec::Error> {
        let milestone = self.milestone()?;
        let Some(receipt) = milestone.receipt() else {
            return Ok(None);
        };
        Ok(Some(Treasury {
            milestone_id: milestone.id()?,
            amount: receipt.transaction.output.amount,
        }))
    }

    /// The record's length, its own length field included.
    pub fn record_len(&self) -> u64 {
        let outputs: u64 = self.created.iter().map(SnapshotOutput::record_len).sum();
        let spents: u64 = self.consumed.iter().map(SnapshotSpent::record_len).sum();
        let treasury = if self.treasury_input.is_some() { 40 } else { 0 };
        12 + self.milestone_payload.len() as u64 + treasury + 4 + outputs + spents
    }

    /// The record bytes: u32 record length (itself included, as Hornet writes it) ‖ u32
    /// payload length ‖ payload ‖ [treasury input] ‖ created ‖ consumed, each list in the
    /// order given (Hornet `MilestoneDiff.MarshalBinary`); a node passes them sorted by output
    /// id.
    ///
    /// # Errors
    /// A record, payload or list too long for its u32 length.
    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        let total = u32::try_from(self.record_len())
            .map_err(|_| format!("milestone diff of {} bytes", self.record_len()))?;
        let count = |n: usize, what: &str| {
            u32::try_from(n).map_err(|_| format!("{n} {what} outputs in one milestone diff"))
        };
        let mut out = Vec::with_capacity(total as usize);
        out.extend_from_slice(&total.to_le_bytes());
        out.extend_from_slice(&count(self.milestone_payload.len(), "payload")?.to_le_bytes());
        out.extend_from_slice(&self.milestone_payload);
        if let Some(t) = &self.treasury_input {
            out.extend_from_slice(&t.milestone_id);
            out.extend_from_slice(&t.amount.to_le_bytes());
        }
        out.extend_from_slice(&count(self.created.len(), "created")?.to_le_bytes());
        for o in &self.created {
            o.encode(&mut out);
        }
        out.extend_from_slice(&count(self.consumed.len(), "consumed")?.to_le_bytes());
        for s in &self.consumed {
            s.encode(&mut out);
        }
        Ok(out)
    }
}
