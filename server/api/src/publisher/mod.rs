//! The event source: the engine's [`EventHook`] feeding the broker (docs/events.md §1).
//!
//! The hook only queues block ids (stored, then solid) and confirmed milestones (never waiting: a full queue drops
//! and counts, and the broker is asked without waiting for its lock); one publisher thread takes them in order and builds a payload only for a
//! topic some client's filter matches. Blocks go out from the bytes the log holds. For each
//! milestone the order is fixed (§1.4): `milestone-info/latest`, block metadata in white-flag
//! order, spent outputs, created outputs with `included-block` on each output 0, the
//! milestone's receipt if it has one, and `milestone-info/confirmed` last. Blocks entering or
//! leaving the tip pool go out on `tip-score-updates` while someone watches it.

mod payloads;
pub mod topics;

use std::{
    sync::{
        mpsc::{sync_channel, Receiver, SyncSender, TrySendError},
        Arc,
    },
    thread,
};

use ledger_codec::{
    stardust::{layout, Block, Milestone, Output, Payload, TaggedData, Transaction},
    Codec,
};
use ledger_engine::{BlockId, ConfirmedMilestone, Engine, EventHook, OutputRead};
use ledger_events::{metrics::DropReason, Broker};

use crate::events::EventService;

/// Events queued between the engine's threads and the publisher thread.
const SOURCE_QUEUE: usize = 65_536;

/// The publisher's pause between batches while events keep coming: at most this much delivery
/// latency, and at most a thousand wake-ups a second instead of one per block.
const BATCH_PAUSE: std::time::Duration = std::time::Duration::from_millis(1);

enum Event {
    Block(BlockId),
    Solid(Vec<BlockId>),
    Milestone(ConfirmedMilestone),
    Tips(Vec<BlockId>),
}

/// The engine's side: queues events for the publisher thread.
struct Hook {
    tx: SyncSender<Event>,
    broker: Arc<Broker>,
}

impl Hook {
    fn send(&self, event: Event) {
        // Nobody connected: nothing to build, nothing to queue.
        if !self.broker.has_clients() {
            return;
        }
        match self.tx.try_send(event) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => self.broker.metrics().dropped(DropReason::SourceBacklog),
            Err(TrySendError::Disconnected(_)) => {}
        }
    }
}

impl EventHook for Hook {
    fn block_stored(&self, id: &BlockId) {
        self.send(Event::Block(*id));
    }

    fn blocks_solid(&self, ids: &[BlockId]) {
        self.send(Event::Solid(ids.to_vec()));
    }

    fn milestone_confirmed(&self, milestone: ConfirmedMilestone) {
        self.send(Event::Milestone(milestone));
    }

    fn tips_changed(&self, ids: &[BlockId]) {
        // Tip changes come with every block: queued only while someone watches them.
        if self.broker.may_have_subscribers(topics::TIP_SCORE_UPDATES) {
            self.send(Event::Tips(ids.to_vec()));
        }
    }
}

/// The event API over an engine: the broker, the publisher thread and the snapshots.
#[derive(Debug)]
pub struct EnginePublisher {
    broker: Arc<Broker>,
    engine: Arc<Engine>,
}

impl EnginePublisher {
    /// Sets the engine's event hook and starts the publisher thread.
    ///
    /// # Errors
    /// The thread cannot be started, or the engine has an event hook already.
    pub fn start(engine: Arc<Engine>, broker: Arc<Broker>) -> std::io::Result<Arc<Self>> {
        let (tx, rx) = sync_channel(SOURCE_QUEUE);
        let hook = Hook {
            tx,
            broker: Arc::clone(&broker),
        };
        if !engine.set_event_hook(Arc::new(hook)) {
            return Err(std::io::Error::other(
                "the engine has an event hook already",
            ));
        }
        let publisher = Arc::new(Self { broker, engine });
        let worker = Arc::clone(&publisher);
        thread::Builder::new()
            .name("mqtt-publisher".into())
            .spawn(move || worker.run(&rx))?;
        Ok(publisher)
    }

