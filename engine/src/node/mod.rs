//! The engine facade: one `Engine` per node, shared as `Arc<Engine>` by the
//! REST layer and the coordinator thread.
//!
//! State is opened from the history files beside the log (`crate::history`): the ledger,
//! rich list, indexer and milestones from the milestone journal up to the last checkpoint,
//! the tangle from the blocks unreferenced at that checkpoint and the log tail after it; the
//! metadata of older referenced blocks stays on disk. Without a usable checkpoint (a data
//! directory of the previous format, a damaged file) the log is replayed whole: blocks go
//! back into the tangle in append order, then milestones are confirmed in index order.
//! White-flag is deterministic, so both ways give the state before the restart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, RwLockReadGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ledger_codec::ed25519::SigningKey;
use ledger_codec::nova;
use ledger_codec::stardust::{
    Block, Ed25519Signature, Milestone, Payload, ProtocolParameters, PROTOCOL_VERSION,
};
use ledger_codec::types::{Bytes, Hash32};
use ledger_codec::Codec;

use crate::error::{
    ConfigError, EngineError, GenesisError, InternalError, InvalidBlock, SubmitError, Unavailable,
};
use crate::genesis::Genesis;
use crate::history;
use crate::history::{
    BlockMetaFiles, Checkpoint, HistoryError, InFlight, Journal, JournalEntry, ReplayEntries,
};
use crate::indexer::{ChainId, IndexEntry, Indexer, IndexerService, Page, Query};
use crate::log::{
    BlockId as LogId, Durability, Durable, Location, Log, LogConfig, LogStats, RecordBytes,
};
use crate::richlist::{AddressKey, RichList, RichListError};
use crate::tangle::{BlockId, BlockView, Inclusion, Tangle, TipScore, TipScoring};
use crate::timing::TimingObserver;
use crate::utxo::{BytesLoc, Ledger, NewOutput, OutputId, OutputRow};
use crate::watermark::Watermark;

mod checkpoint;
mod confirm;
mod coordinator;
mod events;
mod gossip;
mod keys;
mod ledger_checkpoint;
mod milestones;
mod open;
mod prepare;
mod prune;
mod recent;
mod retire;
mod seal_early;
mod signatures;
mod snapshot;
mod snapshot_auto;
mod snapshot_hash;
mod spent;
mod submit;

use crate::whiteflag::{self, Confirmation};
use checkpoint::Checkpointer;
pub use events::{ConfirmedMilestone, EventHook};
pub use gossip::{BroadcastHook, GossipStored, SyncState};
use gossip::{Intake, Stored};
use keys::{load_or_create_key, read_key};
use milestones::Milestones;
pub use prepare::{PowStep, Prepared, V2Draft, V2Fields};
pub use prune::{PruneError, PruneTarget, PruningConfig, PRUNING_MARGIN, PRUNING_MIN_STEP};
use recent::RecentConfirmations;
pub use recent::{RecentConfirmation, RECENT_CONFIRMATIONS};
pub use snapshot::{
    SnapshotConfig, SnapshotCreateError, SnapshotWritten, DEFAULT_DELTA_THRESHOLD_PERCENTAGE,
    DEFAULT_SNAPSHOT_DEPTH, DELTA_SNAPSHOT_FILE, FULL_SNAPSHOT_FILE,
};

