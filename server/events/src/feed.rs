//! One audience's feed: the PUBLISH packets for every client that holds the same set of
//! filters, stored once, in order, and read by each of those clients from its own position.
//!
//! With a hundred clients on `blocks`, a per-client queue took each block a hundred times (a
//! push, a reference count and a byte reservation per client, then a pop and a copy on the
//! client's side: about 0.5 µs per message, BENCHMARKS.md sessions 15 and 19). A feed takes it
//! once; a client's writer copies a run of packets into its next frame in one go.
//!
//! The feed holds what its slowest reader has not read, up to its byte bound (the per-client
//! queue bound, `--mqtt-client-queue`): beyond it the oldest packets go, and a reader that had
//! not read them skips them, which counts as messages dropped for that client
//! (docs/events.md §5.2, hornet #1687).

use std::{
    collections::{HashMap, VecDeque},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
};

use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::metrics::{DropReason, MqttMetrics};

/// Most bytes gathered in a feed's open part before they become a piece of their own (readers
/// copy the open part under the feed's lock, pieces outside it). A feed drops whole pieces, so
/// a piece is at most an eighth of the feed's bound.
const PIECE_BYTES: usize = 64 * 1024;
/// First allocation of a feed's open part: a feed of rare messages stays small.
const FIRST_OPEN: usize = 1024;

/// A sealed run of whole packets.
#[derive(Debug)]
struct Piece {
    /// Byte position of its first byte in the feed.
    at: u64,
    /// Messages before it in the feed.
    msgs_before: u64,
    /// Messages in it.
    msgs: u64,
    bytes: Bytes,
}

impl Piece {
    fn end(&self) -> u64 {
        self.at + self.bytes.len() as u64
    }
}

#[derive(Debug, Default)]
struct Inner {
    pieces: VecDeque<Piece>,
    /// Bytes held in `pieces`.
    piece_bytes: usize,
    /// Packets appended since the last piece was sealed.
    open: BytesMut,
    /// Allocation size of the current open part.
    open_alloc: usize,
    /// Byte position of `open`'s first byte, and messages before it.
    open_at: u64,
    open_msgs_before: u64,
    open_msgs: u64,
    /// Where each reader is, and where it ends.
    readers: HashMap<u64, Span>,
    next_reader: u64,
}

/// A reader's position and end, as the feed knows them.
#[derive(Debug, Clone, Copy)]
struct Span {
    at: Mark,
    end: Option<Mark>,
}

impl Span {
    /// Messages of `piece` this reader has not read and would have.
    fn unread_in(&self, piece: &Piece) -> u64 {
        let after = piece.msgs_before + piece.msgs;
        let last = self.end.map_or(after, |e| e.msgs.min(after));
        last.saturating_sub(self.at.msgs.max(piece.msgs_before))
    }
}

impl Inner {
    fn head(&self) -> Mark {
        Mark {
            at: self.open_at + self.open.len() as u64,
            msgs: self.open_msgs_before + self.open_msgs,
        }
    }

    fn seal(&mut self) {
        if self.open.is_empty() {
            return;
        }
        let bytes = self.open.split().freeze();
        self.piece_bytes += bytes.len();
        let piece = Piece {
            at: self.open_at,
            msgs_before: self.open_msgs_before,
            msgs: self.open_msgs,
            bytes,
        };
        self.open_at = piece.end();
        self.open_msgs_before += piece.msgs;
        self.open_msgs = 0;
        self.pieces.push_back(piece);
    }

    /// Forgets the open part (read by every reader) and its allocation.
    fn release_open(&mut self) {
        let head = self.head();
        self.open = BytesMut::new();
        self.open_alloc = 0;
        self.open_at = head.at;
        self.open_msgs_before = head.msgs;
        self.open_msgs = 0;
    }

    /// Drops the pieces every reader has read, and the oldest beyond `bound` bytes held; what
    /// a reader loses that way is counted as dropped for it.
    fn trim(&mut self, bound: usize, metrics: &MqttMetrics) {
        while let Some(front) = self.pieces.front() {
            let over = self.piece_bytes + self.open.len() > bound;
            let lost: u64 = self.readers.values().map(|r| r.unread_in(front)).sum();
            if lost > 0 && !over {
                break;
            }
            metrics.dropped_n(DropReason::QueueFull, lost);
            self.piece_bytes -= front.bytes.len();
            self.pieces.pop_front();
        }
    }

