//! Group commit: the fsync thread, durability marks and the callbacks waiting for them.

use super::*;

/// A callback waiting for an fsync to cover a log position (see [`Log::on_durable`]).
pub(super) type Waiter = Box<dyn FnOnce(Result<(), LogError>) + Send>;

#[derive(Default)]
pub(super) struct SyncState {
    /// Log position one past the last written record.
    pub(super) written: u64,
    /// Log position up to which an fsync has completed.
    pub(super) synced: u64,
    pub(super) failed: bool,
    pub(super) shutdown: bool,
    /// Callbacks for positions not yet synced, fired by the fsync loop.
    pub(super) waiters: Vec<(u64, Waiter)>,
}

/// Waiters taken out of the sync state, to be called outside its lock.
pub(super) struct Ready {
    pub(super) waiters: Vec<(u64, Waiter)>,
    pub(super) synced: u64,
}

impl SyncState {
    /// Removes the waiters whose position is synced (all of them once the log failed
    /// or shuts down).
    pub(super) fn take_ready(&mut self) -> Ready {
        let synced = self.synced;
        let waiters = if self.failed || self.shutdown {
            std::mem::take(&mut self.waiters)
        } else {
            let (ready, pending) = std::mem::take(&mut self.waiters)
                .into_iter()
                .partition(|(end, _)| *end <= synced);
            self.waiters = pending;
            ready
        };
        Ready { waiters, synced }
    }
}

impl Ready {
    /// Calls each waiter: `Ok` if its position is synced, else `Poisoned` (the log
    /// failed or is gone).
    pub(super) fn fire(self) {
        for (end, f) in self.waiters {
            f(if end <= self.synced {
                Ok(())
            } else {
                Err(LogError::Poisoned)
            });
        }
    }
}

/// A log position whose durability can be awaited: [`Log::wait_durable_at`] blocks,
/// [`Log::on_durable`] calls back. Returned by the `*_nowait` appends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Durable(pub(super) u64);

impl Log {
    /// The durability position of a stored record (for a resubmitted block whose first
    /// append may not be durable yet), or `None` if `id` is not stored.
    pub fn durable_mark(&self, id: &BlockId) -> Option<Durable> {
        self.find(id).map(|e| Durable(self.record_end(e)))
    }

    /// The durability position of everything appended so far.
    pub fn written_mark(&self) -> Durable {
        Durable(lock(&self.inner.sync).written)
    }

    /// Blocks until `mark` is durable under the configured [`Durability`] (immediately for
    /// `EveryAppend` and `Deferred`).
    ///
    /// # Errors
    /// [`LogError::Poisoned`] when an fsync failed.
    pub fn wait_durable_at(&self, mark: Durable) -> Result<(), LogError> {
        self.wait_durable(mark.0)
    }

    /// Calls `f` once `mark` is durable (with `Err(Poisoned)` if an fsync fails first): at
    /// once on this thread when it already is, else on whichever thread completes the
    /// covering fsync (the log's fsync thread, or an appender that poisons the log while
    /// holding its writer lock), so `f` must be quick (e.g. send on a channel), must not
    /// panic and must not call into the log.
    pub fn on_durable(&self, mark: Durable, f: impl FnOnce(Result<(), LogError>) + Send + 'static) {
        let inner = &*self.inner;
        if !matches!(inner.config.durability, Durability::Group { .. }) {
            return f(if inner.poisoned.load(Ordering::Acquire) {
                Err(LogError::Poisoned)
            } else {
                Ok(())
            });
        }
        let mut s = lock(&inner.sync);
        if s.synced >= mark.0 {
            drop(s);
            return f(Ok(()));
        }
        if s.failed {
            drop(s);
            return f(Err(LogError::Poisoned));
        }
        // Fired by whatever advances `synced` past `mark` (the syncer wakes on every
        // append, so an unsynced mark always has an fsync coming).
        s.waiters.push((mark.0, Box::new(f)));
    }

    /// In group-commit mode, waits until an fsync covered log position `end`.
    pub(super) fn wait_durable(&self, end: u64) -> Result<(), LogError> {
        let inner = &*self.inner;
        if !matches!(inner.config.durability, Durability::Group { .. }) {
            return Ok(());
        }
        let mut s = lock(&inner.sync);
        while s.synced < end {
            if s.failed {
                return Err(LogError::Poisoned);
            }
            s = inner.done.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        Ok(())
    }

    /// Forces every record written so far to stable storage.
    ///
    /// # Errors
    /// The fsync's I/O error (the log is then poisoned).
    pub fn sync(&self) -> Result<(), LogError> {
        let inner = &*self.inner;
        let w = lock(&inner.writer);
        let seg = inner.segment(w.segment)?;
        let end = pos(w.segment, w.offset);
        if let Err(e) = inner.commit(&seg) {
            inner.poison();
            return Err(LogError::io("fsync", &seg.path, e));
        }
        drop(w);
        inner.settle(|s| s.synced = s.synced.max(end));
        Ok(())
    }
}

impl Inner {
    /// fsyncs `seg` to make its appended records durable, and reports the time taken.
    pub(super) fn commit(&self, seg: &Segment) -> std::io::Result<()> {
        let started = Instant::now();
        let result = seg.with_file(std::fs::File::sync_data);
        if let Some(observer) = self.timings.get() {
            observer.log_committed(started.elapsed());
        }
        result
    }

    pub(super) fn poison(&self) {
        self.poisoned.store(true, Ordering::Release);
        self.settle(|s| s.failed = true);
    }

    /// Changes the sync state with `change`, then wakes the threads waiting for durability
    /// and calls the callbacks that became ready, outside the lock.
    fn settle(&self, change: impl FnOnce(&mut SyncState)) {
        let mut s = lock(&self.sync);
        change(&mut s);
        let ready = s.take_ready();
        drop(s);
        self.done.notify_all();
        ready.fire();
    }

    /// The background fsync loop of [`Durability::Group`] and [`Durability::Deferred`].
    pub(super) fn run_syncer(&self, interval: Duration) {
        let mut last: Option<Instant> = None;
        loop {
            let mut s = lock(&self.sync);
            while s.written <= s.synced && !s.shutdown && !s.failed {
                s = self.work.wait(s).unwrap_or_else(PoisonError::into_inner);
            }
            if s.failed || (s.shutdown && s.written <= s.synced) {
                return;
            }
            let shutdown = s.shutdown;
            drop(s);
            if let (Some(at), false) = (last, shutdown) {
                std::thread::sleep(interval.saturating_sub(at.elapsed()));
            }
            last = Some(Instant::now());
            let target = lock(&self.sync).written;
            // Segments before the target's are sealed, and sealing fsyncs them.
            let segment = Location::from_u64(target).segment;
            let result = self.segment(segment).map(|seg| {
                let committed = self.commit(&seg);
                (seg, committed)
            });
            match result {
                Ok((_, Ok(()))) => self.settle(|s| s.synced = s.synced.max(target)),
                Ok((seg, Err(e))) => {
                    tracing::error!(path = %seg.path.display(), error = %e, "log fsync failed");
                    self.poison();
                    return;
                }
                Err(e) => {
                    tracing::error!(error = %e, "log fsync failed");
                    self.poison();
                    return;
                }
            }
        }
    }
}