/// How the engine runs.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Where the log and keys live.
    pub data_dir: PathBuf,
    /// The genesis ledger.
    pub genesis: Genesis,
    /// fsync policy of the block log.
    pub durability: Durability,
    /// Run the built-in coordinator (key generated in the data dir on first start).
    pub coordinator: bool,
    /// File holding the built-in coordinator's 32-byte hex seed; `None` = `coordinator.key`
    /// in the data dir, generated on first start. A given file must exist.
    pub coordinator_key_file: Option<PathBuf>,
    /// Extra coordinator public keys whose milestones are accepted.
    pub coordinator_public_keys: Vec<[u8; 32]>,
    /// Valid signatures a milestone needs.
    pub milestone_threshold: usize,
    /// Nonce search threads (0 = one per core).
    pub pow_workers: usize,
    /// Keep the TIP-26 output indexes (the indexer API); off saves their memory and their
    /// share of each confirmation.
    pub indexer: bool,
    /// Confirmed milestones between two checkpoints (at least 1): a restart after a crash
    /// loads again at most the blocks stored since the last one.
    pub checkpoint_interval: u32,
    /// A ledger checkpoint (the unspent outputs, so that a restart applies only the milestone
    /// journal after it) is written at a checkpoint once the journal grew by this many bytes
    /// and by the last ledger checkpoint's size since the last one; 0: at every checkpoint
    /// after the journal grew.
    pub ledger_checkpoint_bytes: u64,
    /// Heap the history's two on-disk stores may use for their page caches together (the
    /// spent outputs three quarters, the milestone index one quarter); the rest is read from
    /// the files (through the kernel's page cache).
    pub history_cache_bytes: usize,
    /// Automatic pruning (off by default).
    pub pruning: PruningConfig,
    /// Automatic snapshots (off by default) and the snapshot directory.
    pub snapshots: SnapshotConfig,
    /// Size of new block log segment files: pruning gives disk back a whole segment at a
    /// time.
    pub log_segment_size: u32,
}

/// Default of [`EngineConfig::log_segment_size`]: 64 MiB.
pub const DEFAULT_LOG_SEGMENT_SIZE: u32 = 64 << 20;

/// Default of [`EngineConfig::ledger_checkpoint_bytes`]: 8 MiB of journal.
pub const DEFAULT_LEDGER_CHECKPOINT_BYTES: u64 = 8 << 20;

/// Default of [`EngineConfig::history_cache_bytes`]: 16 MiB.
pub const DEFAULT_HISTORY_CACHE_BYTES: usize = 16 << 20;

/// Milestones between two checkpoints by default.
pub const DEFAULT_CHECKPOINT_INTERVAL: u32 = 1;

impl EngineConfig {
    /// A dev node in `data_dir`: dev genesis, own coordinator.
    pub fn dev(data_dir: impl Into<PathBuf>) -> Self {
        let data_dir = data_dir.into();
        Self {
            snapshots: SnapshotConfig::off(&data_dir),
            data_dir,
            genesis: Genesis::dev(),
            durability: Durability::default(),
            coordinator: true,
            coordinator_key_file: None,
            coordinator_public_keys: Vec::new(),
            milestone_threshold: 1,
            pow_workers: 0,
            indexer: true,
            checkpoint_interval: DEFAULT_CHECKPOINT_INTERVAL,
            ledger_checkpoint_bytes: DEFAULT_LEDGER_CHECKPOINT_BYTES,
            history_cache_bytes: DEFAULT_HISTORY_CACHE_BYTES,
            pruning: PruningConfig::default(),
            log_segment_size: DEFAULT_LOG_SEGMENT_SIZE,
        }
    }
}

/// How [`Engine::open`] got to its state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// From the checkpoint at `ledger_index`: the milestone journal up to it, then
    /// `unreferenced` blocks listed by it and `tail` records of the log after it loaded.
    Checkpoint {
        /// The checkpoint's ledger index.
        ledger_index: u32,
        /// Milestone journal entries applied (those after the ledger checkpoint, when one was
        /// used; every entry since the ledger's start otherwise).
        journal_applied: u32,
        /// Milestone journal entries framed to find where each starts (those after the
        /// milestone index's last commit; see `crate::history::MilestoneIndex`).
        journal_framed: u32,
        /// Blocks unreferenced at the checkpoint, loaded again.
        unreferenced: usize,
        /// Log records after the checkpoint's tail position, loaded again.
        tail: u64,
    },
    /// By replaying the whole log; `why` says why no checkpoint was used.
    Replay {
        /// Why: no checkpoint yet (first start, previous format), or the file that failed.
        why: String,
    },
}

