//! The engine facade: one `Engine` per node, shared as `Arc<Engine>` by the
//! REST layer and the coordinator thread.
//!
//! State is rebuilt on open by replaying the block log: blocks go back into
//! the tangle in append order, then milestones are confirmed in index order.
//! White-flag is deterministic, so the ledger, diffs and rich list after a
//! restart equal those before it; nothing but the log (and the coordinator
//! key) is persisted.

use std::collections::{BTreeMap, HashMap};
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

use crate::error::{EngineError, SubmitError};
use crate::genesis::Genesis;
use crate::indexer::{ChainId, IndexEntry, Indexer, IndexerService, Page, Query};
use crate::log::{BlockId as LogId, Durability, Durable, Location, Log, LogConfig};
use crate::richlist::{AddressKey, RichList, RichListError};
use crate::tangle::{BlockId, BlockMeta, Inclusion, Tangle, TipScore, TipScoring};
use crate::timing::TimingObserver;
use crate::utxo::{BytesLoc, Ledger, NewOutput, OutputId, OutputRow};
use crate::watermark::Watermark;
use crate::whiteflag::{self, Confirmation};

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
}

impl EngineConfig {
    /// A dev node in `data_dir`: dev genesis, own coordinator.
    pub fn dev(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            genesis: Genesis::dev(),
            durability: Durability::default(),
            coordinator: true,
            coordinator_key_file: None,
            coordinator_public_keys: Vec::new(),
            milestone_threshold: 1,
            pow_workers: 0,
            indexer: true,
        }
    }
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
    milestones: BTreeMap<u32, MilestoneInfo>,
    milestone_ids: HashMap<[u8; 32], u32>,
    // Milestone blocks seen but not yet confirmed, by index.
    pending: BTreeMap<u32, BlockId>,
    // Blocks referenced by confirmed milestones since the store was opened.
    referenced: u64,
    // Submitted transaction blocks whose signatures await the next arrival batch.
    unverified: Vec<(BlockId, u64)>,
}

/// The node's state and its operations.
pub struct Engine {
    log: Log,
    genesis: Genesis,
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
    shutting_down: AtomicBool,
    // The last append failed for lack of space (logged once per change).
    storage_full: AtomicBool,
    // Told how long each milestone confirmation took (see `observe_timings`).
    indexer: Option<IndexerService>,
    timings: OnceLock<Arc<dyn TimingObserver>>,
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

fn now_secs() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u32::try_from(d.as_secs()).unwrap_or(u32::MAX))
}

fn hex32(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

/// Loads the coordinator seed from `dir/coordinator.key`, creating it on first start.
fn load_or_create_key(dir: &Path) -> Result<SigningKey, EngineError> {
    let path = dir.join("coordinator.key");
    let io = |context: String| move |source| EngineError::Io { context, source };
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_key(&path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut seed = [0u8; 32];
            rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut seed);
            let tmp = dir.join("coordinator.key.tmp");
            std::fs::write(&tmp, hex::encode(seed))
                .map_err(io(format!("writing {}", tmp.display())))?;
            std::fs::File::open(&tmp)
                .and_then(|f| f.sync_all())
                .map_err(io("syncing the key".into()))?;
            std::fs::rename(&tmp, &path).map_err(io(format!("writing {}", path.display())))?;
            Ok(SigningKey::from_seed(&seed))
        }
        Err(e) => Err(EngineError::Io {
            context: format!("reading {}", path.display()),
            source: e,
        }),
    }
}

/// Reads a coordinator seed from a file given in the configuration (never created).
fn read_key(path: &Path) -> Result<SigningKey, EngineError> {
    let text = std::fs::read_to_string(path).map_err(|source| EngineError::Io {
        context: format!("reading coordinator key {}", path.display()),
        source,
    })?;
    parse_key(path, &text)
}

/// A 32-byte seed as hex (with or without 0x, surrounding whitespace ignored).
fn parse_key(path: &Path, text: &str) -> Result<SigningKey, EngineError> {
    let seed: [u8; 32] = ledger_codec::types::parse_config_hex(text).ok_or_else(|| {
        EngineError::Genesis(format!(
            "{} does not hold a 32-byte hex seed",
            path.display()
        ))
    })?;
    Ok(SigningKey::from_seed(&seed))
}

