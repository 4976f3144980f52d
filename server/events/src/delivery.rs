//! What a connection's writer sends: the broker's answers (the client's own [`Inbox`]), the
//! messages of the client's audience ([`FeedReader`]) and the current values sent on a new
//! subscription, gathered into frames. A client that changes its filters moves to another
//! audience: it reads the old feed up to where it left and then the new one from where it
//! joined, so no message is lost or repeated by the move. A current value goes out after the
//! messages its feed held when it was queued and before those that came later, as from one
//! queue per client.

use std::{
    collections::VecDeque,
    sync::Arc,
    time::{Duration, Instant},
};

use bytes::{Bytes, BytesMut};

use crate::{
    feed::{FeedReader, Mark},
    metrics::{DropReason, MqttMetrics},
    outbox::Inbox,
};

/// A change of audience: where the client left its old feed, and its reader of the new one.
#[derive(Debug, Default)]
pub struct Switch {
    pub(crate) left_at: Option<Mark>,
    pub(crate) joined: Option<FeedReader>,
}

/// A current value and where in the client's route it goes: after the messages of reader
/// `reader` before `at`.
#[derive(Debug)]
struct Current {
    reader: u64,
    at: Option<Mark>,
    packet: Bytes,
}

/// The connection's outbound side.
#[derive(Debug)]
pub struct Delivery {
    inbox: Inbox,
    /// An answer taken while waiting, sent first.
    waiting: Option<Bytes>,
    /// Feeds to read in order, each with its number: all but the last end where the client
    /// left them.
    route: VecDeque<(u64, FeedReader)>,
    /// The number the next reader gets.
    next_reader: u64,
    /// Current values waiting for their place, in the order queued.
    current: VecDeque<Current>,
    current_bytes: usize,
    /// Since when the client has been losing messages (its feed dropped what it had not read).
    behind_since: Option<Instant>,
    bound: usize,
    metrics: Arc<MqttMetrics>,
}

impl Delivery {
    pub(crate) fn new(inbox: Inbox, bound: usize, metrics: Arc<MqttMetrics>) -> Self {
        Self {
            inbox,
            waiting: None,
            route: VecDeque::new(),
            next_reader: 0,
            current: VecDeque::new(),
            current_bytes: 0,
            behind_since: None,
            bound,
            metrics,
        }
    }

    pub(crate) fn switch(&mut self, switch: Switch) {
        if let (Some(end), Some((_, last))) = (switch.left_at, self.route.back_mut()) {
            last.end_at(end);
        }
        if let Some(reader) = switch.joined {
            self.route.push_back((self.next_reader, reader));
            self.next_reader += 1;
        }
    }

    /// Queues `packet` (a PUBLISH of a current value) after the messages the client's feeds
    /// hold now; false (dropped and counted) when the current values queued would exceed the
    /// client's bound.
    pub fn queue_current(&mut self, packet: Bytes) -> bool {
        if self.current_bytes + packet.len() > self.bound {
            self.metrics.dropped(DropReason::QueueFull);
            return false;
        }
        self.current_bytes += packet.len();
        let (reader, at) = match self.route.back() {
            Some((n, reader)) => (*n, Some(reader.feed_head())),
            None => (self.next_reader, None),
        };
        self.current.push_back(Current { reader, at, packet });
        true
    }

    /// The first current value if its place has come: every message before it is taken.
    fn current_due(&self) -> bool {
        let Some(c) = self.current.front() else {
            return false;
        };
        match self.route.front() {
            None => true,
            Some((n, reader)) => {
                c.reader < *n || (c.reader == *n && c.at.is_none_or(|m| reader.passed(m)))
            }
        }
    }

    fn drop_finished(&mut self) {
        while self.route.front().is_some_and(|(_, r)| r.finished()) {
            self.route.pop_front();
        }
    }