/// A confirmed milestone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MilestoneInfo {
    /// Milestone index.
    pub index: u32,
    /// Milestone timestamp.
    pub timestamp: u32,
    /// Milestone id.
    pub milestone_id: [u8; 32],
    /// The block that carried it.
    pub block_id: BlockId,
}

/// The answer to a successful submit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Submitted {
    /// The block id.
    pub block_id: BlockId,
    /// False when the block was already known.
    pub inserted: bool,
}

/// Output ids created and consumed by one milestone.
pub type MilestoneDiff = (Vec<[u8; 34]>, Vec<[u8; 34]>);

/// The answer to a successful v3 submit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V3Submitted {
    /// The 36-byte block id.
    pub block_id: [u8; 36],
    /// False when the block was already known.
    pub inserted: bool,
}

/// A block as the API reports it: its parents, solidity, confirmation and tip advice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockStatus {
    /// Its parents in wire order.
    pub parents: Vec<BlockId>,
    /// Its solidity, confirmation and inclusion.
    pub view: BlockView,
    /// Its tip score at the current CMI (solid, unreferenced blocks only).
    pub tip_score: Option<TipScore>,
}

/// The outputs one milestone created and consumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UtxoChanges {
    /// The milestone index.
    pub index: u32,
    /// Outputs it created.
    pub created: Vec<OutputId>,
    /// Outputs it consumed.
    pub consumed: Vec<OutputId>,
}

/// An output with its ledger metadata, read under one lock.
#[derive(Debug, Clone)]
pub struct OutputRead {
    /// Ledger row.
    pub row: OutputRow,
    /// Serialized output.
    pub bytes: Vec<u8>,
    /// The ledger index the answer is valid for.
    pub ledger_index: u32,
}

struct State {
    tangle: Tangle,
    ledger: Ledger,
    richlist: RichList,
    // Confirmed milestones: the latest here, the others read from the journal.
    milestones: Milestones,
    // Milestone blocks seen but not yet confirmed, by index.
    pending: BTreeMap<u32, BlockId>,
    // Blocks referenced by confirmed milestones since the store was opened.
    referenced: u64,
    // Submitted transaction blocks whose signatures await the next arrival batch.
    unverified: Vec<(BlockId, u64)>,
    // Per confirmed milestone, what it changed (see `crate::history`).
    journal: Journal,
    // False once a journal write failed: no checkpoint is written after that.
    journal_ok: bool,
    // The bytes of the outputs the ledger started from (`BytesLoc::GENESIS`): the genesis's,
    // or the ledger base's once pruning retired log segments (`retire.rs`).
    base_blob: Vec<u8>,
    // The milestone index of the ledger base `base_blob` is (the genesis's before any).
    base_index: u32,
}

/// The milestone a ledger starts from (the genesis, a snapshot's target, or the ledger base):
/// what the next milestone must name while no later one is known.
#[derive(Debug, Clone, Copy)]
struct LedgerStart {
    milestone_id: [u8; 32],
    timestamp: u32,
    // Where blocks attach while nothing newer is known.
    entry_point: Option<BlockId>,
}