    /// Where the oldest byte held starts.
    fn tail(&self) -> Mark {
        self.pieces.front().map_or_else(
            || Mark {
                at: self.open_at,
                msgs: self.open_msgs_before,
            },
            |p| Mark {
                at: p.at,
                msgs: p.msgs_before,
            },
        )
    }
}

/// A position in a feed: a byte offset at a packet boundary and the messages before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    at: u64,
    msgs: u64,
}

/// The feed.
#[derive(Debug)]
pub struct Feed {
    inner: Mutex<Inner>,
    /// Messages pushed so far (read without the lock).
    pushed: AtomicU64,
    wake: Notify,
    bound: usize,
    piece: usize,
    metrics: Arc<MqttMetrics>,
}

impl Feed {
    /// An empty feed that holds at most about `bound` bytes its readers have not read,
    /// counting what it drops for them into `metrics`.
    pub fn new(bound: usize, metrics: Arc<MqttMetrics>) -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::default(),
            pushed: AtomicU64::new(0),
            wake: Notify::new(),
            bound,
            piece: (bound / 8).clamp(1, PIECE_BYTES),
            metrics,
        })
    }

    /// Appends one packet and wakes the readers waiting for one. Never waits for a reader.
    pub fn push(&self, packet: &[u8]) {
        let mut inner = self.inner.lock();
        let pieces = inner.pieces.len();
        let room = inner.open.capacity() - inner.open.len();
        if room < packet.len() {
            inner.seal();
            let alloc = (inner.open_alloc * 2)
                .clamp(FIRST_OPEN.min(self.piece), self.piece)
                .max(packet.len());
            inner.open = BytesMut::with_capacity(alloc);
            inner.open_alloc = alloc;
        }
        inner.open.extend_from_slice(packet);
        inner.open_msgs += 1;
        if inner.open.len() >= self.piece {
            inner.seal();
        }
        // A new piece may be one every reader has passed already.
        if inner.piece_bytes + inner.open.len() > self.bound || inner.pieces.len() > pieces {
            inner.trim(self.bound, &self.metrics);
        }
        drop(inner);
        self.pushed.fetch_add(1, Ordering::Release);
        self.wake.notify_waiters();
    }

    /// The current end: what is pushed from now on lies after it. A reader ended here reads
    /// everything pushed before and nothing after.
    pub fn head(&self) -> Mark {
        self.inner.lock().head()
    }

    /// Makes what is in the open part a piece (tests: a mark inside a sealed piece).
    #[cfg(test)]
    pub(crate) fn seal(&self) {
        self.inner.lock().seal();
    }

    /// A reader from the current end on.
    pub fn reader(self: &Arc<Self>) -> FeedReader {
        let mut inner = self.inner.lock();
        let id = inner.next_reader;
        inner.next_reader += 1;
        let at = inner.head();
        inner.readers.insert(id, Span { at, end: None });
        FeedReader {
            feed: Arc::clone(self),
            id,
            at,
            end: None,
        }
    }

    /// Bytes held (read by some reader and not yet by all, or by none).
    pub fn held_bytes(&self) -> usize {
        let inner = self.inner.lock();
        inner.piece_bytes + inner.open.len()
    }
}

/// What one [`FeedReader::take`] gave.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Taken {
    /// Messages copied into the frame.
    pub msgs: u64,
    /// Messages the feed dropped before this reader read them (counted when dropped).
    pub skipped: u64,
}

/// One client's position in a feed, up to an end once the client has left the audience.
#[derive(Debug)]
pub struct FeedReader {
    feed: Arc<Feed>,
    id: u64,
    at: Mark,
    end: Option<Mark>,
}

impl FeedReader {
    /// Ends the reader at `end` (the client left the audience there).
    pub fn end_at(&mut self, end: Mark) {
        self.end = Some(end);
        if let Some(span) = self.feed.inner.lock().readers.get_mut(&self.id) {
            span.end = Some(end);
        }
    }

    /// True when the reader has reached its end.
    pub fn finished(&self) -> bool {
        self.end.is_some_and(|e| self.at.msgs >= e.msgs)
    }

    /// True when there is something to take (or the reader is finished).
    pub fn has_data(&self) -> bool {
        self.finished() || self.feed.pushed.load(Ordering::Acquire) > self.at.msgs
    }