impl Engine {
    /// Opens (or creates) the node state in `config.data_dir`.
    ///
    /// # Errors
    /// I/O or log failures, or a log whose contents contradict the genesis.
    pub fn open(config: EngineConfig) -> Result<Arc<Self>, EngineError> {
        std::fs::create_dir_all(&config.data_dir).map_err(|source| EngineError::Io {
            context: format!("creating {}", config.data_dir.display()),
            source,
        })?;
        let log = Log::open(
            config.data_dir.join("log"),
            LogConfig::default().with_durability(config.durability),
        )?;
        let coordinator = match (config.coordinator, &config.coordinator_key_file) {
            (false, _) => None,
            (true, Some(file)) => Some(read_key(file)?),
            (true, None) => Some(load_or_create_key(&config.data_dir)?),
        };
        let mut coordinator_keys = config.coordinator_public_keys.clone();
        if let Some(k) = &coordinator {
            coordinator_keys.push(k.public_key());
        }
        // A milestone carries each key's signature at most once (keys strictly
        // ascending), so only distinct keys count towards the threshold.
        coordinator_keys.sort_unstable();
        coordinator_keys.dedup();
        let threshold = config.milestone_threshold;
        if threshold == 0 {
            return Err(EngineError::Config(
                "the milestone threshold must be at least 1".into(),
            ));
        }
        if !coordinator_keys.is_empty() && threshold > coordinator_keys.len() {
            return Err(EngineError::Config(format!(
                "a milestone threshold of {threshold} exceeds the {} distinct coordinator keys",
                coordinator_keys.len()
            )));
        }
        let g = &config.genesis;
        let scoring = TipScoring {
            below_max_depth: u32::from(g.params.below_max_depth),
            ..TipScoring::default()
        };
        let tangle = Tangle::new(
            g.solid_entry_points.iter().map(|s| (*s, g.milestone_index)),
            g.milestone_index,
            scoring,
        );
        let mut ledger = Ledger::new(g.milestone_index);
        let mut richlist = RichList::new(g.milestone_index);
        let mut indexer = Indexer::new(g.milestone_index);
        let mut genesis_outputs = Vec::with_capacity(g.outputs.len());
        let mut genesis_entries = Vec::with_capacity(g.outputs.len());
        for o in &g.outputs {
            let output = ledger_codec::stardust::Output::decode(g.output_bytes(o))
                .map_err(|e| EngineError::Genesis(e.to_string()))?;
            let owner = whiteflag::owning_address(&output);
            if let Some(a) = owner {
                richlist
                    .credit_genesis(a, output.amount())
                    .map_err(|e| EngineError::Genesis(e.to_string()))?;
            }
            genesis_entries.extend(IndexEntry::of(&o.output_id, &output));
            genesis_outputs.push(NewOutput {
                output_id: o.output_id,
                block_id: o.block_id,
                amount: output.amount(),
                owner,
                loc: BytesLoc {
                    record: BytesLoc::GENESIS,
                    offset: o.offset,
                    len: o.len,
                },
            });
        }
        ledger
            .book_genesis(&genesis_outputs, g.milestone_timestamp)
            .map_err(|e| EngineError::Genesis(e.to_string()))?;
        indexer.apply(
            g.milestone_index,
            g.milestone_timestamp,
            &genesis_entries,
            &[],
        );
        let indexer = match config.indexer {
            true => Some(
                IndexerService::start(indexer).map_err(|source| EngineError::Io {
                    context: "starting the indexer thread".into(),
                    source,
                })?,
            ),
            false => None,
        };
        let key_file = config
            .coordinator_key_file
            .clone()
            .unwrap_or_else(|| config.data_dir.join("coordinator.key"));
        let issued_mark = coordinator.as_ref().map(|_| {
            let mut path = key_file.into_os_string();
            path.push(".issued");
            Watermark::new(path)
        });
        let engine = Self {
            log,
            genesis: config.genesis.clone(),
            coordinator,
            coordinator_keys,
            threshold,
            pow_workers: config.pow_workers,
            confirmed_mark: Watermark::new(config.data_dir.join("confirmed-index")),
            issued_mark,
            state: RwLock::new(State {
                tangle,
                ledger,
                richlist,
                milestones: BTreeMap::new(),
                milestone_ids: HashMap::new(),
                pending: BTreeMap::new(),
                referenced: 0,
                unverified: Vec::new(),
            }),
            confirming: Mutex::new(()),
            shutting_down: AtomicBool::new(false),
            storage_full: AtomicBool::new(false),
            timings: OnceLock::new(),
            indexer,
        };
        engine.replay()?;
        engine.check_watermarks()?;
        Ok(Arc::new(engine))
    }