/// The node's state and its operations.
pub struct Engine {
    log: Arc<Log>,
    // `DATA_DIR/history`: block metadata, milestone journal, checkpoint.
    history_dir: PathBuf,
    checkpoint_interval: u32,
    // Appends not yet in the tangle (see `crate::history::InFlight`).
    inflight: InFlight,
    opened: OnceLock<Opened>,
    // Writes checkpoints off the confirmation path.
    checkpointer: checkpoint::Checkpointer,
    // The ledger's spent rows, once a checkpoint named their milestone (`spent.rs`).
    spent: spent::SpentRows,
    // When the next ledger checkpoint is due (`ledger_checkpoint.rs`).
    ledger_checkpoints: ledger_checkpoint::Due,
    // The pruning index, its lock and configuration.
    pruning: prune::Pruning,
    // Automatic snapshots: configuration and the last snapshot index.
    snapshots: snapshot_auto::Snapshots,
    // What the last scan for segments to retire found (`retire.rs`).
    retire_scan: retire::RetireScan,
    // When the active log segment started, for sealing it early (`seal_early.rs`).
    early_seal: seal_early::EarlySeal,
    // The network's genesis (its output bytes are in `State::base_blob`).
    genesis: Genesis,
    // The milestone the ledger started from when opened: the genesis's, or the ledger base's.
    start: LedgerStart,
    coordinator: Option<SigningKey>,
    coordinator_keys: Vec<[u8; 32]>,
    threshold: usize,
    pow_workers: usize,
    // The highest milestone confirmed, and the highest the built-in coordinator issued.
    confirmed_mark: Watermark,
    issued_mark: Option<Watermark>,
    state: RwLock<State>,
    // Serializes milestone issuance and confirmation.
    confirming: Mutex<()>,
    // A submit found the next milestone confirmable while `confirming` was held: its holder
    // looks again before it returns (see `Engine::confirm_unless_busy`).
    confirm_wanted: AtomicBool,
    shutting_down: AtomicBool,
    // The last append failed for lack of space (logged once per change).
    storage_full: AtomicBool,
    // Told how long each milestone confirmation took (see `observe_timings`).
    indexer: Option<IndexerService>,
    timings: OnceLock<Arc<dyn TimingObserver>>,
    // The last confirmations made (not replayed), with their times (see `recent_confirmations`).
    recent: RecentConfirmations,
    // Told about blocks worth passing on to peers (see `set_broadcast_hook`).
    broadcast: OnceLock<Arc<dyn gossip::BroadcastHook>>,
    // Told about new blocks and confirmed milestones (see `set_event_hook`).
    events: OnceLock<Arc<dyn events::EventHook>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("log", &self.log.dir())
            .finish_non_exhaustive()
    }
}

/// Whether a milestone is confirmed while replaying the log at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replay {
    Yes,
    No,
}

/// Adds the balance changes of milestones `range`, read by `read`, to the sums per address
/// in `since` (for the rich list at `at`); a journal that cannot give one is logged.
fn add_balance_changes(
    since: &mut hashbrown::HashMap<AddressKey, i128>,
    range: std::ops::RangeInclusive<u32>,
    read: impl Fn(u32) -> Result<Option<Vec<(AddressKey, i128)>>, HistoryError>,
    at: u32,
) -> Result<(), RichListError> {
    for index in range {
        let changes = match read(index) {
            Ok(Some(changes)) => changes,
            Ok(None) => return Err(RichListError::Unreadable(index)),
            Err(err) => {
                tracing::error!(index, "rich list at {at} not served: {err}");
                return Err(RichListError::Unreadable(index));
            }
        };
        for (address, delta) in changes {
            let sum = since.entry(address).or_default();
            *sum = sum
                .checked_add(delta)
                .ok_or(RichListError::Inconsistent(at))?;
        }
    }
    Ok(())
}

fn now_secs() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u32::try_from(d.as_secs()).unwrap_or(u32::MAX))
}

fn hex32(b: &[u8]) -> String {
    ledger_codec::hexstr::to_hex(b)
}

impl Engine {
    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The v2 protocol parameters.
    pub fn params(&self) -> &ProtocolParameters {
        &self.genesis.params
    }

    /// The genesis.
    pub fn genesis(&self) -> &Genesis {
        &self.genesis
    }

    /// The block log itself, for the engine's own integration tests (like
    /// [`crate::internals`], not the engine's API).
    #[doc(hidden)]
    pub fn internal_log(&self) -> &Log {
        &self.log
    }

    /// Sizes of the block log (records, segments, bytes used).
    pub fn log_stats(&self) -> LogStats {
        self.log.stats()
    }

    /// True when this node runs its own coordinator.
    pub fn has_coordinator(&self) -> bool {
        self.coordinator.is_some()
    }

    /// Public keys whose milestones are accepted.
    pub fn coordinator_keys(&self) -> &[[u8; 32]] {
        &self.coordinator_keys
    }