    /// Completes when [`FeedReader::has_data`] holds.
    pub async fn ready(&self) {
        loop {
            let woken = self.feed.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if self.has_data() {
                return;
            }
            woken.await;
        }
    }

    /// Messages the feed still holds for this reader (up to its end): neither taken nor
    /// dropped.
    pub fn unread(&self) -> u64 {
        let inner = self.feed.inner.lock();
        let last = self.end.unwrap_or_else(|| inner.head());
        last.msgs
            .saturating_sub(self.at.msgs.max(inner.tail().msgs))
    }

    /// Bytes between the reader and the feed's end (or its own end).
    pub fn lag_bytes(&self) -> u64 {
        let last = self.end.unwrap_or_else(|| self.feed.head());
        last.at.saturating_sub(self.at.at)
    }

    /// The feed's current end, as a mark this reader may later be asked to stop at.
    pub fn feed_head(&self) -> Mark {
        self.feed.head()
    }

    /// True when the reader has taken everything before `mark` (a mark of its own feed).
    pub fn passed(&self, mark: Mark) -> bool {
        self.at.msgs >= mark.msgs
    }

    /// Appends whole packets from the reader's position to `frame` until it holds `max`
    /// bytes or more, or the reader reaches the feed's end, its own end or `until` (a mark of
    /// this feed taken earlier, [`FeedReader::feed_head`]).
    pub fn take(&mut self, frame: &mut BytesMut, max: usize, until: Option<Mark>) -> Taken {
        let mut taken = Taken::default();
        let mut pieces = Vec::new();
        let mut room = max.saturating_sub(frame.len());
        let mut inner = self.feed.inner.lock();
        let tail = inner.tail();
        if self.at.at < tail.at {
            let to = self.end.filter(|e| e.at < tail.at).unwrap_or(tail);
            taken.skipped = to.msgs - self.at.msgs;
            self.at = to;
        }
        // Where this take stops at the latest: the nearer of the reader's end and `until`.
        let limit = match (self.end, until) {
            (Some(a), Some(b)) => Some(if a.at <= b.at { a } else { b }),
            (a, b) => a.or(b),
        };
        let stop = limit.map_or(u64::MAX, |l| l.at);
        // Up to `to` (a byte position at a packet boundary): the mark reached there.
        let reached = |to: u64, natural: Mark| limit.filter(|l| l.at == to).unwrap_or(natural);
        // Sealed pieces are referenced here and copied once the lock is let go.
        let first = inner.pieces.partition_point(|p| p.end() <= self.at.at);
        for piece in inner.pieces.range(first..) {
            if room == 0 || piece.at >= stop || self.at.at >= stop {
                break;
            }
            // A reader inside a piece read its first part while it was still open.
            let skip = usize::try_from(self.at.at - piece.at).unwrap_or(0);
            let to = piece.end().min(stop);
            let len = usize::try_from(to - piece.at).unwrap_or(usize::MAX);
            let part = piece.bytes.slice(skip..len.min(piece.bytes.len()));
            room = room.saturating_sub(part.len());
            let next = reached(
                to,
                Mark {
                    at: piece.end(),
                    msgs: piece.msgs_before + piece.msgs,
                },
            );
            taken.msgs += next.msgs - self.at.msgs;
            self.at = next;
            pieces.push(part);
        }
        // The open part: copied under the lock (the publisher appends to it) when it is all
        // this take gives; behind pieces it is sealed into one (no copy) and taken like them.
        if room > 0 && self.at.at >= inner.open_at && self.at.at < stop {
            let head = inner.head();
            let to = head.at.min(stop);
            let from = usize::try_from(self.at.at - inner.open_at).unwrap_or(usize::MAX);
            let upto = usize::try_from(to - inner.open_at).unwrap_or(usize::MAX);
            if from < upto && upto <= inner.open.len() {
                if pieces.is_empty() {
                    frame.extend_from_slice(&inner.open[from..upto]);
                } else {
                    inner.seal();
                    if let Some(piece) = inner.pieces.back() {
                        pieces.push(piece.bytes.slice(from..upto));
                    }
                }
                let next = reached(to, head);
                taken.msgs += next.msgs - self.at.msgs;
                self.at = next;
            }
        }
        inner.readers.insert(
            self.id,
            Span {
                at: self.at,
                end: self.end,
            },
        );
        if inner.pieces.front().is_some_and(|p| p.end() <= self.at.at) {
            inner.trim(self.feed.bound, &self.feed.metrics);
        }
        if inner.readers.len() == 1 && inner.pieces.is_empty() && self.at == inner.head() {
            // The only reader has read everything: the open part's allocation goes too. A
            // client alone on its topics (one address each, a thousand of them) would otherwise
            // keep up to a piece of messages it has read until that piece fills.
            inner.release_open();
        }
        drop(inner);
        frame.reserve(pieces.iter().map(Bytes::len).sum());
        for part in &pieces {
            frame.extend_from_slice(part);
        }
        taken
    }
}

