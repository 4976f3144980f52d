//! The node's state behind one facade: [`Engine`] (open, submit, confirm, query), its
//! [`EngineConfig`], and the view and error types it answers with, all at this root.
//!
//! The components behind it are private modules:
//! - `log`: the durable, memory-mapped, append-only block log;
//! - `history`: what is kept of the history beside the log (metadata of referenced blocks,
//!   the milestone journal, checkpoints), so memory follows the live tangle and a restart
//!   opens state instead of rebuilding it;
//! - `tangle`: block metadata, solidification, tips, the white-flag cone walk;
//! - `utxo`: the columnar UTXO ledger (its per-milestone diffs are read from the milestone
//!   journal of `history`);
//! - `semantic`: TIP-20 semantic validation of one transaction;
//! - `whiteflag`: milestone confirmation (TIP-2) and Merkle roots;
//! - `richlist`: incremental per-address balances, top-N at any kept index;
//! - `indexer`: TIP-26 output indexes (by kind, address and chain id), kept incrementally;
//! - `node`: the [`Engine`] itself and the dev coordinator;
//! - `timing`: the hook through which an exporter observes confirmation and fsync times.
//!
//! The components are also reachable under [`internals`], hidden from the documentation,
//! for this crate's own integration tests, the benchmarks and the fuzz targets, which test
//! them one by one. They are not the engine's API: the server uses only this root
//! (`server/tests/layering.rs` fails otherwise).

// The unsafe operations are the memory maps of the log (`log/segment.rs`) and of the block
// metadata files (`history/blockmeta.rs`), allowed there by name.
#![deny(unsafe_code)]
#![deny(missing_docs, unreachable_pub)]

mod disk;
mod error;
mod genesis;
mod history;
mod indexer;
mod log;
mod node;
mod richlist;
mod semantic;
mod sharded;
pub mod snapshot;
mod tangle;
mod timing;
mod utxo;
mod watermark;
mod whiteflag;

/// The components behind [`Engine`], one module each, for the engine's own integration
/// tests, the benchmarks and the fuzz targets. Not the engine's API.
#[doc(hidden)]
pub mod internals {
    /// One module of `internals` per private component, re-exporting its public items.
    macro_rules! expose {
        ($($module:ident: $what:literal),* $(,)?) => {$(
            #[doc = $what]
            pub mod $module {
                pub use crate::$module::*;
            }
        )*};
    }
    expose!(
        log: "The block log.",
        tangle: "The tangle.",
        utxo: "The UTXO ledger.",
        semantic: "Semantic validation.",
        whiteflag: "White-flag confirmation.",
        richlist: "The rich list.",
        indexer: "The indexer.",
        sharded: "Sharded maps.",
        watermark: "Watermark files.",
        history: "History files beside the log.",
    );
}

pub use disk::disk_usage;
pub use error::{
    ConfigError, EngineError, GenesisError, GenesisOutputError, InternalError, InvalidBlock,
    SubmitError, Unavailable,
};
pub use genesis::{Genesis, DEV_GENESIS_JSON};
pub use history::HistoryError;
pub use indexer::{ChainId, Cursor, Filter, OutputKind, Page, Query};
pub use log::{salvage, Durability, Durable, LogError, LogStats, SalvageReport};
pub use node::{
    BlockStatus, BroadcastHook, ConfirmedMilestone, Engine, EngineConfig, EventHook, GossipStored,
    MilestoneDiff, MilestoneInfo, Opened, OutputRead, PowStep, Prepared, PruneError, PruneTarget,
    PruningConfig, RecentConfirmation, Submitted, SyncState, UtxoChanges, V2Draft, V2Fields,
    V3Submitted, DEFAULT_CHECKPOINT_INTERVAL, DEFAULT_HISTORY_CACHE_BYTES,
    DEFAULT_LEDGER_CHECKPOINT_BYTES, DEFAULT_LOG_SEGMENT_SIZE, PRUNING_MARGIN, PRUNING_MIN_STEP,
    RECENT_CONFIRMATIONS,
};
pub use node::{
    SnapshotConfig, SnapshotCreateError, SnapshotWritten, DEFAULT_DELTA_THRESHOLD_PERCENTAGE,
    DEFAULT_SNAPSHOT_DEPTH, DELTA_SNAPSHOT_FILE, FULL_SNAPSHOT_FILE,
};
pub use richlist::RichListError;
pub use semantic::ConflictReason;
pub use tangle::{AttachError, BlockId, BlockView, Inclusion, TipScore, TipScoring};
pub use timing::TimingObserver;
pub use utxo::LedgerError;