    /// Stops the coordinator, flushes the log and writes a checkpoint (the next start opens
    /// the state as it is now).
    ///
    /// # Errors
    /// The final fsync or the checkpoint failed.
    pub fn shutdown(&self) -> Result<(), EngineError> {
        self.shutting_down.store(true, Ordering::Relaxed);
        let _guard = self
            .confirming
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.log.sync()?;
        self.final_checkpoint()
    }

    // ---- queries -------------------------------------------------------

    /// The serialized block `id`, zero-copy from the log.
    /// `None` for an unknown block, and for one pruned (see [`Self::pruning_index`]).
    pub fn block_bytes(&self, id: &BlockId) -> Option<RecordBytes> {
        let pruning_index = self.pruning_index();
        if pruning_index > 0 && Self::is_pruned_block(&self.read(), pruning_index, id) {
            return None;
        }
        self.log.get_bytes(&LogId::V2(*id))
    }

    /// What the API tells about block `id` (see [`BlockStatus`]), read under one lock;
    /// `None` for a block this node does not know.
    ///
    /// # Errors
    /// The block's metadata on disk is damaged ([`EngineError::History`], naming the file):
    /// it is not used.
    pub fn block_status(&self, id: &BlockId) -> Result<Option<BlockStatus>, EngineError> {
        let (mut view, parents, tip_score) = {
            let st = self.read();
            match st.tangle.get(id) {
                Some(meta) => (
                    meta.view.clone(),
                    meta.parents.clone(),
                    st.tangle.tip_score(id),
                ),
                None => {
                    let found = st.tangle.archived_checked(id).map_err(|e| {
                        EngineError::History(HistoryError::Damaged {
                            path: self.history_dir.join("blockmeta"),
                            why: e.0,
                        })
                    })?;
                    let Some((a, _)) = found else {
                        return Ok(None);
                    };
                    if a.referenced_by <= self.pruning_index() {
                        return Ok(None);
                    }
                    let view = BlockView {
                        solid: true,
                        referenced_by: Some(a.referenced_by),
                        white_flag_index: Some(a.white_flag_index),
                        inclusion: a.inclusion,
                        milestone_index: None,
                    };
                    (view, Vec::new(), None)
                }
            }
        };
        let parents = match view.referenced_by {
            None => parents,
            // The tangle keeps no parents for history: they are read from the stored block,
            // after the state lock is released (and the milestone it carries, for a block
            // whose metadata came from the archive).
            Some(_) => {
                let Some(bytes) = self.block_bytes(id) else {
                    return Ok(None);
                };
                let Ok(block) = Block::decode(&bytes) else {
                    return Ok(None);
                };
                if let Some(Payload::Milestone(m)) = &block.payload {
                    view.milestone_index = Some(m.index);
                }
                block.parents.to_vec()
            }
        };
        Ok(Some(BlockStatus {
            parents,
            view,
            tip_score,
        }))
    }

    /// The ledger index, and the confirmed milestone.
    pub fn ledger_index(&self) -> u32 {
        self.read().ledger.ledger_index()
    }

    /// The latest confirmed milestone.
    pub fn latest_milestone(&self) -> Option<MilestoneInfo> {
        self.read().milestones.latest()
    }

    /// Milestone by index.
    pub fn milestone_by_index(&self, index: u32) -> Option<MilestoneInfo> {
        let st = self.read();
        st.milestones.get(index, &st.journal)
    }

    /// Milestone by id.
    pub fn milestone_by_id(&self, id: &[u8; 32]) -> Option<MilestoneInfo> {
        let st = self.read();
        st.milestones.by_id(id, &st.journal)
    }

    /// An output with its metadata at the current ledger index.
    pub fn output(&self, id: &[u8; 34]) -> Option<OutputRead> {
        let st = self.read();
        let row = self.output_row(&st, id)?;
        if row.spent.is_some_and(|s| s.index <= self.pruning_index()) {
            return None;
        }
        let bytes = whiteflag::output_bytes(&self.log.reader(), &st.base_blob, row.loc)?.to_vec();
        Some(OutputRead {
            row,
            bytes,
            ledger_index: st.ledger.ledger_index(),
        })
    }