    /// Refuses a log that ends before what this node confirmed, or before what its
    /// coordinator key issued: blocks were lost (a deleted or replaced segment), and going
    /// on would re-issue or re-confirm milestones with other contents.
    fn check_watermarks(&self) -> Result<(), EngineError> {
        let ledger = self.read().ledger.ledger_index();
        if let Some(confirmed) = self.confirmed_mark.read()?.filter(|&c| c > ledger) {
            return Err(EngineError::Inconsistent(format!(
                "the block log ends at ledger index {ledger}, but this node confirmed up to \
                 milestone {confirmed} ({}): blocks are missing from {} (a deleted, truncated \
                 or older segment?); nothing was changed. Restore the log, or salvage it \
                 (engine/FORMAT.md)",
                self.confirmed_mark.path().display(),
                self.log.dir().display()
            )));
        }
        if let Some(mark) = &self.issued_mark {
            if let Some(issued) = mark.read()?.filter(|&i| i > ledger) {
                return Err(EngineError::Inconsistent(format!(
                    "this coordinator key already issued milestone {issued} ({}), but the block \
                     log ends at ledger index {ledger}: issuing again would sign a second \
                     milestone for an index already signed. Restore the log, or start a new \
                     network with a new coordinator key",
                    mark.path().display()
                )));
            }
        }
        Ok(())
    }

    fn replay(&self) -> Result<(), EngineError> {
        let mut st = self.write();
        st.tangle.begin_bulk_load();
        for rec in self.log.iter() {
            let LogId::V2(id) = rec.id() else { continue };
            let Ok(block) = Block::decode(rec.bytes()) else {
                return Err(EngineError::Inconsistent(format!(
                    "stored block {} does not decode",
                    hex32(&id)
                )));
            };
            let tx_id = whiteflag::transaction_id(&block, rec.bytes());
            Self::insert_block(&mut st, id, &block, tx_id, rec.location().to_u64());
        }
        drop(st);
        let confirmed = self.confirm_pending(Replay::Yes);
        self.write().tangle.end_bulk_load();
        confirmed
    }

    /// Adds a stored block to the tangle; `tx_id` is
    /// [`whiteflag::transaction_id`], hashed before the state lock is taken.
    fn insert_block(
        st: &mut State,
        id: BlockId,
        block: &Block<'_>,
        tx_id: Option<[u8; 32]>,
        record: u64,
    ) -> bool {
        let ms = match &block.payload {
            Some(Payload::Milestone(m)) => Some(m.index),
            _ => None,
        };
        let inserted = st
            .tangle
            .insert(id, block.parents.to_vec(), tx_id, ms, record);
        if let Some(index) = ms {
            if inserted && index > st.ledger.ledger_index() {
                st.pending.entry(index).or_insert(id);
            }
        }
        inserted
    }

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

    /// The block log.
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// True when this node runs its own coordinator.
    pub fn has_coordinator(&self) -> bool {
        self.coordinator.is_some()
    }

    /// Public keys whose milestones are accepted.
    pub fn coordinator_keys(&self) -> &[[u8; 32]] {
        &self.coordinator_keys
    }

    /// Verifies (protocol version, network id, syntax, signature) and stores a
    /// serialized v3 block under `params`. A known block answers with its id.
    /// The block is durable in the log when this returns Ok.
    ///
    /// # Errors
    /// [`SubmitError::Invalid`] with the broken rule, or an internal fault.
    pub fn submit_v3(
        &self,
        bytes: &[u8],
        params: &nova::ProtocolParameters,
    ) -> Result<V3Submitted, SubmitError> {
        let block = nova::Block::decode(bytes).map_err(|e| SubmitError::Invalid(e.to_string()))?;
        nova::validate_block(&block, params).map_err(|e| SubmitError::Invalid(e.to_string()))?;
        let id = nova::block_id_from_bytes(bytes, params)
            .ok_or_else(|| SubmitError::Invalid("block too short for an id".into()))?;
        let appended = self
            .log
            .append_v3(id, bytes)
            .map_err(|e| self.store_error(e))?;
        self.stored();
        Ok(V3Submitted {
            block_id: id,
            inserted: appended.inserted,
        })
    }

    /// The serialized v3 block `id`, zero-copy from the log.
    pub fn block_v3_bytes(&self, id: &[u8; 36]) -> Option<&[u8]> {
        self.log.get(&LogId::V3(*id)).map(|r| r.bytes())
    }

    /// Verifies and stores a serialized v2 block. A known block is answered
    /// with its id. The block is durable in the log when this returns Ok.
    ///
    /// # Errors
    /// [`SubmitError::Invalid`] with the broken rule, or an internal fault.
    pub fn submit_v2(&self, bytes: &[u8]) -> Result<Submitted, SubmitError> {
        let (submitted, durable) = self.submit_v2_nowait(bytes)?;
        self.log
            .wait_durable_at(durable)
            .map_err(|e| SubmitError::Internal(e.to_string()))?;
        Ok(submitted)
    }