    /// Completes when there is something to send.
    pub async fn ready(&mut self) {
        if self.waiting.is_some() {
            return;
        }
        loop {
            self.drop_finished();
            if self.current_due() {
                return;
            }
            let Some((_, reader)) = self.route.front() else {
                // The session holds the queue's sender: `recv` ends only with the session.
                self.waiting = self.inbox.recv().await;
                return;
            };
            if reader.has_data() {
                return;
            }
            tokio::select! {
                answer = self.inbox.recv() => {
                    self.waiting = answer;
                    return;
                }
                () = reader.ready() => {}
            }
        }
    }

    /// The next frame: queued answers first, then the audience's messages with the current
    /// values in their places, about `max` bytes (a frame may end up to one packet or piece
    /// above it); `None` when nothing is queued.
    pub fn next_frame(&mut self, max: usize) -> Option<Bytes> {
        let first = self.waiting.take().or_else(|| self.inbox.try_recv());
        self.drop_finished();
        let more = self.route.front().is_some_and(|(_, r)| r.has_data()) || self.current_due();
        let mut frame = BytesMut::new();
        if let Some(first) = first {
            let second = self.inbox.try_recv();
            if second.is_none() && !more {
                // A lone answer goes as it is.
                return Some(first);
            }
            frame.extend_from_slice(&first);
            if let Some(second) = second {
                frame.extend_from_slice(&second);
            }
            while frame.len() < max {
                let Some(answer) = self.inbox.try_recv() else {
                    break;
                };
                frame.extend_from_slice(&answer);
            }
        }
        while frame.len() < max {
            if self.current_due() {
                if let Some(c) = self.current.pop_front() {
                    self.current_bytes -= c.packet.len();
                    frame.extend_from_slice(&c.packet);
                }
                continue;
            }
            let next_current = self.current.front().map(|c| (c.reader, c.at));
            let Some((n, reader)) = self.route.front_mut() else {
                break;
            };
            let until = next_current.and_then(|(r, at)| at.filter(|_| r == *n));
            let taken = reader.take(&mut frame, max, until);
            if taken.skipped > 0 {
                self.behind_since.get_or_insert_with(Instant::now);
            }
            if reader.finished() {
                self.route.pop_front();
            } else if !self.current_due() {
                break;
            }
        }
        if self.behind_since.is_some() && self.lag_bytes() < self.bound as u64 / 2 {
            self.behind_since = None;
        }
        (!frame.is_empty()).then(|| frame.freeze())
    }

    fn lag_bytes(&self) -> u64 {
        self.route.iter().map(|(_, r)| r.lag_bytes()).sum()
    }

    /// How long the client has been losing messages, if it is: its feed dropped what it had
    /// not read, or it lags more than the bound behind (its writer waits on the socket).
    pub fn backlogged_for(&mut self) -> Option<Duration> {
        if self.behind_since.is_none() && self.lag_bytes() > self.bound as u64 {
            self.behind_since = Some(Instant::now());
        }
        self.behind_since.map(|t| t.elapsed())
    }

    /// Messages queued and not sent (counted as dropped when the connection closes).
    pub fn pending(&self) -> u64 {
        let answers = self.inbox.pending() as u64 + u64::from(self.waiting.is_some());
        let current = self.current.len() as u64;
        answers + current + self.route.iter().map(|(_, r)| r.unread()).sum::<u64>()
    }