impl Drop for FeedReader {
    fn drop(&mut self) {
        let mut inner = self.feed.inner.lock();
        inner.readers.remove(&self.id);
        inner.trim(self.feed.bound, &self.feed.metrics);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Packets of distinct content: `n` as 4 bytes, padded to `len`.
    fn packet(n: u32, len: usize) -> Vec<u8> {
        let mut p = n.to_le_bytes().to_vec();
        p.resize(len.max(4), 0xee);
        p
    }

    /// Splits a reader's bytes back into the packets' numbers (lengths known per number).
    fn numbers(mut bytes: &[u8], lens: &[usize]) -> Vec<u32> {
        let mut out = Vec::new();
        while bytes.len() >= 4 {
            let n = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            let len = lens[n as usize].max(4);
            assert_eq!(&bytes[..len], &packet(n, len)[..], "a whole packet");
            out.push(n);
            bytes = &bytes[len..];
        }
        assert!(bytes.is_empty(), "no partial packet");
        out
    }

    /// A reader from the feed's start, the number of packets pushed before its end (if ended),
    /// the packets' numbers it got and how many it skipped.
    struct Tracked {
        reader: FeedReader,
        end: Option<u32>,
        /// A mark to stop at and the packets pushed before it.
        until: Option<(Mark, u32)>,
        got: Vec<u32>,
        skipped: u64,
    }

    #[derive(Debug, Clone)]
    enum Step {
        Push(usize),
        Take(usize, usize),
        Cut(usize),
        Stamp(usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            6 => (1usize..3000).prop_map(Step::Push),
            3 => (0usize..3, 1usize..20_000).prop_map(|(r, m)| Step::Take(r, m)),
            1 => (0usize..3).prop_map(Step::Cut),
            1 => (0usize..3).prop_map(Step::Stamp),
        ]
    }

    proptest! {
        /// Each reader gets, in order and whole, the packets pushed from its start to its end,
        /// except for a counted run it skipped when it fell behind the bound; memory held stays
        /// near the bound.
        #[test]
        fn readers_get_every_packet_in_order_or_count_it_dropped(
            bound in 2_000usize..40_000,
            steps in proptest::collection::vec(step(), 1..300),
        ) {
            let metrics = Arc::new(MqttMetrics::default());
            let feed = Feed::new(bound, Arc::clone(&metrics));
            let mut lens = Vec::new();
            let mut readers: Vec<Tracked> = (0..3)
                .map(|_| Tracked {
                    reader: feed.reader(),
                    end: None,
                    until: None,
                    got: Vec::new(),
                    skipped: 0,
                })
                .collect();
            for s in steps {
                match s {
                    Step::Push(len) => {
                        let n = u32::try_from(lens.len()).expect("small");
                        lens.push(len);
                        feed.push(&packet(n, len));
                    }
                    Step::Take(r, max) => {
                        let t = &mut readers[r];
                        let mut frame = BytesMut::new();
                        let taken = t.reader.take(&mut frame, max, t.until.map(|u| u.0));
                        let nums = numbers(&frame, &lens);
                        prop_assert_eq!(taken.msgs, nums.len() as u64);
                        if let Some((mark, before)) = t.until {
                            prop_assert!(nums.iter().all(|n| *n < before), "past the mark");
                            if t.reader.passed(mark) {
                                t.until = None;
                            }
                        }
                        t.skipped += taken.skipped;
                        t.got.extend(nums);
                    }
                    Step::Stamp(r) => {
                        let t = &mut readers[r];
                        if t.until.is_none() {
                            let before = u32::try_from(lens.len()).expect("small");
                            t.until = Some((t.reader.feed_head(), before));
                        }
                    }
                    Step::Cut(r) => {
                        let t = &mut readers[r];
                        if t.end.is_none() {
                            t.reader.end_at(feed.head());
                            t.end = Some(u32::try_from(lens.len()).expect("small"));
                        }
                    }
                }
                prop_assert!(feed.held_bytes() <= bound + 3000 + bound / 8 + 4);
            }
            for t in &mut readers {
                loop {
                    let mut frame = BytesMut::new();
                    let taken = t.reader.take(&mut frame, usize::MAX, None);
                    t.skipped += taken.skipped;
                    if frame.is_empty() {
                        break;
                    }
                    t.got.extend(numbers(&frame, &lens));
                }
                let (reader, got, skipped) = (&t.reader, &t.got, &t.skipped);
                let last = t.end.unwrap_or(u32::try_from(lens.len()).expect("small"));
                let all: Vec<u32> = (0..last).collect();
                // What it got is a contiguous run... of what was pushed, after what it skipped,
                // except that skips may happen more than once: got ∪ skipped = all, in order.
                prop_assert_eq!(got.len() as u64 + *skipped, all.len() as u64);
                prop_assert!(got.windows(2).all(|w| w[0] < w[1]), "in order");
                prop_assert!(got.iter().all(|n| all.contains(n)));
                prop_assert!(reader.end.is_none() || reader.finished());
                prop_assert_eq!(reader.unread(), 0);
            }
            let skipped: u64 = readers.iter().map(|r| r.skipped).sum();
            prop_assert_eq!(metrics.dropped_count(DropReason::QueueFull), skipped);
        }
    }

    #[test]
    fn readers_passing_a_piece_release_it() {
        let feed = Feed::new(1 << 20, Arc::default());
        let mut a = feed.reader();
        let mut b = feed.reader();
        for n in 0..400 {
            feed.push(&packet(n, 1000));
        }
        assert!(feed.held_bytes() >= 400_000, "unread by both");
        let mut frame = BytesMut::new();
        while a.take(&mut frame, 1 << 20, None).msgs > 0 {}
        assert!(feed.held_bytes() >= 400_000, "b has not read them");
        let mut frame = BytesMut::new();
        while b.take(&mut frame, 1 << 20, None).msgs > 0 {}
        assert!(
            feed.held_bytes() < 64 * 1024 + 1000,
            "only the open part is left"
        );
        drop((a, b));
        feed.push(&packet(400, 1000));
        assert!(feed.held_bytes() < 64 * 1024 + 2000);
    }

    #[test]
    fn a_lone_reader_that_read_everything_leaves_nothing_held() {
        let feed = Feed::new(1 << 20, Arc::default());
        let mut only = feed.reader();
        for n in 0..10 {
            feed.push(&packet(n, 100));
        }
        assert_eq!(feed.held_bytes(), 1000);
        let mut frame = BytesMut::new();
        assert_eq!(only.take(&mut frame, 1 << 20, None).msgs, 10);
        assert_eq!(feed.held_bytes(), 0);
        assert_eq!(feed.inner.lock().open.capacity(), 0, "allocation released");
        feed.push(&packet(10, 100));
        let mut frame = BytesMut::new();
        assert_eq!(only.take(&mut frame, 1 << 20, None).msgs, 1);
        assert_eq!(numbers(&frame, &[100; 11]), vec![10]);
        // Two readers: the open part stays until both have read it and it fills.
        let mut other = feed.reader();
        feed.push(&packet(11, 100));
        let mut frame = BytesMut::new();
        only.take(&mut frame, 1 << 20, None);
        assert_eq!(feed.held_bytes(), 100, "the other has not read it");
        let mut frame = BytesMut::new();
        assert_eq!(other.take(&mut frame, 1 << 20, None).msgs, 1);
    }

    #[tokio::test]
    async fn a_waiting_reader_wakes_on_a_push() {
        let feed = Feed::new(1 << 20, Arc::default());
        let reader = feed.reader();
        assert!(!reader.has_data());
        let pusher = Arc::clone(&feed);
        let task = tokio::spawn(async move { reader.ready().await });
        tokio::task::yield_now().await;
        pusher.push(b"x");
        tokio::time::timeout(std::time::Duration::from_secs(5), task)
            .await
            .expect("woken")
            .expect("joined");
    }
}