    /// [`Engine::submit_v2`] without waiting for the fsync: the block is stored, readable
    /// and in the tangle, but must only be acknowledged once [`Engine::on_durable`] (or
    /// [`Log::wait_durable_at`]) reports the returned position durable. A milestone is
    /// waited for here, before it is confirmed: the ledger never runs ahead of the log.
    ///
    /// # Errors
    /// As [`Engine::submit_v2`].
    pub fn submit_v2_nowait(&self, bytes: &[u8]) -> Result<(Submitted, Durable), SubmitError> {
        let internal = |e: crate::log::LogError| self.store_error(e);
        let block = Block::decode(bytes).map_err(|e| SubmitError::Invalid(e.to_string()))?;
        let id = Block::id_of(bytes);
        if let Some(durable) = self.log.durable_mark(&LogId::V2(id)) {
            return Ok((
                Submitted {
                    block_id: id,
                    inserted: false,
                },
                durable,
            ));
        }
        self.check_block(&block, bytes)?;
        let (appended, durable) = self
            .log
            .append_nowait(&LogId::V2(id), bytes)
            .map_err(internal)?;
        self.stored();
        let tx_id = whiteflag::transaction_id(&block, bytes);
        let is_milestone = matches!(block.payload, Some(Payload::Milestone(_)));
        if is_milestone {
            self.log.wait_durable_at(durable).map_err(internal)?;
        }
        let arrived = {
            let mut st = self.write();
            let record = appended.location.to_u64();
            let inserted = Self::insert_block(&mut st, id, &block, tx_id, record);
            let mut arrived = Vec::new();
            if inserted && whiteflag::has_signatures(&block) {
                st.unverified.push((id, record));
                if st.unverified.len() >= whiteflag::ARRIVAL_BATCH {
                    arrived = std::mem::take(&mut st.unverified);
                }
            }
            arrived
        };
        if !arrived.is_empty() {
            self.verify_arrived(&arrived);
        }
        if is_milestone {
            self.confirm_pending(Replay::No)
                .map_err(|e| SubmitError::Internal(e.to_string()))?;
        }
        Ok((
            Submitted {
                block_id: id,
                inserted: appended.inserted,
            },
            durable,
        ))
    }

    /// The submit error for a failed append: 503 `storage full` when the disk is full (the
    /// change of state logged once), else an internal fault.
    fn store_error(&self, e: crate::log::LogError) -> SubmitError {
        if e.is_storage_full() {
            if !self.storage_full.swap(true, Ordering::Relaxed) {
                tracing::warn!("storage full: refusing blocks until space returns ({e})");
            }
            SubmitError::Unavailable(
                "storage full: the node stores no blocks until disk space returns".into(),
            )
        } else {
            SubmitError::Internal(e.to_string())
        }
    }

    /// Notes a successful append (logs the end of a storage-full state).
    fn stored(&self) {
        if self.storage_full.load(Ordering::Relaxed)
            && self.storage_full.swap(false, Ordering::Relaxed)
        {
            tracing::info!("storage available again: accepting blocks");
        }
    }

    /// Calls `f` once `mark` (from [`Engine::submit_v2_nowait`]) is durable, or with the
    /// log's error; see [`Log::on_durable`].
    pub fn on_durable(
        &self,
        mark: Durable,
        f: impl FnOnce(Result<(), crate::log::LogError>) + Send + 'static,
    ) {
        self.log.on_durable(mark, f);
    }

    /// Verifies the signatures of arrived transaction blocks (outside the
    /// state lock) and caches the verdicts for white-flag.
    fn verify_arrived(&self, arrived: &[(BlockId, u64)]) {
        // Blocks a milestone referenced meanwhile were verified by white-flag.
        let arrived: Vec<(BlockId, u64)> = {
            let st = self.read();
            arrived
                .iter()
                .filter(|(id, _)| st.tangle.get(id).is_some_and(|m| m.referenced_by.is_none()))
                .copied()
                .collect()
        };
        let verdicts = whiteflag::verify_arrived(&self.log, &arrived);
        let mut st = self.write();
        for (id, mask) in verdicts {
            st.tangle.set_signature_verdicts(&id, mask);
        }
    }

    /// Verifies the signatures of the transaction blocks submitted since the
    /// last arrival batch now, instead of when the batch fills or at confirmation.
    pub fn flush_signature_checks(&self) {
        let arrived = std::mem::take(&mut self.write().unverified);
        self.verify_arrived(&arrived);
    }

    /// The signature verdicts cached for the unreferenced block `id` (bit i:
    /// unlock i holds a valid signature), if it was verified on arrival.
    pub fn cached_signature_verdicts(&self, id: &BlockId) -> Option<u128> {
        self.read().tangle.signature_verdicts(id)
    }

    /// Forgets every signature verdict checked on arrival, so the next
    /// confirmation verifies every signature of its cone (benchmarks, tests).
    pub fn forget_signature_verdicts(&self) {
        let mut st = self.write();
        st.unverified.clear();
        st.tangle.clear_signature_verdicts();
    }