    fn run(&self, rx: &Receiver<Event>) {
        let mut latest = 0;
        let mut next = rx.recv().ok();
        while let Some(event) = next {
            self.handle(event, &mut latest);
            // The next event: what queued meanwhile, else after a pause, else whenever it
            // comes. A thread blocked in `recv` is woken by each send, a system call on the
            // submit path for every block stored; while events keep coming it does not block.
            next = rx
                .try_recv()
                .ok()
                .or_else(|| {
                    thread::sleep(BATCH_PAUSE);
                    rx.try_recv().ok()
                })
                .or_else(|| rx.recv().ok());
        }
    }

    fn handle(&self, event: Event, latest: &mut u32) {
        match event {
            Event::Block(id) => self.block(&id, latest),
            Event::Solid(ids) => {
                if self.broker.may_match_under(topics::BLOCK_METADATA) {
                    for id in &ids {
                        self.broker.publish_with(&topics::block_metadata(id), || {
                            payloads::block_metadata(&self.engine, id)
                        });
                    }
                }
            }
            Event::Milestone(m) => self.milestone(&m, latest),
            Event::Tips(ids) => self.tips(&ids),
        }
    }

    fn hrp(&self) -> &str {
        &self.engine.params().bech32_hrp
    }

    /// `blocks` and its subtopics, `milestones` and `milestone-info/latest` for a milestone
    /// (its metadata follows once it is solid, [`Event::Solid`]).
    fn block(&self, id: &BlockId, latest: &mut u32) {
        let Some(held) = self.engine.block_bytes(id) else {
            return;
        };
        let bytes = held.as_slice();
        let b = &self.broker;
        b.publish_with(topics::BLOCKS, || Some(bytes));
        // The block is decoded only for what needs it: a milestone, or the subtopics of a
        // tagged-data or transaction block while some filter may match one of them.
        let kind = layout::payload_kind(bytes);
        let subtopics = matches!(kind, Some(TaggedData::KIND | Transaction::KIND))
            && b.may_match_below(topics::BLOCKS);
        if subtopics || kind == Some(Milestone::KIND) {
            if let Ok(block) = Block::decode(bytes) {
                for topic in topics::block_subtopics(&block) {
                    b.publish_with(&topic, || Some(bytes));
                }
                if let Some(Payload::Milestone(m)) = &block.payload {
                    b.publish_with(topics::MILESTONES, || layout::payload_bytes(bytes));
                    if m.index > *latest {
                        *latest = m.index;
                        let info = m
                            .id()
                            .ok()
                            .map(|milestone_id| ledger_engine::MilestoneInfo {
                                index: m.index,
                                timestamp: m.timestamp,
                                milestone_id,
                                block_id: *id,
                            });
                        if let Some(info) = info {
                            b.publish_with(topics::MILESTONE_LATEST, || {
                                Some(payloads::milestone_info(&info))
                            });
                        }
                    }
                }
            }
        }
    }

    fn milestone(&self, m: &ConfirmedMilestone, latest: &mut u32) {
        let b = &self.broker;
        let info = m.info;
        if info.index > *latest {
            *latest = info.index;
            b.publish_with(topics::MILESTONE_LATEST, || {
                Some(payloads::milestone_info(&info))
            });
        }
        let per_block = b.may_match_under(topics::BLOCK_METADATA);
        for id in &m.referenced {
            let mut built: Option<Option<Vec<u8>>> = None;
            let mut metadata = || {
                built
                    .get_or_insert_with(|| payloads::block_metadata(&self.engine, id))
                    .clone()
            };
            b.publish_with(topics::REFERENCED, &mut metadata);
            if per_block {
                b.publish_with(&topics::block_metadata(id), &mut metadata);
            }
        }
        // Outputs are read back only when some filter may match an output or transaction topic.
        if b.may_match_under("outputs") || b.may_match_under("transactions") {
            for id in &m.consumed {
                self.output_event(id, info.index, true);
            }
            for id in &m.created {
                self.output_event(id, info.index, false);
            }
        }
        b.publish_with(topics::RECEIPTS, || {
            payloads::receipt(&self.engine.block_bytes(&info.block_id)?)
        });
        b.publish_with(topics::MILESTONE_CONFIRMED, || {
            Some(payloads::milestone_info(&info))
        });
    }

