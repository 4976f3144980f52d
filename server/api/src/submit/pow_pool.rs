//! One bounded proof-of-work pool for all requests: at most one nonce search runs at a time
//! (it already uses every `--pow-workers` thread), a bounded number of requests wait for it,
//! and further ones get 503 with `Retry-After` at once. A request whose client leaves stops
//! waiting (its future is dropped) or stops its search (the caller's cancel flag).

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};

use tokio::sync::Semaphore;

/// Why the pool did not run a search.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PowPoolError {
    /// The running search and the queue behind it are full.
    #[error("proof of work queue is full: try again shortly")]
    Busy,
    /// The pool was shut down.
    #[error("the proof-of-work pool is stopped")]
    Stopped,
    /// The search's task failed.
    #[error("a proof-of-work task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Requests that may wait for the running search, by default.
pub const DEFAULT_QUEUE: usize = 16;

/// The shared pool.
#[derive(Debug)]
pub struct PowPool {
    // Permits: the running search plus the waiting ones.
    admitted: Arc<Semaphore>,
    // One permit: the running search.
    running: Arc<Semaphore>,
    // Searches that ran to their end (found, or stopped by their cancel flag).
    completed: AtomicU64,
}

impl Default for PowPool {
    fn default() -> Self {
        Self::new(DEFAULT_QUEUE)
    }
}

impl PowPool {
    /// A pool where `queue` requests may wait behind the running one.
    pub fn new(queue: usize) -> Self {
        Self {
            admitted: Arc::new(Semaphore::new(queue.saturating_add(1))),
            running: Arc::new(Semaphore::new(1)),
            completed: AtomicU64::new(0),
        }
    }

    /// Runs `search` on the blocking pool once it is this request's turn.
    ///
    /// # Errors
    /// [`PowPoolError::Busy`] when the queue is full.
    pub async fn run<T: Send + 'static>(
        &self,
        search: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, PowPoolError> {
        let _admitted = Arc::clone(&self.admitted)
            .try_acquire_owned()
            .map_err(|_| PowPoolError::Busy)?;
        let _turn = Arc::clone(&self.running)
            .acquire_owned()
            .await
            .map_err(|_| PowPoolError::Stopped)?;
        let result = tokio::task::spawn_blocking(search).await?;
        self.completed.fetch_add(1, Ordering::Relaxed);
        Ok(result)
    }

    /// Searches run to their end so far (Hornet's `iota_restapi_pow_requests`).
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn one_search_runs_and_a_bounded_queue_waits() {
        let pool = Arc::new(PowPool::new(2));
        let (release, gate) = std::sync::mpsc::channel::<()>();
        let gate = Arc::new(std::sync::Mutex::new(gate));
        let mut waiting = Vec::new();
        for _ in 0..3 {
            let pool = Arc::clone(&pool);
            let gate = Arc::clone(&gate);
            waiting.push(tokio::spawn(async move {
                pool.run(move || gate.lock().map(|g| g.recv().is_ok()).unwrap_or(false))
                    .await
            }));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        // Running 1 + waiting 2: the fourth is refused at once.
        let refused = pool.run(|| true).await;
        assert!(matches!(refused, Err(PowPoolError::Busy)), "{refused:?}");
        for _ in 0..3 {
            release.send(()).expect("release");
        }
        for w in waiting {
            assert!(matches!(w.await, Ok(Ok(true))));
        }
        assert!(matches!(pool.run(|| true).await, Ok(true)));
        assert_eq!(pool.completed(), 4, "the refused request is not counted");
    }
}
