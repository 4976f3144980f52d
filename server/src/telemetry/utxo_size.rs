//! An estimate of the UTXO ledger's size for `iota_database_utxo_size_bytes`.
//!
//! Our ledger is columnar and in memory; the output bytes themselves stay in the block log
//! (counted by `iota_database_tangle_size_bytes`). The estimate is the number of outputs the
//! ledger holds rows for (the genesis outputs plus every output each confirmed milestone
//! created, spent ones included: the ledger keeps them) times [`BYTES_PER_OUTPUT`], the size
//! of one row over the ledger's columns and its id index. Milestone diffs are summed
//! incrementally, so a scrape only reads the milestones confirmed since the last one.

use ledger_engine::Engine;
use parking_lot::Mutex;

/// Bytes of one output's row: output id 34, block id 32, amount 8, owner 4, booked index and
/// timestamp 8, spent index and timestamp 8, spending transaction 32, bytes location 16, and
/// an id-index entry of 34 + 4, plus 4 for its place in a milestone diff.
pub const BYTES_PER_OUTPUT: u64 = 34 + 32 + 8 + 4 + 8 + 8 + 32 + 16 + 38 + 4;

/// Milestones summed per scrape at most, so a first scrape after a restart on a long ledger
/// stays short; the estimate catches up over the following scrapes.
pub const MAX_MILESTONES_PER_SCRAPE: u32 = 20_000;

/// The running count behind the estimate.
#[derive(Debug, Default)]
pub struct UtxoSizeEstimate {
    progress: Mutex<Option<Progress>>,
}

#[derive(Debug, Clone, Copy)]
struct Progress {
    /// The last milestone whose diff is counted.
    counted_index: u32,
    /// Outputs counted so far.
    outputs: u64,
}

impl UtxoSizeEstimate {
    /// The estimate in bytes for `engine` now.
    pub fn bytes(&self, engine: &Engine) -> u64 {
        let mut progress = self.progress.lock();
        let mut p = progress.unwrap_or_else(|| Progress {
            counted_index: engine.genesis().milestone_index,
            outputs: u64::try_from(engine.genesis().outputs.len()).unwrap_or(u64::MAX),
        });
        let target = engine
            .ledger_index()
            .min(p.counted_index.saturating_add(MAX_MILESTONES_PER_SCRAPE));
        while p.counted_index < target {
            let index = p.counted_index.saturating_add(1);
            if let Some((created, _consumed)) = engine.milestone_diff(index) {
                p.outputs = p
                    .outputs
                    .saturating_add(u64::try_from(created.len()).unwrap_or(u64::MAX));
            }
            p.counted_index = index;
        }
        *progress = Some(p);
        p.outputs.saturating_mul(BYTES_PER_OUTPUT)
    }
}