    /// `tip-score-updates` for blocks that entered or left the tip pool, and, as inx-mqtt
    /// does while that topic is watched, `block-metadata/{blockId}` for each of them.
    fn tips(&self, ids: &[BlockId]) {
        let b = &self.broker;
        for id in ids {
            let mut built: Option<Option<Vec<u8>>> = None;
            let mut metadata = || {
                built
                    .get_or_insert_with(|| payloads::block_metadata(&self.engine, id))
                    .clone()
            };
            if b.publish_with(topics::TIP_SCORE_UPDATES, &mut metadata) > 0 {
                b.publish_with(&topics::block_metadata(id), &mut metadata);
            }
        }
    }

    /// An output created or spent by milestone `index`: `outputs/{id}`, its unlock topics
    /// (`/spent` when spent), its chain topic when created, and `included-block` for output 0.
    fn output_event(&self, id: &[u8; 34], index: u32, spent: bool) {
        let Some(mut read) = self.engine.output(id) else {
            return;
        };
        // As of that milestone: spent later is not spent yet (created), and the ledger index
        // is the milestone's.
        read.ledger_index = index;
        if read.row.spent.is_some_and(|s| s.index > index) {
            read.row.spent = None;
        }
        let Ok(output) = Output::decode(&read.bytes) else {
            return;
        };
        let mut topics = vec![topics::output(id)];
        topics.extend(topics::unlock_topics(&output, self.hrp(), spent));
        if !spent {
            topics.extend(topics::chain_topic(&output, id));
        }
        let mut built: Option<Option<Vec<u8>>> = None;
        for topic in &topics {
            self.broker.publish_with(topic, || {
                built.get_or_insert_with(|| payloads::output(&read)).clone()
            });
        }
        if !spent && id[32..] == [0, 0] {
            let block_id = read.row.block_id;
            self.broker
                .publish_with(&topics::included_block(&id[..32]), || {
                    self.engine.block_bytes(&block_id)
                });
        }
    }

    fn output_snapshot(&self, id: &[u8; 34]) -> Option<Vec<u8>> {
        let read: OutputRead = self.engine.output(id)?;
        payloads::output(&read)
    }
}

impl EventService for EnginePublisher {
    fn broker(&self) -> &Arc<Broker> {
        &self.broker
    }

    fn snapshot(&self, topic: &str) -> Option<Vec<u8>> {
        let e = &self.engine;
        match topic {
            topics::MILESTONE_LATEST | topics::MILESTONE_CONFIRMED => {
                e.latest_milestone().map(|i| payloads::milestone_info(&i))
            }
            _ => {
                let parts: Vec<&str> = topic.split('/').collect();
                match parts.as_slice() {
                    ["block-metadata", id] => {
                        let id = parse_hex::<32>(id)?;
                        payloads::block_metadata(e, &id)
                    }
                    ["transactions", tx, "included-block"] => {
                        let tx = parse_hex::<32>(tx)?;
                        let block = e.included_block(&tx)?;
                        e.block_bytes(&block).map(|b| b.to_vec())
                    }
                    ["outputs", id] => self.output_snapshot(&parse_hex::<34>(id)?),
                    _ => None,
                }
            }
        }
    }
}

/// A lowercase `0x` hex id of `N` bytes, as topics spell them (uppercase never matches).
fn parse_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.strip_prefix("0x")?;
    if digits.len() != 2 * N || digits.bytes().any(|c| c.is_ascii_uppercase()) {
        return None;
    }
    let mut out = [0; N];
    hex::decode_to_slice(digits, &mut out).ok()?;
    Some(out)
}
