//! Opening a node's state: coordinator key, genesis, history (checkpoint and journal, or a
//! replay of the log), watermarks.

use super::*;
use crate::history::ledger_checkpoint::BookedOutput;
use crate::history::{MilestoneIndex, OpenedJournal};

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
        let log = Arc::new(Log::open(
            config.data_dir.join("log"),
            LogConfig::default()
                .with_durability(config.durability)
                .with_segment_size(config.log_segment_size),
        )?);
        let history_dir = config.data_dir.join(history::DIR);
        // Once pruning retired log segments, the ledger starts at the base it wrote
        // (`retire.rs`), not at the genesis.
        let base = history::ledger_base::read(&history_dir, &config.genesis.params.network_name)
            .map_err(HistoryError::from)?;
        if let Some(b) = &base {
            tracing::info!(
                ledger_index = b.milestone_index,
                outputs = b.outputs.len(),
                "the ledger starts at its base (history/base.bin)"
            );
        }
        let start = base.as_ref().unwrap_or(&config.genesis);
        std::fs::create_dir_all(&history_dir).map_err(|source| EngineError::Io {
            context: format!("creating {}", history_dir.display()),
            source,
        })?;
        // The page caches of the spent outputs (three quarters) and the milestone index.
        let cache = config.history_cache_bytes;
        let spent = spent::SpentRows::open(&history_dir, cache - cache / 4)?;
        let milestone_index = Arc::new(history::open_or_empty(
            &history_dir.join(history::MILESTONE_INDEX_FILE),
            "filled again from the milestone journal",
            |p| MilestoneIndex::open(p, cache / 4),
        )?);
        // The unspent outputs at a milestone L, when they fit: the journal is then applied
        // from L + 1 (and only framed up to L).
        let mut ledger_checkpoint = usable_ledger_checkpoint(
            &history_dir,
            config.genesis.milestone_index,
            start.milestone_index,
            spent.store.through()?,
        );
        let (metas, resume, why) = open_history(
            &history_dir,
            (&log, Arc::clone(&milestone_index)),
            (config.genesis.milestone_index, start.milestone_index),
            ledger_checkpoint.as_ref().map(|lc| lc.header.ledger_index),
        )?;
        match &resume {
            Some(Resumed { checkpoint, .. }) => {
                if ledger_checkpoint
                    .as_ref()
                    .is_some_and(|lc| lc.header.ledger_index > checkpoint.ledger_index)
                {
                    tracing::info!(
                        checkpoint = checkpoint.ledger_index,
                        "the ledger checkpoint is newer than the checkpoint: the milestone \
                         journal is applied from the start"
                    );
                    ledger_checkpoint = None;
                }
            }
            None => {
                history::ledger_checkpoint::remove(&history_dir)?;
                ledger_checkpoint = None;
            }
        }
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
            return Err(ConfigError::ZeroThreshold.into());
        }
        if !coordinator_keys.is_empty() && threshold > coordinator_keys.len() {
            return Err(ConfigError::ThresholdAboveKeys {
                threshold,
                keys: coordinator_keys.len(),
            }
            .into());
        }
        let g = start;
        let scoring = TipScoring {
            below_max_depth: u32::from(g.params.below_max_depth),
            ..TipScoring::default()
        };
        let tangle = Tangle::new(
            g.solid_entry_points.iter().map(|s| (*s, g.milestone_index)),
            g.milestone_index,
            scoring,
        )
        .with_archive(Box::new(metas));
        let from_checkpoint = ledger_checkpoint.and_then(|lc| {
            let at = lc.header.ledger_index;
            let reader = log.reader();
            let opened = unspent_state(at, g.milestone_index, &lc.outputs, |loc| {
                whiteflag::output_bytes(&reader, &g.blob, loc)
            });
            match opened {
                Ok(state) => {
                    tracing::info!(
                        ledger_index = at,
                        outputs = lc.outputs.len(),
                        "the ledger opens at its checkpoint (history/ledger.checkpoint)"
                    );
                    Some((state, at + 1))
                }
                Err(e) => {
                    tracing::warn!(
                        "{}: {e}; not used: the milestone journal is applied from the start",
                        history_dir.join(history::ledger_checkpoint::FILE).display()
                    );
                    None
                }
            }
        });
        let (ledger, richlist, indexer, journal_from) = match from_checkpoint {
            Some(((ledger, richlist, indexer), from)) => (ledger, richlist, indexer, from),
            None => {
                let outputs = genesis_outputs(g)?;
                let (ledger, richlist, indexer) =
                    unspent_state(g.milestone_index, g.milestone_index, &outputs, |loc| {
                        g.blob.get(
                            loc.offset as usize
                                ..(loc.offset as usize).saturating_add(loc.len as usize),
                        )
                    })
                    .map_err(UnspentError::into_genesis)?;
                (ledger, richlist, indexer, g.milestone_index + 1)
            }
        };
        let indexer = match config.indexer {
            true => Some(
                IndexerService::start(indexer).map_err(|source| EngineError::Io {
                    context: "starting the indexer thread".into(),
                    source,
                })?,
            ),
            false => None,
        };
        let start_index = g.milestone_index;
        let ledger_start = LedgerStart {
            milestone_id: g.milestone_id,
            timestamp: g.milestone_timestamp,
            entry_point: g.solid_entry_points.first().copied(),
        };
        // The output bytes move into the state (a base's replace them at each retirement);
        // the engine's genesis keeps the network's identity without them.
        let mut genesis = config.genesis.clone();
        let base_blob = match base {
            Some(b) => b.blob,
            None => std::mem::take(&mut genesis.blob),
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
        let journal_path = history_dir.join(JOURNAL);
        let checkpoint_path = history_dir.join(CHECKPOINT);
        // The journal written since the ledger checkpoint counts towards the next one.
        let due_from = match (&resume, journal_from > start_index + 1) {
            (Some(r), true) => r.journal.end_of(journal_from - 1)?,
            _ => 0,
        };
        let (journal, milestones, resume) = match resume {
            Some(Resumed {
                checkpoint,
                journal,
                milestones,
                framed,
            }) => {
                let entries = journal.replay(journal_from)?;
                (journal, milestones, Some((checkpoint, entries, framed)))
            }
            None => {
                // The checkpoint goes first: a crash in between leaves no checkpoint that
                // names journal entries which are gone.
                Checkpoint::remove(&checkpoint_path)?;
                let journal = Journal::create(&journal_path, start_index + 1, milestone_index)?;
                (
                    journal,
                    Milestones::new(start_index.saturating_add(1)),
                    None,
                )
            }
        };
        let engine = Self {
            log,
            history_dir,
            checkpoint_interval: config.checkpoint_interval.max(1),
            inflight: InFlight::default(),
            opened: OnceLock::new(),
            checkpointer: Checkpointer::default(),
            spent,
            // A ledger started from a snapshot at T holds nothing at or below T (Hornet sets
            // its pruning index to T on import); one started from its base, nothing at or
            // below the base.
            pruning: prune::Pruning::new(start_index, config.pruning.clone()),
            snapshots: snapshot_auto::Snapshots::new(config.snapshots.clone()),
            genesis,
            start: ledger_start,
            retire_scan: retire::RetireScan::default(),
            early_seal: seal_early::EarlySeal::default(),
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
                milestones,
                pending: BTreeMap::new(),
                referenced: 0,
                unverified: Vec::new(),
                journal,
                journal_ok: true,
                base_blob,
                base_index: start_index,
            }),
            ledger_checkpoints: ledger_checkpoint::Due::new(
                config.ledger_checkpoint_bytes,
                due_from,
            ),
            confirming: Mutex::new(()),
            confirm_wanted: AtomicBool::new(false),
            shutting_down: AtomicBool::new(false),
            storage_full: AtomicBool::new(false),
            timings: OnceLock::new(),
            recent: RecentConfirmations::default(),
            broadcast: OnceLock::new(),
            events: OnceLock::new(),
            indexer,
        };
        let opened = match resume {
            Some((checkpoint, entries, framed)) => {
                engine.resume(&checkpoint, (entries, framed), start_index)?
            }
            None => {
                engine.replay()?;
                Opened::Replay { why }
            }
        };
        tracing::info!(?opened, "state opened");
        let _ = engine.opened.set(opened);
        engine.check_watermarks()?;
        engine.checkpoint()?;
        Ok(Arc::new(engine))
    }

    /// Refuses a log that ends before what this node confirmed, or before what its
    /// coordinator key issued: blocks were lost (a deleted or replaced segment), and going
    /// on would re-issue or re-confirm milestones with other contents.
    pub(super) fn check_watermarks(&self) -> Result<(), EngineError> {
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

    /// Rebuilds the state from the whole log: every block into the tangle, then every
    /// milestone confirmed again.
    pub(super) fn replay(&self) -> Result<(), EngineError> {
        tracing::info!(
            records = self.log.len(),
            "no usable checkpoint: replaying the block log"
        );
        // Every spent row is stored again as the milestones are confirmed again.
        self.spent.store.clear()?;
        let mut st = self.write();
        st.tangle.begin_bulk_load();
        let reader = self.log.reader();
        let mut last = None;
        for rec in reader.iter() {
            Self::load_record(&mut st, &rec)?;
            last = Some(rec.location().to_u64());
        }
        // Every record is in the tangle now: the next checkpoint's tail is after them.
        if let Some(last) = last {
            self.inflight.appended(last);
        }
        drop(st);
        let confirmed = self.confirm_pending(Replay::Yes);
        self.write().tangle.end_bulk_load();
        confirmed
    }

    /// Opens the state at `checkpoint`: the journal's milestones up to it applied to the
    /// ledger, rich list and indexer; the blocks unreferenced then and the log tail after it
    /// loaded into the tangle; then the milestones stored after it confirmed again.
    fn resume(
        &self,
        checkpoint: &Checkpoint,
        (entries, framed): (ReplayEntries, u32),
        start_index: u32,
    ) -> Result<Opened, EngineError> {
        let inconsistent = |e: String| EngineError::Inconsistent(e);
        // The store holds nothing spent after the checkpoint (a crash may have left rows of
        // milestones confirmed after it, which are confirmed again now).
        self.spent.store.remove_spent(
            checkpoint.ledger_index.saturating_add(1)..=u32::MAX,
            Some(checkpoint.ledger_index),
        )?;
        let stored_through = self.spent.store.through()?;
        let mut applied = 0u32;
        let mut st = self.write();
        for e in entries {
            let e = e?;
            st.ledger
                .apply(e.index, e.timestamp, &e.created, &e.consumed)
                .map_err(|err| inconsistent(err.to_string()))?;
            // What the store holds leaves memory at once; the rest in batches.
            if e.index <= stored_through {
                st.ledger.drop_spent_through(e.index);
            } else if st.ledger.spent_in_memory() >= spent::OPEN_BATCH {
                drop(st);
                self.store_spent(e.index, spent::OPEN_BATCH)?;
                st = self.write();
            }
            st.richlist
                .apply_milestone(e.index, e.balance_changes.iter().copied())
                .map_err(|err| inconsistent(err.to_string()))?;
            if let Some(indexer) = &self.indexer {
                let indexed = self.index_entries(&st.base_blob, &e.created)?;
                let consumed = e.consumed.iter().map(|(id, _)| *id).collect();
                indexer.apply(e.index, e.timestamp, indexed, consumed);
            }
            applied += 1;
        }
        let pruned = checkpoint.pruning_index.max(start_index);
        self.pruning.index.store(pruned, Ordering::Release);
        if checkpoint.pruning_index > start_index {
            Self::forget_through(&mut st, pruned);
            // A crash between a pruning step and its checkpoint may have left them.
            self.spent.store.remove_spent(0..=pruned, None)?;
        }
        st.referenced = checkpoint.referenced;
        st.tangle.resume_at(checkpoint.ledger_index);
        st.tangle.begin_bulk_load();
        let reader = self.log.reader();
        for record in &checkpoint.unreferenced {
            let rec = reader.read(Location::from_u64(*record)).ok_or_else(|| {
                inconsistent(format!(
                    "the checkpoint names a log record at {record:#x} that is not stored"
                ))
            })?;
            Self::load_record(&mut st, &rec)?;
        }
        let tail = Location::from_u64(checkpoint.tail);
        let mut loaded = 0u64;
        let mut last = None;
        for rec in reader.iter_from(tail) {
            Self::load_record(&mut st, &rec)?;
            last = Some(rec.location().to_u64());
            loaded += 1;
        }
        // Every record up to the log's end is in the tangle now: the next checkpoint's tail is
        // after them, not at the log's start (which would load the whole log again).
        self.inflight.loaded_before(checkpoint.tail);
        if let Some(last) = last {
            self.inflight.appended(last);
        }
        drop(st);
        tracing::info!(
            ledger_index = checkpoint.ledger_index,
            unreferenced = checkpoint.unreferenced.len(),
            tail = loaded,
            "opened the state at the checkpoint"
        );
        self.confirm_pending(Replay::Yes)?;
        self.write().tangle.end_bulk_load();
        Ok(Opened::Checkpoint {
            ledger_index: checkpoint.ledger_index,
            journal_applied: applied,
            journal_framed: framed,
            unreferenced: checkpoint.unreferenced.len(),
            tail: loaded,
        })
    }

    /// The indexer entries of outputs created by a journaled milestone (their bytes are read
    /// back from the log, like white flag read them).
    fn index_entries(
        &self,
        base_blob: &[u8],
        created: &[NewOutput],
    ) -> Result<Vec<IndexEntry>, EngineError> {
        let mut out = Vec::with_capacity(created.len());
        let reader = self.log.reader();
        for o in created {
            let bytes = whiteflag::output_bytes(&reader, base_blob, o.loc).ok_or_else(|| {
                EngineError::Inconsistent(format!(
                    "output {} of the journal is not in the log",
                    ledger_codec::hexstr::to_hex(&o.output_id)
                ))
            })?;
            let output = ledger_codec::stardust::Output::decode(bytes)
                .map_err(|e| EngineError::Inconsistent(e.to_string()))?;
            out.extend(IndexEntry::of(&o.output_id, &output));
        }
        Ok(out)
    }

    /// Puts a stored v2 block into the tangle (v3 records are not part of it).
    fn load_record(st: &mut State, rec: &crate::log::Record<'_>) -> Result<(), EngineError> {
        let LogId::V2(id) = rec.id() else {
            return Ok(());
        };
        let Ok(block) = Block::decode(rec.bytes()) else {
            return Err(EngineError::Inconsistent(format!(
                "stored block {} does not decode",
                hex32(&id)
            )));
        };
        let tx_id = ledger_codec::stardust::transaction_id_of_block(rec.bytes());
        Self::insert_block(st, id, &block, tx_id, rec.location().to_u64(), None);
        Ok(())
    }

    /// Adds a stored block to the tangle; `tx_id` is
    /// [`ledger_codec::stardust::transaction_id_of_block`], hashed before the state lock is taken.
    pub(super) fn insert_block(
        st: &mut State,
        id: BlockId,
        block: &Block<'_>,
        tx_id: Option<[u8; 32]>,
        record: u64,
        solidified: Option<&mut Vec<BlockId>>,
    ) -> bool {
        let ms = match &block.payload {
            Some(Payload::Milestone(m)) => Some(m.index),
            _ => None,
        };
        let inserted = st
            .tangle
            .insert(id, block.parents.to_vec(), tx_id, ms, record, solidified);
        if let Some(index) = ms {
            if inserted && index > st.ledger.ledger_index() {
                st.pending.entry(index).or_insert(id);
            }
        }
        inserted
    }
}