    /// The next queued answer, if any (the final writes before a close, and tests).
    pub fn try_answer(&mut self) -> Option<Bytes> {
        self.waiting.take().or_else(|| self.inbox.try_recv())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::{feed::Feed, outbox::queue};

    /// Moves `d` to `feed`'s audience, leaving `left` where it ends now.
    fn join(d: &mut Delivery, feed: &Arc<Feed>, left: Option<&Arc<Feed>>) {
        d.switch(Switch {
            left_at: left.map(|f| f.head()),
            joined: Some(feed.reader()),
        });
    }

    fn delivery(bound: usize) -> (Arc<crate::outbox::Outbox>, Delivery) {
        let (outbox, inbox) = queue();
        (outbox, Delivery::new(inbox, bound, Arc::default()))
    }

    #[test]
    fn answers_go_first_then_messages_in_frames_up_to_the_bound() {
        let (outbox, mut d) = delivery(1 << 20);
        assert!(d.next_frame(100).is_none());
        // A lone answer goes as it was queued.
        assert!(outbox.control(Bytes::from_static(b"ack")));
        assert_eq!(d.next_frame(100).as_deref(), Some(&b"ack"[..]));
        let feed = Feed::new(1 << 20, Arc::default());
        join(&mut d, &feed, None);
        for p in [&b"m1"[..], b"m2", b"m3"] {
            feed.push(p);
        }
        assert!(outbox.control(Bytes::from_static(b"A")));
        assert!(outbox.control(Bytes::from_static(b"B")));
        assert_eq!(d.next_frame(4).as_deref(), Some(&b"ABm1m2m3"[..]));
        for _ in 0..10 {
            feed.push(&[7; 30]);
        }
        let frame = d.next_frame(100).expect("queued");
        assert_eq!(frame.len(), 300, "the open part goes whole");
        assert_eq!(d.pending(), 0);
        assert!(d.next_frame(100).is_none());
    }

    #[test]
    fn a_current_value_goes_after_the_messages_queued_before_it_and_before_later_ones() {
        let (_outbox, mut d) = delivery(1 << 20);
        assert!(d.queue_current(Bytes::from_static(b"C0")), "no feed yet");
        let old = Feed::new(1 << 20, Arc::default());
        let new = Feed::new(1 << 20, Arc::default());
        join(&mut d, &old, None);
        old.push(b"a");
        assert!(d.queue_current(Bytes::from_static(b"C1")));
        old.push(b"b");
        join(&mut d, &new, Some(&old));
        assert!(d.queue_current(Bytes::from_static(b"C2")));
        new.push(b"n");
        assert_eq!(d.pending(), 6);
        assert_eq!(d.next_frame(1 << 20).as_deref(), Some(&b"C0aC1bC2n"[..]));
        assert_eq!(d.pending(), 0);
        // Stopping at a value's place inside a sealed piece and inside the open part.
        let feed = Feed::new(1 << 20, Arc::default());
        let mut d = delivery(1 << 20).1;
        join(&mut d, &feed, None);
        feed.push(b"x1");
        feed.push(b"x2");
        assert!(d.queue_current(Bytes::from_static(b"V")));
        feed.push(b"x3");
        feed.seal();
        feed.push(b"x4");
        assert!(d.queue_current(Bytes::from_static(b"W")));
        feed.push(b"x5");
        assert_eq!(d.next_frame(1 << 20).as_deref(), Some(&b"x1x2Vx3x4Wx5"[..]));
        // Beyond the bound: dropped.
        let mut small = delivery(4).1;
        assert!(small.queue_current(Bytes::from_static(b"1234")));
        assert!(!small.queue_current(Bytes::from_static(b"5")));
    }

    #[tokio::test]
    async fn ready_wakes_for_an_answer_or_a_message_and_moves_past_a_left_feed() {
        let (outbox, mut d) = delivery(1 << 20);
        let old = Feed::new(1 << 20, Arc::default());
        let new = Feed::new(1 << 20, Arc::default());
        join(&mut d, &old, None);
        old.push(b"o");
        join(&mut d, &new, Some(&old));
        old.push(b"after leaving");
        new.push(b"n");
        let wait = std::time::Duration::from_secs(5);
        tokio::time::timeout(wait, d.ready()).await.expect("ready");
        assert_eq!(d.next_frame(100).as_deref(), Some(&b"on"[..]));
        assert_eq!(d.pending(), 0);
        let answer = Arc::clone(&outbox);
        let later = tokio::spawn(async move {
            tokio::task::yield_now().await;
            answer.control(Bytes::from_static(b"pong"))
        });
        tokio::time::timeout(wait, d.ready())
            .await
            .expect("woken by the answer");
        assert!(later.await.expect("joined"));
        assert_eq!(d.next_frame(100).as_deref(), Some(&b"pong"[..]));
    }
}
