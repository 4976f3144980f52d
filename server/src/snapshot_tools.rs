//! `ledger-node tools snapshot-info` and `tools snap-hash`: TIP-35 snapshot files read with
//! the engine's strict readers (docs/snapshots-pruning.md §1, §6.3). Each tool is a function
//! from file paths to the text to print, so the binary only does I/O and exit codes.

use std::{fmt::Write as _, fs::File, io::BufReader, path::Path};

use ledger_codec::stardust::ProtocolParameters;
use ledger_engine::snapshot::{
    load, rfc3339_utc, DeltaReader, FullReader, MilestoneDiff, SnapHash, SnapshotError,
    DELTA_HEADER_LEN,
};
use serde::Serialize;

use crate::tools::ToolError;

impl From<SnapshotError> for ToolError {
    fn from(e: SnapshotError) -> Self {
        match e {
            SnapshotError::File { .. } => Self::Usage(e.to_string()),
            e => Self::Invalid(e.to_string()),
        }
    }
}

fn open(path: &Path) -> Result<(BufReader<File>, u64), ToolError> {
    let file =
        File::open(path).map_err(|e| ToolError::Usage(format!("{}: {e}", path.display())))?;
    let len = file
        .metadata()
        .map_err(|e| ToolError::Usage(format!("{}: {e}", path.display())))?
        .len();
    Ok((BufReader::with_capacity(1 << 20, file), len))
}

fn hex32(id: &[u8; 32]) -> String {
    format!("0x{}", hex::encode(id))
}

/// The treasury in a full header.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TreasuryInfo {
    milestone_id: String,
    amount: u64,
}

/// The full header's protocol parameters option.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ParametersInfo {
    activation_index: u32,
    protocol_version: u8,
    params: ProtocolParameters,
}

/// One milestone diff: its index, size and what it carries.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DiffInfo {
    index: u32,
    bytes: u64,
    created: usize,
    consumed: usize,
    receipt: bool,
    /// Activation indexes of the protocol parameters options it announces.
    protocol_parameters: Vec<u32>,
}

impl DiffInfo {
    fn of(diff: &MilestoneDiff) -> Result<Self, ToolError> {
        let invalid =
            |e: ledger_codec::Error| ToolError::Invalid(format!("milestone payload: {e}"));
        Ok(Self {
            index: diff.index().map_err(invalid)?,
            bytes: diff.record_len(),
            created: diff.created.len(),
            consumed: diff.consumed.len(),
            receipt: diff.treasury_input.is_some(),
            protocol_parameters: diff
                .protocol_parameters_options()
                .map_err(invalid)?
                .iter()
                .map(|o| o.activation_index)
                .collect(),
        })
    }
}

/// What `snapshot-info` reports of a full file.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct FullInfo {
    path: String,
    bytes: u64,
    header_bytes: u64,
    genesis_milestone_index: u32,
    target_milestone_index: u32,
    target_milestone_timestamp: u32,
    target_milestone_id: String,
    ledger_milestone_index: u32,
    treasury: TreasuryInfo,
    protocol_parameters: ParametersInfo,
    output_count: u64,
    output_bytes: u64,
    milestone_diffs: Vec<DiffInfo>,
    solid_entry_point_count: u16,
}

/// What `snapshot-info` reports of a delta file.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DeltaInfo {
    path: String,
    bytes: u64,
    target_milestone_index: u32,
    target_milestone_timestamp: u32,
    full_snapshot_target_milestone_id: String,
    /// Whether the id above is the full file's target milestone id (the chain check).
    chains_to_full: bool,
    sep_file_offset: i64,
    milestone_diffs: Vec<DiffInfo>,
    solid_entry_point_count: u16,
}

/// Both files.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotInfo {
    full: FullInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta: Option<DeltaInfo>,
}