    fn check_block(&self, block: &Block<'_>, bytes: &[u8]) -> Result<(), SubmitError> {
        let params = self.params();
        let invalid = |m: String| Err(SubmitError::Invalid(m));
        if block.protocol_version != params.version {
            return invalid(format!(
                "protocolVersion invalid: {}",
                block.protocol_version
            ));
        }
        block
            .validate(params)
            .map_err(|e| SubmitError::Invalid(e.to_string()))?;
        match &block.payload {
            Some(Payload::Milestone(m)) => self.check_milestone(block, m)?,
            _ => {
                if !ledger_codec::pow::meets_score(bytes, params.min_pow_score) {
                    return invalid(format!(
                        "block has insufficient PoW score {:.2} (minimum {})",
                        ledger_codec::pow::pow_score(bytes),
                        params.min_pow_score
                    ));
                }
            }
        }
        let st = self.read();
        st.tangle
            .check_attachable(&block.parents)
            .map_err(|e| SubmitError::Invalid(e.to_string()))
    }

    fn check_milestone(&self, block: &Block<'_>, m: &Milestone<'_>) -> Result<(), SubmitError> {
        let invalid = |s: String| Err(SubmitError::Invalid(s));
        if block.nonce != 0 {
            return invalid("milestone blocks must have nonce 0".into());
        }
        if m.parents[..] != block.parents[..] {
            return invalid("milestone parents differ from the block's parents".into());
        }
        let id = m.id();
        let mut valid = 0usize;
        for s in m.signatures.iter() {
            if !self.coordinator_keys.contains(&s.public_key) {
                return invalid(format!(
                    "milestone signed by unknown key {}",
                    hex32(&s.public_key)
                ));
            }
            if !s.verify(&id) {
                return invalid(format!(
                    "invalid milestone signature by {}",
                    hex32(&s.public_key)
                ));
            }
            valid += 1;
        }
        if valid < self.threshold {
            return invalid(format!(
                "milestone has {valid} valid signatures, {} needed",
                self.threshold
            ));
        }
        let st = self.read();
        if m.index <= st.ledger.ledger_index() {
            return invalid(format!(
                "milestone {} is not newer than the ledger index {}",
                m.index,
                st.ledger.ledger_index()
            ));
        }
        Ok(())
    }

    /// Confirms pending milestones in index order while the next one is known.
    fn confirm_pending(&self, replay: Replay) -> Result<(), EngineError> {
        let _guard = self
            .confirming
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        loop {
            let next = {
                let st = self.read();
                let want = st.ledger.ledger_index() + 1;
                st.pending
                    .range(..=want)
                    .next_back()
                    .filter(|(i, _)| **i == want)
                    .map(|(_, id)| *id)
            };
            let Some(block_id) = next else { return Ok(()) };
            // A milestone whose past cone is incomplete (a salvaged log) waits: white flag
            // needs every block of the cone.
            if !self.read().tangle.get(&block_id).is_some_and(|m| m.solid) {
                tracing::warn!(
                    block = %hex32(&block_id),
                    "the next milestone's past cone is incomplete: confirmation stops here"
                );
                return Ok(());
            }
            self.confirm_milestone_block(block_id, None, Instant::now(), replay)?;
        }
    }