/// The checkpoint's file name in the history directory.
pub(super) const CHECKPOINT: &str = "checkpoint";
/// The milestone journal's file name in the history directory.
const JOURNAL: &str = "milestones.journal";
/// The block metadata files' directory in the history directory.
const BLOCKMETA: &str = "blockmeta";

/// What [`open_history`] found to resume from.
struct Resumed {
    checkpoint: Checkpoint,
    /// The journal, open after the checkpoint's entry.
    journal: Journal,
    /// The confirmed milestones, the checkpoint's the latest.
    milestones: Milestones,
    /// How many journal entries the open framed (those the milestone index did not cover).
    framed: u32,
}

type Resume = Option<Resumed>;

/// The reason for a replay, logged as a warning.
fn rebuild(why: String) -> String {
    tracing::warn!("{why}: the state is rebuilt from the block log");
    why
}

/// Opens the history directory: the block metadata files, and the checkpoint with its journal
/// entries when both are usable. A damaged or foreign file is logged, naming it, and the
/// state is then rebuilt from the log (damaged block metadata files are removed first).
/// `genesis_index` is the network's (a checkpoint names it), `start_index` the index the
/// ledger starts at (the genesis's, or the ledger base's): the journal is read from the next.
fn open_history(
    dir: &Path,
    (log, milestone_index): (&Arc<Log>, Arc<MilestoneIndex>),
    (genesis_index, start_index): (u32, u32),
    ledger_at: Option<u32>,
) -> Result<(BlockMetaFiles, Resume, String), EngineError> {
    let meta_dir = dir.join(BLOCKMETA);
    let (metas, usable) = match BlockMetaFiles::open(&meta_dir, Arc::clone(log)) {
        Ok(m) => (m, Ok(())),
        Err(e @ HistoryError::Damaged { .. }) => {
            let why = rebuild(e.to_string());
            std::fs::remove_dir_all(&meta_dir).map_err(|source| EngineError::Io {
                context: format!("removing {}", meta_dir.display()),
                source,
            })?;
            (BlockMetaFiles::open(&meta_dir, Arc::clone(log))?, Err(why))
        }
        Err(e) => return Err(e.into()),
    };
    if let Err(why) = usable {
        return Ok((metas, None, why));
    }
    let checkpoint = match Checkpoint::read(&dir.join(CHECKPOINT)) {
        Ok(Some(c)) if c.genesis_index == genesis_index => c,
        Ok(Some(c)) => {
            let why = rebuild(format!(
                "{}: written for genesis milestone index {}, this network's is {genesis_index}",
                dir.join(CHECKPOINT).display(),
                c.genesis_index
            ));
            return Ok((metas, None, why));
        }
        Ok(None) => {
            let why = "no checkpoint (a new data directory, or one of the previous format)";
            return Ok((metas, None, why.into()));
        }
        Err(e) => return Ok((metas, None, rebuild(e.to_string()))),
    };
    if checkpoint.ledger_index < start_index {
        let why = rebuild(format!(
            "{}: at ledger index {}, before the ledger base at {start_index}",
            dir.join(CHECKPOINT).display(),
            checkpoint.ledger_index
        ));
        return Ok((metas, None, why));
    }
    // Entries a usable ledger checkpoint covers are only framed (their heads read).
    let heads_upto = ledger_at
        .filter(|l| *l <= checkpoint.ledger_index)
        .unwrap_or(0);
    let opened = Journal::open_upto(
        &dir.join(JOURNAL),
        milestone_index,
        (start_index + 1, heads_upto, checkpoint.ledger_index),
    );
    match opened {
        Ok(OpenedJournal {
            journal,
            last,
            framed,
        }) => {
            let mut milestones = Milestones::new(start_index.saturating_add(1));
            if let Some(head) = &last {
                milestones.insert(MilestoneInfo {
                    index: checkpoint.ledger_index,
                    timestamp: head.timestamp,
                    milestone_id: head.milestone_id,
                    block_id: head.block_id,
                });
            }
            // A log that lost blocks the checkpoint names (a deleted or older segment) is
            // not resumed from: the replay that follows meets the watermark check.
            let last_milestone = last.map(|h| LogId::V2(h.block_id));
            let reader = log.reader();
            let complete = last_milestone.is_none_or(|id| log.contains(&id))
                && checkpoint
                    .unreferenced
                    .iter()
                    .all(|r| reader.read(Location::from_u64(*r)).is_some());
            if !complete {
                let why = rebuild(format!(
                    "{}: names blocks the block log does not hold",
                    dir.join(CHECKPOINT).display()
                ));
                return Ok((metas, None, why));
            }
            let resumed = Resumed {
                checkpoint,
                journal,
                milestones,
                framed,
            };
            Ok((metas, Some(resumed), String::new()))
        }
        Err(e @ HistoryError::Damaged { .. }) => Ok((metas, None, rebuild(e.to_string()))),
        Err(HistoryError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            let why = rebuild(format!("{} is missing", dir.join(JOURNAL).display()));
            Ok((metas, None, why))
        }
        Err(e) => Err(e.into()),
    }
}