fn full_info(path: &Path) -> Result<FullInfo, ToolError> {
    let (file, bytes) = open(path)?;
    let mut r = FullReader::new(file)?;
    let h = r.header().clone();
    let params = r.parameters().clone();
    let mut output_bytes = 0;
    while let Some(o) = r.next_output()? {
        output_bytes += o.record_len();
    }
    let mut milestone_diffs = Vec::new();
    while let Some(d) = r.next_diff()? {
        milestone_diffs.push(DiffInfo::of(&d)?);
    }
    r.finish()?;
    Ok(FullInfo {
        path: path.display().to_string(),
        bytes,
        header_bytes: h.encoded_len(),
        genesis_milestone_index: h.genesis_milestone_index,
        target_milestone_index: h.target_milestone_index,
        target_milestone_timestamp: h.target_milestone_timestamp,
        target_milestone_id: hex32(&h.target_milestone_id),
        ledger_milestone_index: h.ledger_milestone_index,
        treasury: TreasuryInfo {
            milestone_id: hex32(&h.treasury.milestone_id),
            amount: h.treasury.amount,
        },
        protocol_parameters: ParametersInfo {
            activation_index: h.protocol_parameters.activation_index,
            protocol_version: h.protocol_parameters.protocol_version,
            params,
        },
        output_count: h.output_count,
        output_bytes,
        milestone_diffs,
        solid_entry_point_count: h.sep_count,
    })
}

fn delta_info(path: &Path, full_target_id: &str) -> Result<DeltaInfo, ToolError> {
    let (file, bytes) = open(path)?;
    let mut r = DeltaReader::new(file)?;
    let h = *r.header();
    let mut milestone_diffs = Vec::new();
    while let Some(d) = r.next_diff()? {
        milestone_diffs.push(DiffInfo::of(&d)?);
    }
    r.finish()?;
    let link = hex32(&h.full_snapshot_target_milestone_id);
    Ok(DeltaInfo {
        path: path.display().to_string(),
        bytes,
        target_milestone_index: h.target_milestone_index,
        target_milestone_timestamp: h.target_milestone_timestamp,
        chains_to_full: link == full_target_id,
        full_snapshot_target_milestone_id: link,
        sep_file_offset: h.sep_file_offset,
        milestone_diffs,
        solid_entry_point_count: h.sep_count,
    })
}

fn diff_lines(out: &mut String, diffs: &[DiffInfo]) {
    let total: u64 = diffs.iter().map(|d| d.bytes).sum();
    let _ = writeln!(
        out,
        "  milestone diffs:      {} ({total} bytes)",
        diffs.len()
    );
    for d in diffs {
        let mut extra = String::new();
        if d.receipt {
            extra.push_str(", receipt");
        }
        for a in &d.protocol_parameters {
            let _ = write!(extra, ", protocol parameters from {a}");
        }
        let _ = writeln!(
            out,
            "    {:>10}: {} bytes, {} created, {} consumed{extra}",
            d.index, d.bytes, d.created, d.consumed
        );
    }
}

fn human(info: &SnapshotInfo) -> String {
    let f = &info.full;
    let p = &f.protocol_parameters;
    let mut out = String::new();
    let _ = writeln!(out, "full snapshot {} ({} bytes)", f.path, f.bytes);
    let _ = writeln!(out, "  header:               {} bytes", f.header_bytes);
    let _ = writeln!(out, "  genesis milestone:    {}", f.genesis_milestone_index);
    let _ = writeln!(
        out,
        "  target milestone:     {} at {} ({})",
        f.target_milestone_index,
        rfc3339_utc(f.target_milestone_timestamp),
        f.target_milestone_id
    );
    let _ = writeln!(out, "  ledger milestone:     {}", f.ledger_milestone_index);
    let _ = writeln!(
        out,
        "  treasury:             {} from milestone {}",
        f.treasury.amount, f.treasury.milestone_id
    );
    let _ = writeln!(
        out,
        "  protocol parameters:  from {}, version {}: network {}, hrp {}, token supply {}, \
         min PoW score {}, below max depth {}, vByteCost {}, factors data {} key {}",
        p.activation_index,
        p.protocol_version,
        p.params.network_name,
        p.params.bech32_hrp,
        p.params.token_supply,
        p.params.min_pow_score,
        p.params.below_max_depth,
        p.params.rent_structure.v_byte_cost,
        p.params.rent_structure.v_byte_factor_data,
        p.params.rent_structure.v_byte_factor_key
    );
    let _ = writeln!(
        out,
        "  outputs:              {} ({} bytes)",
        f.output_count, f.output_bytes
    );
    diff_lines(&mut out, &f.milestone_diffs);
    let _ = writeln!(out, "  solid entry points:   {}", f.solid_entry_point_count);
    if let Some(d) = &info.delta {
        let _ = writeln!(out, "delta snapshot {} ({} bytes)", d.path, d.bytes);
        let _ = writeln!(out, "  header:               {DELTA_HEADER_LEN} bytes");
        let _ = writeln!(
            out,
            "  target milestone:     {} at {}",
            d.target_milestone_index,
            rfc3339_utc(d.target_milestone_timestamp)
        );
        let _ = writeln!(
            out,
            "  full snapshot target: {} ({})",
            d.full_snapshot_target_milestone_id,
            if d.chains_to_full {
                "chains to the full snapshot"
            } else {
                "does NOT chain to the full snapshot"
            }
        );
        let _ = writeln!(out, "  SEP file offset:      {}", d.sep_file_offset);
        diff_lines(&mut out, &d.milestone_diffs);
        let _ = writeln!(out, "  solid entry points:   {}", d.solid_entry_point_count);
    }
    out.trim_end().to_owned()
}