    /// White-flag + apply for one milestone block. `precomputed` skips the walk
    /// when the coordinator already computed it for the same parents.
    /// `started` is when the work on this milestone began (the log line reports the time
    /// since); a replayed milestone is logged at debug level only.
    fn confirm_milestone_block(
        &self,
        block_id: BlockId,
        precomputed: Option<Confirmation>,
        started: Instant,
        replay: Replay,
    ) -> Result<bool, EngineError> {
        let rec = self.log.get(&LogId::V2(block_id)).ok_or_else(|| {
            EngineError::Inconsistent("milestone block missing from the log".into())
        })?;
        let block =
            Block::decode(rec.bytes()).map_err(|e| EngineError::Inconsistent(e.to_string()))?;
        let Some(Payload::Milestone(m)) = &block.payload else {
            return Err(EngineError::Inconsistent(
                "pending milestone block without milestone".into(),
            ));
        };
        let mut conf = match precomputed {
            Some(c) => c,
            None => {
                let st = self.read();
                whiteflag::compute(
                    whiteflag::Store {
                        tangle: &st.tangle,
                        ledger: &st.ledger,
                        log: &self.log,
                        genesis_blob: &self.genesis.blob,
                    },
                    &m.parents,
                    m.timestamp,
                    self.params(),
                    self.indexer.is_some(),
                )?
            }
        };
        let mut st = self.write();
        st.pending.remove(&m.index);
        let previous = st.milestones.values().next_back().copied();
        let prev_ok = match previous {
            Some(p) => {
                m.previous_milestone_id.as_array() == &p.milestone_id && m.timestamp > p.timestamp
            }
            None => m.previous_milestone_id.is_zero(),
        };
        if !prev_ok
            || conf.inclusion_root != *m.inclusion_merkle_root.as_array()
            || conf.applied_root != *m.applied_merkle_root.as_array()
        {
            tracing::warn!(
                index = m.index,
                "milestone rejected: previous milestone or Merkle roots do not match"
            );
            return Ok(false);
        }
        st.ledger
            .apply(m.index, m.timestamp, &conf.created, &conf.consumed)
            .map_err(|e| EngineError::Inconsistent(e.to_string()))?;
        st.richlist
            .apply_milestone(m.index, conf.balance_changes.iter().copied())
            .map_err(|e| EngineError::Inconsistent(e.to_string()))?;
        st.tangle.confirm(m.index, &conf.referenced);
        st.referenced = st
            .referenced
            .saturating_add(u64::try_from(conf.referenced.len()).unwrap_or(u64::MAX));
        let info = MilestoneInfo {
            index: m.index,
            timestamp: m.timestamp,
            milestone_id: m.id(),
            block_id,
        };
        st.milestone_ids.insert(info.milestone_id, info.index);
        st.milestones.insert(m.index, info);
        let (healthy, semi_lazy, lazy) = st.tangle.tip_pool_sizes();
        drop(st);
        // Milestones are confirmed one at a time (`confirming`), so they reach the indexer in
        // order.
        if let Some(indexer) = &self.indexer {
            let consumed = conf.consumed.iter().map(|(id, _)| *id).collect();
            indexer.apply(
                m.index,
                m.timestamp,
                std::mem::take(&mut conf.indexed),
                consumed,
            );
        }
        if replay == Replay::No {
            if let Err(e) = self.confirmed_mark.write(m.index) {
                tracing::error!(index = m.index, "cannot record the confirmed index: {e}");
            }
        }
        let took = started.elapsed();
        let ms = took.as_secs_f64() * 1000.0;
        if replay == Replay::No {
            if let Some(observer) = self.timings.get() {
                observer.milestone_confirmed(took);
            }
        }
        if replay == Replay::Yes {
            tracing::debug!(
                index = m.index,
                referenced = conf.referenced.len(),
                "milestone replayed"
            );
        } else {
            tracing::info!(
                index = m.index,
                referenced = conf.referenced.len(),
                took_ms = format_args!("{ms:.1}"),
                tips = format_args!("{healthy}/{semi_lazy}/{lazy}"),
                "milestone confirmed"
            );
        }
        Ok(true)
    }

    /// Up to 4 non-lazy tips, unique and sorted; with none, the last
    /// milestone block or the first solid entry point.
    pub fn select_parents(&self) -> Vec<BlockId> {
        let st = self.read();
        let mut tips = st.tangle.select_tips(4, &mut rand::thread_rng());
        if tips.is_empty() {
            if let Some(m) = st.milestones.values().next_back() {
                tips.push(m.block_id);
            } else if let Some(sep) = self.genesis.solid_entry_points.first() {
                tips.push(*sep);
            }
        }
        tips
    }

    /// Finds a nonce for `body` (a block without its nonce) at the network's
    /// minimum score; `cancel` stops the search.
    pub fn mine(&self, body: &[u8], cancel: &AtomicBool) -> Option<u64> {
        ledger_codec::pow::mine(body, self.params().min_pow_score, self.pow_workers, cancel)
    }