/// Why the unspent outputs of a ledger checkpoint or of the genesis could not be booked.
#[derive(Debug, thiserror::Error)]
enum UnspentError {
    #[error("the bytes of output {} are not readable", hex32(.0))]
    Missing(OutputId),
    #[error(transparent)]
    Decode(ledger_codec::Error),
    #[error(transparent)]
    RichList(RichListError),
    #[error(transparent)]
    Ledger(crate::utxo::LedgerError),
}

impl UnspentError {
    fn into_genesis(self) -> EngineError {
        match self {
            Self::Decode(e) => GenesisError::Decode(e).into(),
            Self::RichList(e) => GenesisError::RichList(e).into(),
            Self::Ledger(e) => GenesisError::Ledger(e).into(),
            Self::Missing(id) => EngineError::Inconsistent(format!(
                "the bytes of genesis output {} are outside its blob",
                hex32(&id)
            )),
        }
    }
}

/// The genesis's (or ledger base's) outputs as the ledger books them.
fn genesis_outputs(g: &Genesis) -> Result<Vec<BookedOutput>, EngineError> {
    let mut outputs = Vec::with_capacity(g.outputs.len());
    for o in &g.outputs {
        let output = ledger_codec::stardust::Output::decode(g.output_bytes(o))
            .map_err(GenesisError::Decode)?;
        let booked = NewOutput {
            output_id: o.output_id,
            block_id: o.block_id,
            amount: output.amount(),
            owner: whiteflag::owning_address(&output),
            loc: BytesLoc {
                record: BytesLoc::GENESIS,
                offset: o.offset,
                len: o.len,
            },
        };
        outputs.push((booked, o.booked_index, o.booked_timestamp));
    }
    Ok(outputs)
}