    /// The block that included transaction `tx` (via its output 0 in the ledger).
    pub fn included_block(&self, tx: &[u8; 32]) -> Option<BlockId> {
        let oid = ledger_codec::stardust::OutputId {
            transaction_id: *tx,
            index: 0,
        }
        .to_array();
        let st = self.read();
        let row = self.output_row(&st, &oid)?;
        let pruning_index = self.pruning_index();
        if row.spent.is_some_and(|s| s.index <= pruning_index) {
            return None;
        }
        // Genesis outputs have no block (a zero id); an output whose bytes moved to the
        // ledger base keeps its block's id (the block itself is pruned then).
        (row.block_id != [0; 32]).then_some(row.block_id)
    }

    /// The `top` richest addresses at ledger index `at` (current when None).
    ///
    /// # Errors
    /// [`RichListError::OutOfRange`] for an index outside the kept range.
    pub fn richest(
        &self,
        top: usize,
        at: Option<u32>,
    ) -> Result<(u32, Vec<(AddressKey, u64)>), RichListError> {
        // The balance changes after `at` come from the milestone journal (the rich list keeps
        // no history): read without the state lock, which confirmations need, and then, under
        // it, those of milestones confirmed meanwhile.
        let (at, mut read_to, reader) = {
            let st = self.read();
            let current = st.richlist.ledger_index();
            let at = at.unwrap_or(current);
            if at >= current || at < st.richlist.oldest_index() {
                return st.richlist.top(top, at, || Ok(Vec::new())).map(|v| (at, v));
            }
            let reader = st.journal.reader(at + 1, current).map_err(|err| {
                tracing::error!("rich list at {at} not served: {err}");
                RichListError::Unreadable(at + 1)
            })?;
            (at, current, reader)
        };
        let mut since: hashbrown::HashMap<AddressKey, i128> = hashbrown::HashMap::new();
        add_balance_changes(
            &mut since,
            at + 1..=read_to,
            |i| reader.balance_changes(i),
            at,
        )?;
        let st = self.read();
        let current = st.richlist.ledger_index();
        if current > read_to {
            add_balance_changes(
                &mut since,
                read_to + 1..=current,
                |i| st.journal.read_balance_changes(i),
                at,
            )?;
            read_to = current;
        }
        debug_assert_eq!(read_to, current);
        st.richlist
            .top(top, at, || Ok(since.into_iter().collect()))
            .map(|v| (at, v))
    }

    /// True when the engine keeps the TIP-26 output indexes ([`EngineConfig::indexer`]).
    pub fn has_indexer(&self) -> bool {
        self.indexer.is_some()
    }

    /// Whether an indexer query now would be answered without waiting for the indexer to
    /// catch up with the confirmed ledger index (always true with the indexer off).
    pub fn indexer_caught_up(&self) -> bool {
        self.indexer
            .as_ref()
            .is_none_or(|ix| ix.has_reached(self.ledger_index()))
    }

    /// One page of the TIP-26 indexer's answer to `q`, at (at least) the ledger index
    /// confirmed when it was asked; `None` when the indexer is off.
    pub fn indexed_outputs(&self, q: &Query) -> Option<Page> {
        let indexer = self.indexer.as_ref()?;
        let at = self.ledger_index();
        Some(indexer.query(at, q))
    }

    /// The unspent output of chain `id` (alias, foundry or NFT) and the ledger index the
    /// answer is valid for; `None` when the indexer is off.
    pub fn chain_output(&self, id: &ChainId) -> Option<(u32, Option<OutputId>)> {
        let indexer = self.indexer.as_ref()?;
        let at = self.ledger_index();
        Some(indexer.chain_output(at, id))
    }

