//! Opening a node's state: coordinator key, genesis, log replay, watermarks.

use super::*;

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
            return Err(ConfigError::ZeroThreshold.into());
        }
        if !coordinator_keys.is_empty() && threshold > coordinator_keys.len() {
            return Err(ConfigError::ThresholdAboveKeys {
                threshold,
                keys: coordinator_keys.len(),
            }
            .into());
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
                .map_err(GenesisError::Decode)?;
            let owner = whiteflag::owning_address(&output);
            if let Some(a) = owner {
                richlist
                    .credit_genesis(a, output.amount())
                    .map_err(GenesisError::RichList)?;
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
            .map_err(GenesisError::Ledger)?;
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
            broadcast: OnceLock::new(),
            indexer,
        };
        engine.replay()?;
        engine.check_watermarks()?;
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

    pub(super) fn replay(&self) -> Result<(), EngineError> {
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
            let tx_id = ledger_codec::stardust::transaction_id_of_block(rec.bytes());
            Self::insert_block(&mut st, id, &block, tx_id, rec.location().to_u64(), None);
        }
        drop(st);
        let confirmed = self.confirm_pending(Replay::Yes);
        self.write().tangle.end_bulk_load();
        confirmed
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
