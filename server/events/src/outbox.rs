//! One client's outbound queue, bounded in bytes: the publisher pushes without waiting, and a
//! message that does not fit is dropped (and counted) rather than waited for
//! (docs/events.md §5.2, hornet #1687). The connection's writer drains it.

use std::{
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::sync::{mpsc, Notify};

use crate::metrics::{DropReason, MqttMetrics};

/// Room kept above the byte bound for the broker's own answers (CONNACK, SUBACK, PINGRESP…),
/// so a client that stopped reading still gets them until this is used up too; then its
/// connection is closed.
pub const CONTROL_SLACK: usize = 16 * 1024;

/// The publishing side of a client's queue.
#[derive(Debug)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Bytes>,
    queued: AtomicUsize,
    cap: usize,
    // Since when messages have been dropped without the queue draining below its bound.
    full_since: Mutex<Option<Instant>>,
    stopped: AtomicBool,
    stop: Notify,
    metrics: Arc<MqttMetrics>,
}

/// The writer's side: packets in the order they were queued.
#[derive(Debug)]
pub struct Inbox {
    rx: mpsc::UnboundedReceiver<Bytes>,
    outbox: Arc<Outbox>,
}

/// A new queue of at most `cap` bytes of messages.
pub fn queue(cap: usize, metrics: Arc<MqttMetrics>) -> (Arc<Outbox>, Inbox) {
    let (tx, rx) = mpsc::unbounded_channel();
    let outbox = Arc::new(Outbox {
        tx,
        queued: AtomicUsize::new(0),
        cap,
        full_since: Mutex::new(None),
        stopped: AtomicBool::new(false),
        stop: Notify::new(),
        metrics,
    });
    let inbox = Inbox {
        rx,
        outbox: Arc::clone(&outbox),
    };
    (outbox, inbox)
}

impl Outbox {
    /// Queues a PUBLISH unless it would take the queue above its bound: then it is dropped,
    /// counted, and the queue is marked backlogged. Never waits.
    pub fn publish(&self, packet: Bytes) -> bool {
        if self.reserve(packet.len(), self.cap) && self.tx.send(packet).is_ok() {
            return true;
        }
        self.metrics.dropped(DropReason::QueueFull);
        let mut since = self.full_since.lock();
        if since.is_none() {
            *since = Some(Instant::now());
        }
        false
    }

    /// Queues one of the broker's answers: false when even [`CONTROL_SLACK`] above the bound
    /// is used up (the connection is then closed).
    pub fn control(&self, packet: Bytes) -> bool {
        self.reserve(packet.len(), self.cap + CONTROL_SLACK) && self.tx.send(packet).is_ok()
    }

    fn reserve(&self, len: usize, bound: usize) -> bool {
        self.queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |q| {
                (q + len <= bound).then_some(q + len)
            })
            .is_ok()
    }

    /// Bytes queued and not yet written.
    pub fn queued_bytes(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    /// How long messages have been dropped without the queue draining, if they are.
    pub fn backlogged_for(&self) -> Option<Duration> {
        self.full_since.lock().map(|t| t.elapsed())
    }

    /// Asks the connection to close (its client id connected again).
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        self.stop.notify_one();
    }

    /// Completes once [`Outbox::stop`] was called.
    pub async fn stopped(&self) {
        while !self.stopped.load(Ordering::Acquire) {
            self.stop.notified().await;
        }
    }
}

impl Inbox {
    /// The next packet to write, `None` once every sender is gone.
    pub async fn recv(&mut self) -> Option<Bytes> {
        let packet = self.rx.recv().await?;
        self.written(packet.len());
        Some(packet)
    }

    /// The next packet if one is queued now.
    pub fn try_recv(&mut self) -> Option<Bytes> {
        let packet = self.rx.try_recv().ok()?;
        self.written(packet.len());
        Some(packet)
    }

    fn written(&self, len: usize) {
        let before = self.outbox.queued.fetch_sub(len, Ordering::AcqRel);
        // Drained below the bound again: no longer backlogged.
        if before - len < self.outbox.cap / 2 {
            *self.outbox.full_since.lock() = None;
        }
    }

    /// The queue's publishing side.
    pub fn outbox(&self) -> &Arc<Outbox> {
        &self.outbox
    }

    /// Messages still queued (counted as dropped when the connection closes).
    pub fn pending(&self) -> usize {
        self.rx.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_queue_drops_and_counts_then_recovers() {
        let metrics = Arc::new(MqttMetrics::default());
        let (out, mut inbox) = queue(100, Arc::clone(&metrics));
        assert!(out.publish(Bytes::from(vec![0; 60])));
        assert!(out.publish(Bytes::from(vec![1; 40])));
        assert_eq!(out.queued_bytes(), 100);
        assert!(!out.publish(Bytes::from(vec![2; 1])), "above the bound");
        assert_eq!(metrics.dropped_count(DropReason::QueueFull), 1);
        assert!(out.backlogged_for().is_some());
        // Answers still fit in the slack.
        assert!(out.control(Bytes::from(vec![3; 2])));
        assert!(!out.control(Bytes::from(vec![3; CONTROL_SLACK])));
        assert_eq!(inbox.recv().await.map(|b| b[0]), Some(0));
        assert_eq!(inbox.recv().await.map(|b| b[0]), Some(1));
        assert!(out.backlogged_for().is_none(), "drained");
        assert_eq!(inbox.try_recv().map(|b| b.len()), Some(2));
        assert_eq!(out.queued_bytes(), 0);
        assert!(inbox.try_recv().is_none());
    }

    #[tokio::test]
    async fn stop_wakes_the_connection() {
        let (out, _inbox) = queue(10, Arc::default());
        let waiter = Arc::clone(&out);
        let task = tokio::spawn(async move { waiter.stopped().await });
        out.stop();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("woken")
            .expect("joined");
    }
}