    /// The outputs milestone `index` created and consumed, in booking order; `None` for a
    /// milestone this node has not confirmed (or whose journal entry cannot be read: logged).
    pub fn utxo_changes(&self, index: u32) -> Option<UtxoChanges> {
        let (created, consumed) = self.milestone_diff(index)?;
        Some(UtxoChanges {
            index,
            created,
            consumed,
        })
    }

    /// The oldest ledger index that can be queried.
    pub fn oldest_ledger_index(&self) -> u32 {
        self.read().richlist.oldest_index()
    }

    /// All current tips (sorted).
    pub fn tips(&self) -> Vec<BlockId> {
        self.read().tangle.tips()
    }

    /// Reports from now on how long each milestone confirmation and each fsync of the block
    /// log takes to `observer` (see [`TimingObserver`]). Only the first observer set is kept:
    /// returns false if one was set already.
    pub fn observe_timings(&self, observer: Arc<dyn TimingObserver>) -> bool {
        let log = self.log.observe_timings(Arc::clone(&observer));
        self.timings.set(observer).is_ok() && log
    }

    /// The last milestones this node confirmed since it started (replayed ones are not
    /// included), oldest first, at most [`RECENT_CONFIRMATIONS`]: index, timestamp, blocks
    /// referenced and the time the confirmation took.
    pub fn recent_confirmations(&self) -> Vec<RecentConfirmation> {
        self.recent.list()
    }

    /// Sizes of the tip pool: `(healthy, semi-lazy, lazy)` at the current CMI.
    pub fn tip_pool_sizes(&self) -> (usize, usize, usize) {
        self.read().tangle.tip_pool_sizes()
    }

    /// How the state was opened: from a checkpoint, or by replaying the log (and why).
    pub fn opened(&self) -> Option<&Opened> {
        self.opened.get()
    }

    /// Number of blocks stored (v2 and v3 records of the log).
    pub fn block_count(&self) -> usize {
        usize::try_from(self.log.len()).unwrap_or(usize::MAX)
    }

    /// Blocks whose metadata is in memory: unreferenced ones and those referenced within the
    /// below-max-depth window.
    pub fn blocks_in_memory(&self) -> usize {
        self.read().tangle.len()
    }

    /// Ledger rows in memory: unspent outputs, and spent ones whose rows are not stored on
    /// disk yet (they move at each checkpoint).
    pub fn outputs_in_memory(&self) -> (usize, usize) {
        let st = self.read();
        (st.ledger.unspent_count(), st.ledger.spent_in_memory())
    }

    /// Blocks referenced by milestones confirmed since the store was opened (replayed
    /// milestones included); with [`Self::block_count`] it gives the block rates of `/info`.
    pub fn referenced_block_count(&self) -> u64 {
        self.read().referenced
    }

    /// The built-in coordinator's public key, when it runs.
    pub fn coordinator_public_key(&self) -> Option<[u8; 32]> {
        self.coordinator.as_ref().map(SigningKey::public_key)
    }

    /// The ledger's diff of milestone `index`: (created, consumed) output ids, in booking
    /// order, read from the milestone journal (`crate::history`): diffs are not kept in
    /// memory.
    pub fn milestone_diff(&self, index: u32) -> Option<MilestoneDiff> {
        let st = self.read();
        st.milestones.get(index, &st.journal)?;
        match st.journal.read_entry(index) {
            Ok(Some(e)) => Some((
                e.created.iter().map(|o| o.output_id).collect(),
                e.consumed.iter().map(|(id, _)| *id).collect(),
            )),
            Ok(None) => None,
            Err(err) => {
                tracing::error!(index, "milestone diff not served: {err}");
                None
            }
        }
    }

    /// Every block's inclusion state (for tests and tools).
    pub fn inclusion(&self, id: &BlockId) -> Option<Inclusion> {
        let st = self.read();
        match st.tangle.get(id) {
            Some(m) => Some(m.view.inclusion),
            None => st.tangle.archived(id).map(|(a, _)| a.inclusion),
        }
    }
}
