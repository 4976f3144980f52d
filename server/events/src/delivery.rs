//! What a connection's writer sends: the broker's answers and current values (the client's own
//! [`Inbox`]) and the messages of the client's audience ([`FeedReader`]), gathered into
//! frames. A client that changes its filters moves to another audience: it reads the old feed
//! up to where it left and then the new one from where it joined, so no message is lost or
//! repeated by the move.

use std::{
    collections::VecDeque,
    time::{Duration, Instant},
};

use bytes::{Bytes, BytesMut};

use crate::{
    feed::{FeedReader, Mark},
    outbox::Inbox,
};

/// A change of audience: where the client left its old feed, and its reader of the new one.
#[derive(Debug, Default)]
pub struct Switch {
    pub(crate) left_at: Option<Mark>,
    pub(crate) joined: Option<FeedReader>,
}

/// The connection's outbound side.
#[derive(Debug)]
pub struct Delivery {
    inbox: Inbox,
    /// An answer taken while waiting, sent first.
    waiting: Option<Bytes>,
    /// Feeds to read in order: all but the last end where the client left them.
    route: VecDeque<FeedReader>,
    /// Since when the client has been losing messages (its feed dropped what it had not read).
    behind_since: Option<Instant>,
    bound: u64,
}

impl Delivery {
    pub(crate) fn new(inbox: Inbox, bound: usize) -> Self {
        Self {
            inbox,
            waiting: None,
            route: VecDeque::new(),
            behind_since: None,
            bound: bound as u64,
        }
    }

    pub(crate) fn switch(&mut self, switch: Switch) {
        if let (Some(end), Some(last)) = (switch.left_at, self.route.back_mut()) {
            last.end_at(end);
        }
        if let Some(reader) = switch.joined {
            self.route.push_back(reader);
        }
    }

    fn drop_finished(&mut self) {
        while self.route.front().is_some_and(FeedReader::finished) {
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
            let Some(reader) = self.route.front() else {
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

    /// The next frame: queued answers first, then the audience's messages, about `max` bytes
    /// (a frame may end up to one packet or piece above it); `None` when nothing is queued.
    pub fn next_frame(&mut self, max: usize) -> Option<Bytes> {
        let first = self.waiting.take().or_else(|| self.inbox.try_recv());
        self.drop_finished();
        let feed_has_data = self.route.front().is_some_and(FeedReader::has_data);
        let mut frame = BytesMut::new();
        if let Some(first) = first {
            let second = self.inbox.try_recv();
            if second.is_none() && !feed_has_data {
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
            let Some(reader) = self.route.front_mut() else {
                break;
            };
            let taken = reader.take(&mut frame, max);
            if taken.skipped > 0 {
                self.behind_since.get_or_insert_with(Instant::now);
            }
            if !reader.finished() {
                break;
            }
            self.route.pop_front();
        }
        if self.behind_since.is_some() && self.lag_bytes() < self.bound / 2 {
            self.behind_since = None;
        }
        (!frame.is_empty()).then(|| frame.freeze())
    }

    fn lag_bytes(&self) -> u64 {
        self.route.iter().map(FeedReader::lag_bytes).sum()
    }

    /// How long the client has been losing messages, if it is: its feed dropped what it had
    /// not read, or it lags more than the bound behind (its writer waits on the socket), or
    /// its answers' queue is full.
    pub fn backlogged_for(&mut self) -> Option<Duration> {
        if self.behind_since.is_none() && self.lag_bytes() > self.bound {
            self.behind_since = Some(Instant::now());
        }
        let feed = self.behind_since.map(|t| t.elapsed());
        let answers = self.inbox.outbox().backlogged_for();
        feed.max(answers)
    }

    /// Messages queued and not sent (counted as dropped when the connection closes).
    pub fn pending(&self) -> u64 {
        let answers = self.inbox.pending() as u64 + u64::from(self.waiting.is_some());
        answers + self.route.iter().map(FeedReader::unread).sum::<u64>()
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

    fn delivery(bound: usize) -> (Arc<crate::outbox::Outbox>, Delivery) {
        let (outbox, inbox) = queue(bound, Arc::default());
        (outbox, Delivery::new(inbox, bound))
    }

    #[test]
    fn answers_go_first_then_messages_in_frames_up_to_the_bound() {
        let (outbox, mut d) = delivery(1 << 20);
        assert!(d.next_frame(100).is_none());
        // A lone answer goes as it was queued.
        assert!(outbox.control(Bytes::from_static(b"ack")));
        assert_eq!(d.next_frame(100).as_deref(), Some(&b"ack"[..]));
        let feed = Feed::new(1 << 20, Arc::default());
        d.switch(Switch {
            left_at: None,
            joined: Some(feed.reader()),
        });
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

    #[tokio::test]
    async fn ready_wakes_for_an_answer_or_a_message_and_moves_past_a_left_feed() {
        let (outbox, mut d) = delivery(1 << 20);
        let old = Feed::new(1 << 20, Arc::default());
        let new = Feed::new(1 << 20, Arc::default());
        d.switch(Switch {
            left_at: None,
            joined: Some(old.reader()),
        });
        old.push(b"o");
        d.switch(Switch {
            left_at: Some(old.cut()),
            joined: Some(new.reader()),
        });
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