/// The ledger, rich list and indexer holding `outputs` (the unspent outputs at `index`, with
/// their booking), the rich list answering back to `oldest` (the journal holds the changes
/// since); `bytes` reads an output's bytes.
fn unspent_state<'a>(
    index: u32,
    oldest: u32,
    outputs: &[BookedOutput],
    bytes: impl Fn(BytesLoc) -> Option<&'a [u8]>,
) -> Result<(Ledger, RichList, Indexer), UnspentError> {
    let mut ledger = Ledger::new(index);
    let mut richlist = RichList::new_at(index, oldest);
    let mut indexer = Indexer::new(index);
    // The indexer files each output under its booking timestamp (a base's or checkpoint's
    // outputs keep theirs), so its answers are the same after a restart.
    let mut entries: BTreeMap<u32, Vec<IndexEntry>> = BTreeMap::new();
    for (o, _, booked_timestamp) in outputs {
        if let Some(a) = o.owner {
            richlist
                .credit_genesis(a, o.amount)
                .map_err(UnspentError::RichList)?;
        }
        let b = bytes(o.loc).ok_or(UnspentError::Missing(o.output_id))?;
        let output = ledger_codec::stardust::Output::decode(b).map_err(UnspentError::Decode)?;
        entries
            .entry(*booked_timestamp)
            .or_default()
            .extend(IndexEntry::of(&o.output_id, &output));
    }
    ledger
        .book_genesis_as_booked(outputs)
        .map_err(UnspentError::Ledger)?;
    for (booked_timestamp, e) in &entries {
        indexer.apply(index, *booked_timestamp, e, &[]);
    }
    Ok((ledger, richlist, indexer))
}