    /// Issues a milestone now (dev coordinator): checkpoints gather tips that
    /// do not fit into one block, then the milestone references every tip.
    /// Returns once the milestone is confirmed.
    ///
    /// # Errors
    /// No coordinator, or a fault while building or confirming.
    pub fn issue_milestone(&self) -> Result<MilestoneInfo, EngineError> {
        let key = self
            .coordinator
            .as_ref()
            .ok_or(EngineError::NoCoordinator)?;
        if self.shutting_down.load(Ordering::Relaxed) {
            return Err(EngineError::ShuttingDown);
        }
        let _guard = self
            .confirming
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let started = Instant::now();
        let mut parents = self.read().tangle.tips();
        while parents.len() > 8 {
            parents = self.issue_checkpoints(&parents)?;
        }
        if parents.is_empty() {
            parents = self.select_parents();
        }
        let (index, timestamp, previous) = {
            let st = self.read();
            let last = st.milestones.values().next_back().copied();
            let ts =
                now_secs().max(last.map_or(self.genesis.milestone_timestamp, |l| l.timestamp) + 1);
            (
                st.ledger.ledger_index() + 1,
                ts,
                last.map_or([0; 32], |l| l.milestone_id),
            )
        };
        let conf = {
            let st = self.read();
            whiteflag::compute(
                whiteflag::Store {
                    tangle: &st.tangle,
                    ledger: &st.ledger,
                    log: &self.log,
                    genesis_blob: &self.genesis.blob,
                },
                &parents,
                timestamp,
                self.params(),
                self.indexer.is_some(),
            )?
        };
        let mut milestone = Milestone {
            index,
            timestamp,
            protocol_version: PROTOCOL_VERSION,
            previous_milestone_id: Hash32::from(previous),
            parents: parents.clone().into(),
            inclusion_merkle_root: Hash32::from(conf.inclusion_root),
            applied_merkle_root: Hash32::from(conf.applied_root),
            metadata: Bytes::default(),
            options: Vec::new(),
            signatures: Vec::new().into(),
        };
        let id = milestone.id();
        milestone.signatures = vec![Ed25519Signature::new(key.public_key(), key.sign(&id))].into();
        let block = Block {
            protocol_version: PROTOCOL_VERSION,
            parents: parents.into(),
            payload: Some(Payload::Milestone(milestone)),
            nonce: 0,
        };
        let bytes = block.to_bytes();
        let block_id = Block::id_of(&bytes);
        if let Some(mark) = &self.issued_mark {
            if let Some(issued) = mark.read()?.filter(|&i| i >= index) {
                return Err(EngineError::Inconsistent(format!(
                    "refusing to issue milestone {index}: this key already issued {issued}"
                )));
            }
        }
        let appended = self.log.append(&LogId::V2(block_id), &bytes)?;
        // The log is the record of issuance; the mark outlives a lost log.
        if let Some(mark) = &self.issued_mark {
            if let Err(e) = mark.write(index) {
                tracing::error!(index, "cannot record the issued milestone index: {e}");
            }
        }
        {
            let mut st = self.write();
            Self::insert_block(&mut st, block_id, &block, None, appended.location.to_u64());
        }
        if !self.confirm_milestone_block(block_id, Some(conf), started, Replay::No)? {
            return Err(EngineError::Inconsistent(format!(
                "own milestone {index} was not confirmed"
            )));
        }
        let info = self.read().milestones.get(&index).copied();
        info.ok_or_else(|| EngineError::Inconsistent("milestone not recorded".into()))
    }

    /// One level of checkpoint blocks gathering `tips` eight at a time; returns their ids,
    /// sorted. The blocks are written without waiting for an fsync each (the milestone's
    /// own durable append, after them in the log, covers them all) and enter the tangle
    /// under one lock, so a wide tip pool costs the coordinator one fsync, not one per
    /// checkpoint, and client submits are not held up block by block.
    fn issue_checkpoints(&self, tips: &[BlockId]) -> Result<Vec<BlockId>, EngineError> {
        let cancel = AtomicBool::new(false);
        let mut written = Vec::with_capacity(tips.len().div_ceil(8));
        for chunk in tips.chunks(8) {
            let mut block = Block {
                protocol_version: PROTOCOL_VERSION,
                parents: chunk.to_vec().into(),
                payload: None,
                nonce: 0,
            };
            let bytes = block.to_bytes();
            let body = bytes.get(..bytes.len() - 8).unwrap_or_default();
            block.nonce = self.mine(body, &cancel).unwrap_or(0);
            let bytes = block.to_bytes();
            let id = Block::id_of(&bytes);
            let (appended, _durable) = self.log.append_nowait(&LogId::V2(id), &bytes)?;
            written.push((id, block, appended.location.to_u64()));
        }
        let mut st = self.write();
        let mut ids = Vec::with_capacity(written.len());
        for (id, block, record) in &written {
            Self::insert_block(&mut st, *id, block, None, *record);
            ids.push(*id);
        }
        drop(st);
        ids.sort_unstable();
        Ok(ids)
    }

    /// Starts the coordinator thread issuing a milestone every `interval`
    /// (nothing when zero or without coordinator).
    pub fn start_coordinator(
        self: &Arc<Self>,
        interval: Duration,
    ) -> Option<std::thread::JoinHandle<()>> {
        if self.coordinator.is_none() || interval.is_zero() {
            return None;
        }
        let engine = Arc::clone(self);
        std::thread::Builder::new()
            .name("coordinator".into())
            .spawn(move || {
                // A failure repeats every interval (a full disk): logged when it changes.
                let mut failing: Option<String> = None;
                while !engine.shutting_down.load(Ordering::Relaxed) {
                    std::thread::sleep(interval);
                    if engine.shutting_down.load(Ordering::Relaxed) {
                        break;
                    }
                    match engine.issue_milestone() {
                        Ok(_) if failing.take().is_some() => {
                            tracing::info!("coordinator: issuing milestones again");
                        }
                        Ok(_) => {}
                        Err(e) => {
                            let text = e.to_string();
                            if failing.as_deref() != Some(text.as_str()) {
                                tracing::error!("coordinator: {text} (repeats are not logged)");
                                failing = Some(text);
                            }
                        }
                    }
                }
            })
            .ok()
    }

