//! The indexer on its own thread: confirmation hands each milestone's outputs over and goes on
//! (the indexer costs a confirmation nothing), and a query first waits until the indexer has
//! applied every milestone confirmed before the query arrived, so a client that saw a
//! milestone confirmed also sees its outputs in the indexer (read-your-writes).

use std::sync::{mpsc, Arc, Condvar, Mutex, PoisonError, RwLock};
use std::time::Duration;

use super::{ChainId, IndexEntry, Indexer, Page, Query};
use crate::utxo::OutputId;

/// Milestones handed over but not yet applied before confirmation waits for the indexer
/// (only a replay at start confirms faster than the indexer applies).
const QUEUE: usize = 256;
/// Longest time a query waits for the indexer to reach the confirmed ledger index.
const MAX_WAIT: Duration = Duration::from_secs(10);

/// One milestone's changes.
struct Job {
    index: u32,
    timestamp: u32,
    created: Vec<IndexEntry>,
    consumed: Vec<OutputId>,
}

#[derive(Debug)]
struct Shared {
    indexer: RwLock<Indexer>,
    // Ledger index the indexer has reached, with its condition variable.
    applied: Mutex<u32>,
    advanced: Condvar,
}

/// The indexer behind its thread.
#[derive(Debug)]
pub struct IndexerService {
    shared: Arc<Shared>,
    jobs: Mutex<mpsc::SyncSender<Job>>,
}

impl IndexerService {
    /// Starts the thread with `indexer` (already holding the genesis outputs).
    ///
    /// # Errors
    /// The thread could not be spawned.
    pub fn start(indexer: Indexer) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            applied: Mutex::new(indexer.ledger_index()),
            indexer: RwLock::new(indexer),
            advanced: Condvar::new(),
        });
        let (jobs, queue) = mpsc::sync_channel::<Job>(QUEUE);
        let worker = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("indexer".into())
            .spawn(move || {
                // Ends when the engine (the sender) is dropped.
                for job in queue {
                    worker
                        .indexer
                        .write()
                        .unwrap_or_else(PoisonError::into_inner)
                        .apply(job.index, job.timestamp, &job.created, &job.consumed);
                    *worker
                        .applied
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = job.index;
                    worker.advanced.notify_all();
                }
            })?;
        Ok(Self {
            shared,
            jobs: Mutex::new(jobs),
        })
    }

    /// Hands milestone `index` over (blocks only while [`QUEUE`] milestones wait).
    pub fn apply(
        &self,
        index: u32,
        timestamp: u32,
        created: Vec<IndexEntry>,
        consumed: Vec<OutputId>,
    ) {
        let job = Job {
            index,
            timestamp,
            created,
            consumed,
        };
        let jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
        if jobs.send(job).is_err() {
            tracing::error!(
                index,
                "the indexer thread has stopped; its answers are stale"
            );
        }
    }

    /// Waits until the indexer has applied `ledger_index` (at most [`MAX_WAIT`]: a stopped
    /// indexer thread gives stale answers rather than hung requests), then reads it.
    fn read_at<T>(&self, ledger_index: u32, f: impl FnOnce(&Indexer) -> T) -> T {
        let applied = self
            .shared
            .applied
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (applied, waited) = self
            .shared
            .advanced
            .wait_timeout_while(applied, MAX_WAIT, |at| *at < ledger_index)
            .unwrap_or_else(PoisonError::into_inner);
        if waited.timed_out() {
            tracing::warn!(
                ledger_index,
                indexer_at = *applied,
                "the indexer is behind the ledger; answering from where it is"
            );
        }
        drop(applied);
        f(&self
            .shared
            .indexer
            .read()
            .unwrap_or_else(PoisonError::into_inner))
    }

    /// Whether the indexer has applied `ledger_index` (a query for it would not wait).
    pub fn has_reached(&self, ledger_index: u32) -> bool {
        *self
            .shared
            .applied
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            >= ledger_index
    }

    /// One page of `q` once the indexer has reached `ledger_index`.
    pub fn query(&self, ledger_index: u32, q: &Query) -> Page {
        self.read_at(ledger_index, |ix| ix.query(q))
    }

    /// The output of chain `id` once the indexer has reached `ledger_index`, with the index the
    /// answer is valid for.
    pub fn chain_output(&self, ledger_index: u32, id: &ChainId) -> (u32, Option<OutputId>) {
        self.read_at(ledger_index, |ix| (ix.ledger_index(), ix.chain_output(id)))
    }
}