/// The ledger checkpoint in `dir`, if it can open the ledger: of this network, written against
/// the ledger base the node starts from (`start_index`), at a milestone from there whose spent
/// rows are all stored (`stored_through`); the caller also checks that it is not after the
/// checkpoint. A damaged file is logged, naming it, and not used (the journal is then applied
/// from the ledger's start, and the next checkpoints write a new one).
fn usable_ledger_checkpoint(
    dir: &Path,
    genesis_index: u32,
    start_index: u32,
    stored_through: u32,
) -> Option<history::ledger_checkpoint::LedgerCheckpoint> {
    let lc = match history::ledger_checkpoint::read(dir) {
        Ok(lc) => lc?,
        Err(e) => {
            tracing::warn!("{e}: not used; the milestone journal is applied from the start");
            return None;
        }
    };
    let h = lc.header;
    let usable = h.genesis_index == genesis_index
        && h.base_index == start_index
        && (start_index..=stored_through).contains(&h.ledger_index);
    if !usable {
        tracing::info!(
            ledger_index = h.ledger_index,
            base_index = h.base_index,
            stored_through,
            "the ledger checkpoint does not fit the history (an older ledger base, or spent \
             outputs not stored): the milestone journal is applied from the start"
        );
        return None;
    }
    Some(lc)
}
