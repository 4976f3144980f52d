//! The threads that run the event API's connections (`routes::mqtt`), apart from the threads
//! that answer REST requests, and at a lower CPU priority than the rest of the node.
//!
//! Delivering one block to many subscribers costs the node far more than storing it
//! (BENCHMARKS.md, sessions 14 and 15: about 1.2 µs per message, a hundred messages per block
//! with a hundred `blocks` subscribers). The submit, gossip and confirmation paths must not slow
//! down whatever the clients do (docs/decisions.md, "Events"). On these threads the kernel gives
//! delivery the CPU the node's other work leaves; when there is none left, the clients' queues
//! fill, their messages are dropped and counted, and a client that stays behind is disconnected
//! after the backlog time, as for a client that does not read.
//!
//! Nothing on these threads may hold a lock the node's other paths wait for while it could be
//! preempted for long: the current value sent on a new subscription reads the engine on the
//! REST threads (`routes::mqtt`), and the engine's event hook never blocks on the broker
//! (`publisher`).

use std::{future::Future, io, num::NonZeroUsize, thread};

use tokio::runtime::{Builder, Runtime};

/// How much lower the connection threads run than the node (added to its nice value, at most
/// 19). At 10 a connection thread weighs about a tenth of a node thread when both want a core.
pub const NICE_DELTA: i32 = 10;

/// The connections' runtime. Dropping it stops their tasks without waiting.
#[derive(Debug)]
pub struct EventIo {
    runtime: Option<Runtime>,
}

impl EventIo {
    /// Starts the runtime: one thread per two cores (at least one), named `mqtt-io`, each
    /// at [`NICE_DELTA`] below the node.
    ///
    /// # Errors
    /// The threads cannot be started.
    pub fn start() -> io::Result<Self> {
        let cores = thread::available_parallelism().map_or(1, NonZeroUsize::get);
        let runtime = Builder::new_multi_thread()
            .worker_threads((cores / 2).max(1))
            .thread_name("mqtt-io")
            .on_thread_start(|| {
                if let Err(e) = lower_priority(NICE_DELTA) {
                    tracing::debug!("event API thread keeps the node's priority: {e}");
                }
            })
            .enable_all()
            .build()?;
        Ok(Self {
            runtime: Some(runtime),
        })
    }

    /// Runs `task` on the connection threads.
    pub fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if let Some(runtime) = &self.runtime {
            runtime.spawn(task);
        }
    }
}

impl Drop for EventIo {
    fn drop(&mut self) {
        // Dropping a runtime waits for its blocking work and may not happen inside another
        // runtime; the connections are being closed anyway.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Adds `delta` to the calling thread's nice value (capped at 19). On Linux the nice value
/// belongs to the thread (setpriority(2), "BUGS"): the node's other threads keep theirs.
///
/// # Errors
/// The system refuses the change.
pub fn lower_priority(delta: i32) -> io::Result<()> {
    let now = rustix::process::getpriority_process(None)?;
    rustix::process::setpriority_process(None, (now + delta).min(19))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nice() -> i32 {
        rustix::process::getpriority_process(None).expect("getpriority")
    }

    #[test]
    fn lowering_a_threads_priority_leaves_the_others_alone() {
        let before = nice();
        let inside = thread::spawn(|| {
            let was = nice();
            lower_priority(3).expect("lowered");
            (was, nice())
        })
        .join()
        .expect("joined");
        assert_eq!(inside, (before, (before + 3).min(19)));
        assert_eq!(nice(), before, "the calling thread keeps its nice value");
    }

    #[test]
    fn connection_tasks_run_on_lowered_threads_and_stop_with_the_runtime() {
        let base = nice();
        let io = EventIo::start().expect("started");
        let (tx, rx) = std::sync::mpsc::channel();
        io.spawn(async move {
            let name = thread::current().name().map(str::to_owned);
            tx.send((name, nice())).expect("sent");
        });
        let (name, task_nice) = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("ran");
        assert_eq!(name.as_deref(), Some("mqtt-io"));
        assert_eq!(task_nice, (base + NICE_DELTA).min(19));
        // Dropped inside another runtime: no panic, no wait for a task that never ends.
        let outer = tokio::runtime::Runtime::new().expect("runtime");
        io.spawn(std::future::pending());
        outer.block_on(async move { drop(io) });
    }
}