    /// Stops the coordinator and flushes the log.
    ///
    /// # Errors
    /// The final fsync failed.
    pub fn shutdown(&self) -> Result<(), EngineError> {
        self.shutting_down.store(true, Ordering::Relaxed);
        let _guard = self
            .confirming
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.log.sync()?;
        Ok(())
    }

    // ---- queries -------------------------------------------------------

    /// The serialized block `id`, zero-copy from the log.
    pub fn block_bytes(&self, id: &BlockId) -> Option<&[u8]> {
        self.log.get(&LogId::V2(*id)).map(|r| r.bytes())
    }

    /// Metadata of block `id`.
    pub fn block_meta(&self, id: &BlockId) -> Option<BlockMeta> {
        self.read().tangle.get(id).cloned()
    }

    /// Metadata of `id` with its tip score at the current CMI (`None` unless
    /// solid and unreferenced), read under one lock.
    pub fn block_meta_scored(&self, id: &BlockId) -> Option<(BlockMeta, Option<TipScore>)> {
        let st = self.read();
        let meta = st.tangle.get(id)?.clone();
        Some((meta, st.tangle.tip_score(id)))
    }

    /// The ledger index, and the confirmed milestone.
    pub fn ledger_index(&self) -> u32 {
        self.read().ledger.ledger_index()
    }

    /// The latest confirmed milestone.
    pub fn latest_milestone(&self) -> Option<MilestoneInfo> {
        self.read().milestones.values().next_back().copied()
    }

    /// Milestone by index.
    pub fn milestone_by_index(&self, index: u32) -> Option<MilestoneInfo> {
        self.read().milestones.get(&index).copied()
    }

    /// Milestone by id.
    pub fn milestone_by_id(&self, id: &[u8; 32]) -> Option<MilestoneInfo> {
        let st = self.read();
        st.milestone_ids
            .get(id)
            .and_then(|i| st.milestones.get(i))
            .copied()
    }

    /// An output with its metadata at the current ledger index.
    pub fn output(&self, id: &[u8; 34]) -> Option<OutputRead> {
        let st = self.read();
        let row = st.ledger.get(id)?;
        let bytes = whiteflag::output_bytes(&self.log, &self.genesis.blob, row.loc)?.to_vec();
        Some(OutputRead {
            row,
            bytes,
            ledger_index: st.ledger.ledger_index(),
        })
    }

    /// The block that included transaction `tx` (via its output 0 in the ledger).
    pub fn included_block(&self, tx: &[u8; 32]) -> Option<BlockId> {
        let mut oid = [0u8; 34];
        oid[..32].copy_from_slice(tx);
        let st = self.read();
        let row = st.ledger.get(&oid)?;
        (row.loc.record != BytesLoc::GENESIS).then_some(row.block_id)
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
        let st = self.read();
        let at = at.unwrap_or_else(|| st.richlist.ledger_index());
        st.richlist.top(top, at).map(|v| (at, v))
    }

    /// True when the engine keeps the TIP-26 output indexes ([`EngineConfig::indexer`]).
    pub fn has_indexer(&self) -> bool {
        self.indexer.is_some()
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
    /// milestone this node has not confirmed.
    pub fn utxo_changes(&self, index: u32) -> Option<UtxoChanges> {
        let st = self.read();
        st.milestones.get(&index)?;
        let diff = st.ledger.diff(index)?;
        let ids = |rows: &[u32]| -> Vec<OutputId> {
            rows.iter()
                .filter_map(|r| st.ledger.row(*r).map(|row| row.output_id))
                .collect()
        };
        Some(UtxoChanges {
            index,
            created: ids(&diff.created),
            consumed: ids(&diff.consumed),
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

    /// Sizes of the tip pool: `(healthy, semi-lazy, lazy)` at the current CMI.
    pub fn tip_pool_sizes(&self) -> (usize, usize, usize) {
        self.read().tangle.tip_pool_sizes()
    }

    /// Number of blocks in the tangle.
    pub fn block_count(&self) -> usize {
        self.read().tangle.len()
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

    /// The ledger's diff of milestone `index`: (created, consumed) output ids.
    pub fn milestone_diff(&self, index: u32) -> Option<MilestoneDiff> {
        let st = self.read();
        let d = st.ledger.diff(index)?;
        let ids = |rows: &[u32]| {
            rows.iter()
                .filter_map(|r| st.ledger.row(*r).map(|o| o.output_id))
                .collect()
        };
        Some((ids(&d.created), ids(&d.consumed)))
    }

    /// Location of a block's record (for zero-copy readers).
    pub fn block_location(&self, id: &BlockId) -> Option<Location> {
        self.log.get(&LogId::V2(*id)).map(|r| r.location())
    }

    /// Every block's inclusion state (for tests and tools).
    pub fn inclusion(&self, id: &BlockId) -> Option<Inclusion> {
        self.read().tangle.get(id).map(|m| m.inclusion)
    }
}
