//! Hornet's ledger hashes of a loaded snapshot (docs/snapshots-pruning.md §6.3; Hornet
//! `pkg/toolset/database_hash.go`, `ActiveProtocolParameterMilestoneOptionsHash` in
//! `pkg/model/storage/protocol_storage.go`), and the JSON object `tools snap-hash --json`
//! prints with them.

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{
    format::{ProtocolParametersOption, SnapshotOutput, Treasury},
    load::LoadedSnapshot,
};

/// Options activated more than this many milestones after the ledger index do not count as
/// active (Hornet `MaxProtocolParametersActivationRange`).
pub const MAX_ACTIVATION_RANGE: u32 = 30;

/// `ledgerStateHash` and `ledgerStateHashWithSolidEntryPoints`: SHA-256 over u32 LE ledger
/// index ‖ treasury milestone id ‖ u64 LE treasury amount ‖ the output records sorted by output
/// id; the second continues the same hasher over the SEP ids, sorted, duplicates dropped.
pub fn ledger_state_hashes(
    ledger_index: u32,
    treasury: &Treasury,
    unspent: &[SnapshotOutput],
    seps: &[[u8; 32]],
) -> ([u8; 32], [u8; 32]) {
    let mut hasher = Sha256::new();
    hasher.update(ledger_index.to_le_bytes());
    hasher.update(treasury.milestone_id);
    hasher.update(treasury.amount.to_le_bytes());
    let mut outputs: Vec<&SnapshotOutput> = unspent.iter().collect();
    outputs.sort_by_key(|a| a.output_id);
    outputs.dedup_by(|a, b| a.output_id == b.output_id);
    let mut record = Vec::new();
    for output in outputs {
        record.clear();
        output.encode(&mut record);
        hasher.update(&record);
    }
    let without_seps: [u8; 32] = hasher.clone().finalize().into();
    let mut sorted: Vec<&[u8; 32]> = seps.iter().collect();
    sorted.sort();
    sorted.dedup();
    for sep in sorted {
        hasher.update(sep);
    }
    (without_seps, hasher.finalize().into())
}

/// `protocolParametersHash`: SHA-256 over the wire bytes of the options active at
/// `ledger_index` (the newest activated at or before it, and those activated after it up to
/// [`MAX_ACTIVATION_RANGE`] later), ascending by activation index.
pub fn protocol_parameters_hash(
    options: &[ProtocolParametersOption],
    ledger_index: u32,
) -> [u8; 32] {
    let current = options
        .iter()
        .map(|o| o.activation_index)
        .filter(|a| *a <= ledger_index)
        .max();
    let mut active: Vec<&ProtocolParametersOption> = options
        .iter()
        .filter(|o| current.is_some_and(|c| o.activation_index >= c))
        .filter(|o| {
            u64::from(o.activation_index)
                <= u64::from(ledger_index) + u64::from(MAX_ACTIVATION_RANGE)
        })
        .collect();
    active.sort_by_key(|o| o.activation_index);
    let mut hasher = Sha256::new();
    for option in active {
        hasher.update(option.to_bytes());
    }
    hasher.finalize().into()
}

/// The treasury as `snap-hash` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreasuryJson {
    /// `0x`-prefixed milestone id.
    pub milestone_id: String,
    /// Tokens.
    pub tokens: u64,
}

/// The object `tools snap-hash` prints, with exactly Hornet's keys (§6.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapHash {
    /// Always true for files that loaded (Hornet: the stores are not corrupted).
    pub healthy: bool,
    /// Always false for files (Hornet: the stores are not tainted).
    pub tainted: bool,
    /// The target milestone timestamp, RFC 3339 in UTC.
    pub snapshot_time: String,
    /// The network id (first 8 bytes of BLAKE2b-256 of the network name, LE).
    pub network_id: u64,
    /// The unspent treasury.
    pub treasury: TreasuryJson,
    /// The ledger index.
    pub ledger_index: u32,
    /// The snapshot index (the last file's target).
    pub snapshot_index: u32,
    /// The pruning index (the last file's target).
    pub pruning_index: u32,
    /// Number of unspent outputs.
    pub utxos_count: usize,
    /// Number of distinct solid entry points.
    pub solid_entry_points_count: usize,
    /// Σ unspent amounts + treasury.
    pub ledger_token_supply: u64,
    /// Hex (no prefix), as Hornet prints it.
    pub ledger_state_hash: String,
    /// Hex (no prefix).
    pub ledger_state_hash_with_solid_entry_points: String,
    /// Hex (no prefix).
    pub protocol_parameters_hash: String,
}

impl SnapHash {
    /// The hashes and counts of a loaded snapshot.
    pub fn of(snapshot: &LoadedSnapshot) -> Self {
        let (ledger, with_seps) = ledger_state_hashes(
            snapshot.ledger_index,
            &snapshot.treasury,
            &snapshot.unspent,
            &snapshot.seps,
        );
        let outputs: u64 = snapshot
            .unspent
            .iter()
            .filter_map(SnapshotOutput::amount)
            .fold(0u64, u64::saturating_add);
        Self {
            healthy: true,
            tainted: false,
            snapshot_time: rfc3339_utc(snapshot.target_timestamp),
            network_id: snapshot.parameters.network_id(),
            treasury: TreasuryJson {
                milestone_id: format!("0x{}", hex::encode(snapshot.treasury.milestone_id)),
                tokens: snapshot.treasury.amount,
            },
            ledger_index: snapshot.ledger_index,
            snapshot_index: snapshot.target_index,
            pruning_index: snapshot.target_index,
            utxos_count: snapshot.unspent.len(),
            solid_entry_points_count: snapshot.seps.len(),
            ledger_token_supply: outputs.saturating_add(snapshot.treasury.amount),
            ledger_state_hash: hex::encode(ledger),
            ledger_state_hash_with_solid_entry_points: hex::encode(with_seps),
            protocol_parameters_hash: hex::encode(protocol_parameters_hash(
                &snapshot.protocol_parameters,
                snapshot.ledger_index,
            )),
        }
    }
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ` (civil-from-days, proleptic Gregorian calendar).
pub fn rfc3339_utc(unix: u32) -> String {
    let secs = i64::from(unix);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
