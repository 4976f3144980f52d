//! Where a node's ledger starts: the embedded dev genesis, a genesis document (`--genesis`),
//! or TIP-35 snapshot files (`--snapshot-full` and optional `--snapshot-delta`,
//! docs/snapshots-pruning.md §3).
//!
//! Snapshot files start only a node whose data directory is empty. The ledger they describe
//! (after the delta's milestones, rolled back to the target as Hornet's import does) is
//! written into the data directory as one full snapshot file, [`SNAPSHOT_GENESIS`], with the
//! ledger at its target and no diffs; every later start of that data directory opens it as
//! the genesis, so the flags are needed only once.

use std::path::{Path, PathBuf};

use ledger_engine::snapshot::{self, FullHeader, FullWriter, LoadedSnapshot, SnapshotError};
use ledger_engine::Genesis;

/// The file in the data directory holding the ledger a snapshot started the node from.
pub const SNAPSHOT_GENESIS: &str = "genesis-snapshot.bin";

/// Why the node cannot start from what it was given.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// Two ways to start were given, or snapshot files for a data directory in use.
    #[error("{0}")]
    Conflict(String),
    /// A snapshot file is unusable.
    #[error("{}: {source}", path.display())]
    Snapshot {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: SnapshotError,
    },
    /// The snapshot's ledger cannot seed the engine.
    #[error("{}: {source}", path.display())]
    Genesis {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: ledger_engine::EngineError,
    },
}

/// The genesis from snapshot files: given ones for an empty `data_dir` (the ledger they
/// describe is kept there), else the one kept in `data_dir`; `None` when neither applies.
///
/// # Errors
/// [`StartError`] naming the conflict or the file.
pub fn snapshot_genesis(
    data_dir: &Path,
    full: Option<&Path>,
    delta: Option<&Path>,
    genesis_file: Option<&Path>,
) -> Result<Option<Genesis>, StartError> {
    let kept = data_dir.join(SNAPSHOT_GENESIS);
    let Some(full) = full else {
        if delta.is_some() {
            return Err(StartError::Conflict(
                "--snapshot-delta needs --snapshot-full (a delta applies on top of a full \
                 snapshot file)"
                    .into(),
            ));
        }
        if !kept.exists() {
            return Ok(None);
        }
        if let Some(g) = genesis_file {
            return Err(StartError::Conflict(format!(
                "{} was started from a snapshot ({}); --genesis {} names another ledger: \
                 drop the flag, or use another data directory",
                data_dir.display(),
                kept.display(),
                g.display()
            )));
        }
        let loaded = snapshot::load(&kept, None, None).map_err(|source| StartError::Snapshot {
            path: kept.clone(),
            source,
        })?;
        return genesis_of(&loaded, &kept).map(Some);
    };
    if let Some(g) = genesis_file {
        return Err(StartError::Conflict(format!(
            "--snapshot-full {} and --genesis {} both name the ledger to start from: give one",
            full.display(),
            g.display()
        )));
    }
    if !is_empty_dir(data_dir) {
        return Err(StartError::Conflict(format!(
            "--snapshot-full starts a new node, but the data directory {} is not empty: use an \
             empty directory, or start without --snapshot-full/--snapshot-delta to open it",
            data_dir.display()
        )));
    }
    let named = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StartError::Snapshot { path, source }
    };
    let loaded = snapshot::load(full, delta, None).map_err(named(delta.unwrap_or(full)))?;
    let genesis = genesis_of(&loaded, full)?;
    std::fs::create_dir_all(data_dir).map_err(|e| StartError::Snapshot {
        path: data_dir.to_path_buf(),
        source: SnapshotError::File {
            path: data_dir.to_path_buf(),
            source: e,
        },
    })?;
    write_kept(&kept, &loaded).map_err(named(&kept))?;
    tracing::info!(
        full = %full.display(),
        delta = ?delta.map(Path::display),
        ledger_index = loaded.ledger_index,
        outputs = loaded.unspent.len(),
        network = %loaded.network_name,
        "started from a snapshot"
    );
    Ok(Some(genesis))
}

fn genesis_of(loaded: &LoadedSnapshot, path: &Path) -> Result<Genesis, StartError> {
    Genesis::from_snapshot(loaded).map_err(|source| StartError::Genesis {
        path: path.to_path_buf(),
        source,
    })
}

/// True when `dir` does not exist or holds nothing.
fn is_empty_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).map_or(true, |mut entries| entries.next().is_none())
}

/// Writes the loaded ledger as one full file: ledger = target, no diffs, its solid entry
/// points (written to a temporary name, fsynced, renamed).
fn write_kept(path: &Path, loaded: &LoadedSnapshot) -> Result<PathBuf, SnapshotError> {
    let active = loaded
        .protocol_parameters
        .first()
        .cloned()
        .unwrap_or_else(|| loaded.full_header.protocol_parameters.clone());
    let header = FullHeader {
        genesis_milestone_index: loaded.genesis_milestone_index,
        target_milestone_index: loaded.target_index,
        target_milestone_timestamp: loaded.target_timestamp,
        target_milestone_id: loaded.target_milestone_id,
        ledger_milestone_index: loaded.ledger_index,
        treasury: loaded.treasury,
        protocol_parameters: active,
        output_count: 0,
        diff_count: 0,
        sep_count: 0,
    };
    let mut w = FullWriter::create(path, &header)?;
    for o in &loaded.unspent {
        w.push_output(o)?;
    }
    for sep in &loaded.seps {
        w.push_sep(sep)?;
    }
    w.finish()
}