/// `tools snapshot-info`: the headers, counts and sizes of a full file and optional delta,
/// each read completely with the strict readers, and the chain check of the delta against the
/// full file; human-readable, or one JSON object with `json`.
///
/// # Errors
/// An unreadable ([`ToolError::Usage`]) or malformed ([`ToolError::Invalid`]) file, or a
/// delta that does not chain to the full file ([`ToolError::Invalid`], after which the report
/// is not printed).
pub fn snapshot_info(full: &Path, delta: Option<&Path>, json: bool) -> Result<String, ToolError> {
    let full = full_info(full)?;
    let delta = delta
        .map(|d| delta_info(d, &full.target_milestone_id))
        .transpose()?;
    if let Some(d) = &delta {
        if !d.chains_to_full {
            return Err(ToolError::Invalid(format!(
                "snapshots not mergeable: the delta's full snapshot target milestone id {} is \
                 not the full snapshot's target milestone id {}",
                d.full_snapshot_target_milestone_id, full.target_milestone_id
            )));
        }
    }
    let info = SnapshotInfo { full, delta };
    if json {
        serde_json::to_string_pretty(&info)
            .map_err(|e| ToolError::Invalid(format!("cannot print the report as JSON: {e}")))
    } else {
        Ok(human(&info))
    }
}

/// `tools snap-hash`: loads the files as a node would start from them and prints Hornet's
/// `snap-hash --json` object (docs/snapshots-pruning.md §6.3).
///
/// # Errors
/// As [`snapshot_info`], and any import rule the files break.
pub fn snap_hash(full: &Path, delta: Option<&Path>) -> Result<String, ToolError> {
    let snapshot = load(full, delta, None)?;
    serde_json::to_string_pretty(&SnapHash::of(&snapshot))
        .map_err(|e| ToolError::Invalid(format!("cannot print the hashes as JSON: {e}")))
}

/// `tools snap-hash --data-dir DIR`: the same object for a stopped node's data, its ledger at
/// its confirmed milestone (the engine opened without a coordinator, as `run` opens it).
///
/// # Errors
/// The directory cannot be opened as a node's data, or its state cannot be read.
pub fn snap_hash_data_dir(dir: &Path, genesis: Option<&Path>) -> Result<String, ToolError> {
    if !dir.is_dir() {
        return Err(ToolError::Usage(format!(
            "{}: not a directory",
            dir.display()
        )));
    }
    let args = crate::cli::RunArgs {
        data_dir: Some(dir.to_owned()),
        genesis: genesis.map(Path::to_owned),
        ..crate::cli::RunArgs::default()
    };
    let mut config =
        crate::config::NodeConfig::from_args(args).map_err(|e| ToolError::Usage(e.to_string()))?;
    config.coordinator = false;
    let engine = crate::run::open_engine(&config).map_err(|e| ToolError::Invalid(e.to_string()))?;
    let hash = engine
        .ledger_snap_hash()
        .map_err(|e| ToolError::Invalid(e.to_string()))?;
    serde_json::to_string_pretty(&hash)
        .map_err(|e| ToolError::Invalid(format!("cannot print the hashes as JSON: {e}")))
}
