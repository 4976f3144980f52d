//! The node's state: block log, tangle, ledger, rich list, coordinator.
//!
//! - [`log`]: the durable, memory-mapped, append-only block log.
//! - [`tangle`]: block metadata, solidification, tips, the white-flag cone walk.
//! - [`utxo`]: the columnar UTXO ledger with per-milestone diffs.
//! - [`semantic`]: TIP-20 semantic validation of one transaction.
//! - [`whiteflag`]: milestone confirmation (TIP-2) and Merkle roots.
//! - [`richlist`]: incremental per-address balances, top-N at any kept index.
//! - [`indexer`]: TIP-26 output indexes (by kind, address and chain id), kept incrementally.
//! - [`node`]: the [`Engine`] facade the server talks to, and the dev coordinator.
//! - [`timing`]: the hook through which an exporter observes confirmation and fsync times.

#![deny(missing_docs, unreachable_pub)]

pub mod error;
pub mod genesis;
pub mod indexer;
pub mod log;
pub mod node;
pub mod richlist;
pub mod semantic;
pub mod sharded;
pub mod tangle;
pub mod timing;
pub mod utxo;
pub mod watermark;
pub mod whiteflag;

pub use error::{EngineError, SubmitError};
pub use genesis::Genesis;
pub use indexer::{ChainId, Cursor, Filter, OutputKind, Page, Query};
pub use log::{salvage, LogError, SalvageReport};
pub use node::{
    payload_kind, BlockStatus, BroadcastHook, Engine, EngineConfig, GossipStored, MilestoneInfo,
    OutputRead, PowStep, Prepared, Submitted, SyncState, UtxoChanges, V2Draft, V2Fields,
    V3Submitted,
};
pub use richlist::RichListError;
pub use tangle::{BlockId, Inclusion, TipScore, TipScoring};
pub use timing::TimingObserver;
