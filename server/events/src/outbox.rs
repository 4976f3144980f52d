//! One client's queue of the broker's answers (CONNACK, SUBACK, UNSUBACK, PINGRESP, the
//! acknowledgements of a client's PUBLISH), bounded in bytes: a client that does not read them
//! is disconnected rather than waited for (docs/events.md §5.2, hornet #1687). Messages on
//! topics go through the audience's feed instead ([`crate::feed`]); the connection's writer
//! drains both ([`crate::delivery`]).

use std::sync::{
    atomic::{AtomicBool, AtomicUsize, Ordering},
    Arc,
};

use bytes::Bytes;
use tokio::sync::{mpsc, Notify};

/// Bytes of answers a client may leave unread; one more and its connection is closed.
pub const CONTROL_SLACK: usize = 16 * 1024;

/// The broker's side of a client's queue.
#[derive(Debug)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Bytes>,
    queued: AtomicUsize,
    stopped: AtomicBool,
    stop: Notify,
}

/// The writer's side: answers in the order they were queued.
#[derive(Debug)]
pub struct Inbox {
    rx: mpsc::UnboundedReceiver<Bytes>,
    outbox: Arc<Outbox>,
}

/// A new, empty queue.
pub fn queue() -> (Arc<Outbox>, Inbox) {
    let (tx, rx) = mpsc::unbounded_channel();
    let outbox = Arc::new(Outbox {
        tx,
        queued: AtomicUsize::new(0),
        stopped: AtomicBool::new(false),
        stop: Notify::new(),
    });
    let inbox = Inbox {
        rx,
        outbox: Arc::clone(&outbox),
    };
    (outbox, inbox)
}

impl Outbox {
    /// Queues one of the broker's answers: false when [`CONTROL_SLACK`] bytes of answers are
    /// unread already (the connection is then closed). Never waits.
    pub fn control(&self, packet: Bytes) -> bool {
        let len = packet.len();
        let reserved = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |q| {
                (q + len <= CONTROL_SLACK).then_some(q + len)
            })
            .is_ok();
        reserved && self.tx.send(packet).is_ok()
    }

    /// Bytes queued and not yet written.
    pub fn queued_bytes(&self) -> usize {
        self.queued.load(Ordering::Acquire)
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
    /// The next answer to write, `None` once every sender is gone.
    pub async fn recv(&mut self) -> Option<Bytes> {
        let packet = self.rx.recv().await?;
        self.written(packet.len());
        Some(packet)
    }

    /// The next answer if one is queued now.
    pub fn try_recv(&mut self) -> Option<Bytes> {
        let packet = self.rx.try_recv().ok()?;
        self.written(packet.len());
        Some(packet)
    }

    fn written(&self, len: usize) {
        self.outbox.queued.fetch_sub(len, Ordering::AcqRel);
    }

    /// Answers still queued (counted as dropped when the connection closes).
    pub fn pending(&self) -> usize {
        self.rx.len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn answers_beyond_the_slack_are_refused_until_read() {
        let (out, mut inbox) = queue();
        assert!(out.control(Bytes::from(vec![0; CONTROL_SLACK - 2])));
        assert!(out.control(Bytes::from(vec![1; 2])));
        assert!(!out.control(Bytes::from(vec![2; 1])), "above the slack");
        assert_eq!(out.queued_bytes(), CONTROL_SLACK);
        assert_eq!(inbox.recv().await.map(|b| b[0]), Some(0));
        assert!(out.control(Bytes::from(vec![3; 1])), "room again");
        assert_eq!(inbox.try_recv().map(|b| b[0]), Some(1));
        assert_eq!(inbox.pending(), 1);
        assert_eq!(inbox.try_recv().map(|b| b[0]), Some(3));
        assert_eq!(out.queued_bytes(), 0);
        assert!(inbox.try_recv().is_none());
    }

    #[tokio::test]
    async fn stop_wakes_the_connection() {
        let (out, _inbox) = queue();
        let waiter = Arc::clone(&out);
        let task = tokio::spawn(async move { waiter.stopped().await });
        out.stop();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("woken")
            .expect("joined");
    }
}
