//! The broker: connected clients, the subscription index, and fan-out of each message, encoded
//! once, to the feeds of the audiences whose filters match it.
//!
//! Clients holding the same set of filters form an audience and share one feed
//! ([`crate::feed`]): a hundred `blocks` subscribers cost a publish one copy, not a hundred.
//! The index holds every audience's filters in two maps: exact filters by name (one lookup per
//! topic) and wildcard filters, each matched against the topic (docs/events.md §5.1). A
//! message for a topic nobody matches is never built ([`Broker::publish_with`]).

use std::{
    collections::{BTreeSet, HashMap, HashSet},
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use parking_lot::RwLock;

use crate::{
    delivery::Switch,
    feed::{Feed, Mark},
    metrics::MqttMetrics,
    outbox::Outbox,
    packet::{publish_qos0, ConnectCode},
    topic::{first_level, matches, Filter},
};

/// Longest client id accepted (docs/events.md §5.2).
pub const MAX_CLIENT_ID_LEN: usize = 256;

/// The broker's limits (defaults: docs/events.md §5.2; the flags of README "Events").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerConfig {
    /// Most clients connected at once; one more gets CONNACK 0x03.
    pub max_clients: usize,
    /// Most filters one client holds; one more gets SUBACK 0x80.
    pub max_subscriptions: usize,
    /// Bytes of messages queued per client; beyond it messages are dropped.
    pub client_queue_bytes: usize,
    /// How long a client may stay backlogged (dropping messages) before it is disconnected;
    /// also the longest one WebSocket write may take.
    pub backlog_timeout: Duration,
    /// Time a new connection has to send CONNECT.
    pub connect_timeout: Duration,
    /// Largest inbound packet (remaining length).
    pub max_packet: usize,
    /// Most filters in one SUBSCRIBE; the rest get SUBACK 0x80.
    pub max_filters_per_subscribe: usize,
}

/// Default per-client queue: 4 MiB, about 130 full-size (32 KiB) blocks or thousands of
/// typical ones (docs/events.md §5.2).
pub const DEFAULT_CLIENT_QUEUE_BYTES: usize = 4 * 1024 * 1024;

impl Default for BrokerConfig {
    fn default() -> Self {
        Self {
            max_clients: 1000,
            max_subscriptions: 1000,
            client_queue_bytes: DEFAULT_CLIENT_QUEUE_BYTES,
            backlog_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(10),
            max_packet: 64 * 1024,
            max_filters_per_subscribe: 64,
        }
    }
}

/// A connected client's key (not its MQTT client id: the same id may connect again while the
/// old connection is still closing, and that close must not touch the new one's state).
pub type ClientKey = u64;

type AudienceKey = u64;

#[derive(Debug)]
struct Client {
    name: String,
    outbox: Arc<Outbox>,
    filters: BTreeSet<Filter>,
    audience: Option<AudienceKey>,
}

/// The clients that hold one set of filters: they receive the same messages, stored once in
/// their feed ([`crate::feed`]).
#[derive(Debug)]
struct Audience {
    filters: BTreeSet<Filter>,
    feed: Arc<Feed>,
    members: usize,
}

#[derive(Debug, Default)]
struct Registry {
    clients: HashMap<ClientKey, Client>,
    names: HashMap<String, ClientKey>,
    audiences: HashMap<AudienceKey, Audience>,
    by_filters: HashMap<BTreeSet<Filter>, AudienceKey>,
    next_audience: AudienceKey,
    exact: HashMap<String, HashSet<AudienceKey>>,
    /// How many of `exact`'s filters start with each first level (`blocks`, `outputs`…).
    exact_first_levels: HashMap<String, usize>,
    wild: HashMap<Filter, HashSet<AudienceKey>>,
    subscriptions: usize,
}

impl Registry {
    fn audiences_for(&self, topic: &str, out: &mut Vec<AudienceKey>) {
        if let Some(keys) = self.exact.get(topic) {
            out.extend(keys.iter().copied());
        }
        let before = out.len();
        for (filter, keys) in &self.wild {
            if matches(filter.as_str(), topic) {
                out.extend(keys.iter().copied());
            }
        }
        if out.len() > before || !self.wild.is_empty() {
            out.sort_unstable();
            out.dedup();
        }
    }

    /// Whether a wildcard filter may match a topic whose first level is `first`: one starting
    /// with `first`, `+` or `#`.
    fn wild_may_match_under(&self, first: &str) -> bool {
        self.wild.keys().any(|f| {
            let level = first_level(f.as_str());
            level == "+" || level == "#" || level == first
        })
    }

    fn has_subscribers(&self, topic: &str) -> bool {
        self.exact.contains_key(topic) || self.wild.keys().any(|f| matches(f.as_str(), topic))
    }

    /// The audience holding exactly `filters`, made and indexed if there is none.
    fn join(
        &mut self,
        filters: &BTreeSet<Filter>,
        bound: usize,
        metrics: &Arc<MqttMetrics>,
    ) -> AudienceKey {
        if let Some(key) = self.by_filters.get(filters).copied() {
            if let Some(a) = self.audiences.get_mut(&key) {
                a.members += 1;
            }
            return key;
        }
        let key = self.next_audience;
        self.next_audience += 1;
        for filter in filters {
            self.index(filter, key);
        }
        self.by_filters.insert(filters.clone(), key);
        self.audiences.insert(
            key,
            Audience {
                filters: filters.clone(),
                feed: Feed::new(bound, Arc::clone(metrics)),
                members: 1,
            },
        );
        key
    }

    /// One member leaves `key`: where its feed ends for that member. The last member's leaving
    /// forgets the audience.
    fn leave(&mut self, key: AudienceKey) -> Option<Mark> {
        let audience = self.audiences.get_mut(&key)?;
        let end = audience.feed.head();
        audience.members -= 1;
        if audience.members == 0 {
            if let Some(gone) = self.audiences.remove(&key) {
                self.by_filters.remove(&gone.filters);
                for filter in &gone.filters {
                    self.unindex(filter, key);
                }
            }
        }
        Some(end)
    }

    /// Adds audience `key` under `filter` in the index.
    fn index(&mut self, filter: &Filter, key: AudienceKey) {
        if filter.is_wildcard() {
            self.wild.entry(filter.clone()).or_default().insert(key);
            return;
        }
        let audiences = self.exact.entry(filter.as_str().to_owned()).or_default();
        if audiences.is_empty() {
            *self
                .exact_first_levels
                .entry(first_level(filter.as_str()).to_owned())
                .or_default() += 1;
        }
        audiences.insert(key);
    }

    /// Removes audience `key` from under `filter` in the index.
    fn unindex(&mut self, filter: &Filter, key: AudienceKey) {
        if filter.is_wildcard() {
            if let Some(keys) = self.wild.get_mut(filter) {
                keys.remove(&key);
                if keys.is_empty() {
                    self.wild.remove(filter);
                }
            }
            return;
        }
        let Some(keys) = self.exact.get_mut(filter.as_str()) else {
            return;
        };
        keys.remove(&key);
        if !keys.is_empty() {
            return;
        }
        self.exact.remove(filter.as_str());
        let level = first_level(filter.as_str());
        if let Some(n) = self.exact_first_levels.get_mut(level) {
            *n -= 1;
            if *n == 0 {
                self.exact_first_levels.remove(level);
            }
        }
    }

    /// Gives client `key` the filters `filters`, moving it to their audience.
    fn regroup(
        &mut self,
        key: ClientKey,
        filters: BTreeSet<Filter>,
        bound: usize,
        metrics: &Arc<MqttMetrics>,
    ) -> Switch {
        let Some(client) = self.clients.get_mut(&key) else {
            return Switch::default();
        };
        if client.filters == filters {
            return Switch::default();
        }
        let old = client.audience.take();
        let before = std::mem::replace(&mut client.filters, filters.clone()).len();
        self.subscriptions = self.subscriptions - before + filters.len();
        let left_at = old.and_then(|a| self.leave(a));
        let joined = (!filters.is_empty()).then(|| self.join(&filters, bound, metrics));
        let reader = joined.and_then(|a| self.audiences.get(&a).map(|a| a.feed.reader()));
        if let Some(client) = self.clients.get_mut(&key) {
            client.audience = joined;
        }
        Switch {
            left_at,
            joined: reader,
        }
    }

    fn remove(&mut self, key: ClientKey) -> Option<Client> {
        let client = self.clients.remove(&key)?;
        self.subscriptions -= client.filters.len();
        if let Some(audience) = client.audience {
            self.leave(audience);
        }
        if self.names.get(&client.name) == Some(&key) {
            self.names.remove(&client.name);
        }
        Some(client)
    }
}

/// The outcome of one filter of a SUBSCRIBE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subscribed {
    /// Added (or already held).
    Granted,
    /// The client holds [`BrokerConfig::max_subscriptions`] filters already.
    AtCap,
}

/// The broker.
#[derive(Debug)]
pub struct Broker {
    config: BrokerConfig,
    registry: RwLock<Registry>,
    // The registry's client count, read without its lock.
    clients: AtomicUsize,
    next_key: AtomicU64,
    metrics: Arc<MqttMetrics>,
}

impl Broker {
    /// A broker with `config`, counting into `metrics`.
    pub fn new(config: BrokerConfig, metrics: Arc<MqttMetrics>) -> Self {
        Self {
            config,
            registry: RwLock::default(),
            clients: AtomicUsize::new(0),
            next_key: AtomicU64::new(1),
            metrics,
        }
    }

    /// The limits.
    pub fn config(&self) -> &BrokerConfig {
        &self.config
    }

    /// The counters.
    pub fn metrics(&self) -> &Arc<MqttMetrics> {
        &self.metrics
    }

    /// Registers a client that sent CONNECT with `client_id` (empty: the broker makes one).
    /// A client connected with the same id is stopped and forgotten.
    ///
    /// # Errors
    /// The CONNACK code refusing it: an id longer than [`MAX_CLIENT_ID_LEN`], or the client
    /// cap reached.
    pub fn connect(&self, client_id: &str, outbox: Arc<Outbox>) -> Result<ClientKey, ConnectCode> {
        if client_id.len() > MAX_CLIENT_ID_LEN {
            return Err(ConnectCode::IdentifierRejected);
        }
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let name = match client_id {
            "" => format!("ledger-node-{key}"),
            id => id.to_owned(),
        };
        let mut reg = self.registry.write();
        if let Some(old) = reg.names.get(&name).copied() {
            if let Some(old) = reg.remove(old) {
                old.outbox.stop();
            }
        }
        if reg.clients.len() >= self.config.max_clients {
            self.counted(&reg);
            return Err(ConnectCode::ServerUnavailable);
        }
        reg.names.insert(name.clone(), key);
        reg.clients.insert(
            key,
            Client {
                name,
                outbox,
                filters: BTreeSet::new(),
                audience: None,
            },
        );
        self.counted(&reg);
        Ok(key)
    }

    /// Forgets client `key` and its filters (nothing if it was replaced already).
    pub fn disconnect(&self, key: ClientKey) {
        let mut reg = self.registry.write();
        reg.remove(key);
        self.counted(&reg);
    }

    fn counted(&self, reg: &Registry) {
        self.clients.store(reg.clients.len(), Ordering::Release);
        self.metrics.set_clients(reg.clients.len());
        self.metrics.set_subscriptions(reg.subscriptions);
    }

    /// Adds `filters` to client `key`'s filters, in order, each while the client holds fewer
    /// than [`BrokerConfig::max_subscriptions`]; the client moves to the audience of its new
    /// set (the returned [`Switch`] for its [`Delivery`](crate::delivery::Delivery)).
    pub fn subscribe(&self, key: ClientKey, filters: &[Filter]) -> (Vec<Subscribed>, Switch) {
        let mut reg = self.registry.write();
        let cap = self.config.max_subscriptions;
        let Some(client) = reg.clients.get(&key) else {
            return (vec![Subscribed::AtCap; filters.len()], Switch::default());
        };
        let mut set = client.filters.clone();
        let outcomes = filters
            .iter()
            .map(|f| {
                if set.contains(f) {
                    Subscribed::Granted
                } else if set.len() >= cap {
                    Subscribed::AtCap
                } else {
                    set.insert(f.clone());
                    Subscribed::Granted
                }
            })
            .collect();
        let switch = reg.regroup(key, set, self.config.client_queue_bytes, &self.metrics);
        self.counted(&reg);
        (outcomes, switch)
    }

    /// Removes `filters` from client `key`'s filters (those it holds).
    pub fn unsubscribe(&self, key: ClientKey, filters: &[Filter]) -> Switch {
        let mut reg = self.registry.write();
        let Some(client) = reg.clients.get(&key) else {
            return Switch::default();
        };
        let mut set = client.filters.clone();
        for f in filters {
            set.remove(f);
        }
        let switch = reg.regroup(key, set, self.config.client_queue_bytes, &self.metrics);
        self.counted(&reg);
        switch
    }

    /// Whether any client's filter matches `topic`.
    pub fn has_subscribers(&self, topic: &str) -> bool {
        self.registry.read().has_subscribers(topic)
    }

    /// Whether some client's filter may match a topic whose first level is `first` (`outputs`,
    /// `block-metadata`…): an exact filter below it, or a wildcard filter starting with it, `+`
    /// or `#`. Lets a publisher skip building topics and reading what would go out on none of
    /// them; one lookup, whatever the number of exact filters.
    pub fn may_match_under(&self, first: &str) -> bool {
        let reg = self.registry.read();
        reg.exact_first_levels.contains_key(first) || reg.wild_may_match_under(first)
    }

    /// [`Broker::may_match_under`] for the topics strictly below `first` (`blocks/…`, not
    /// `blocks` itself): lets a publisher skip reading a block for its subtopics while only
    /// `blocks` is watched.
    pub fn may_match_below(&self, first: &str) -> bool {
        let reg = self.registry.read();
        let exact_under = reg.exact_first_levels.get(first).copied().unwrap_or(0);
        exact_under > usize::from(reg.exact.contains_key(first)) || reg.wild_may_match_under(first)
    }

    /// Whether any client is connected (the cheapest check before any event work; never
    /// waits for the registry's lock).
    pub fn has_clients(&self) -> bool {
        self.clients.load(Ordering::Acquire) > 0
    }

    /// [`Broker::has_subscribers`] for a caller that must not wait (the engine's threads): true
    /// when the registry is being changed, so the caller sends and the publisher decides.
    pub fn may_have_subscribers(&self, topic: &str) -> bool {
        self.registry
            .try_read()
            .is_none_or(|reg| reg.has_subscribers(topic))
    }

    /// Publishes `payload` on `topic` (QoS 0, no retain) to every client whose filter matches,
    /// encoded once; returns how many clients it went to. Never waits for a client.
    pub fn publish(&self, topic: &str, payload: &[u8]) -> usize {
        self.publish_with(topic, || Some(payload))
    }

    /// [`Broker::publish`] with the payload built (or borrowed) only when a client matches
    /// `topic` (`None` from `payload`: nothing is sent). The packet is encoded once and copied
    /// into the feed of each matching audience, whatever its number of clients.
    ///
    /// The feeds are written under the registry's read lock, so a client changing its
    /// filters meanwhile sees the message exactly once if its old or new set matches it.
    pub fn publish_with<P: AsRef<[u8]>>(
        &self,
        topic: &str,
        payload: impl FnOnce() -> Option<P>,
    ) -> usize {
        let mut keys = Vec::new();
        let reg = self.registry.read();
        reg.audiences_for(topic, &mut keys);
        if keys.is_empty() {
            return 0;
        }
        let Some(packet) = payload().and_then(|p| publish_qos0(topic, p.as_ref())) else {
            return 0;
        };
        let mut sent = 0;
        for audience in keys.iter().filter_map(|k| reg.audiences.get(k)) {
            audience.feed.push(&packet);
            sent += audience.members;
        }
        drop(reg);
        self.metrics.published(topic, sent as u64);
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{delivery::Delivery, outbox::queue};

    fn broker(config: BrokerConfig) -> Broker {
        Broker::new(config, Arc::default())
    }

    fn client(b: &Broker, id: &str) -> (ClientKey, Delivery) {
        let bound = b.config().client_queue_bytes;
        let (out, inbox) = queue();
        let key = b.connect(id, out).expect("connects");
        (key, Delivery::new(inbox, bound, Arc::clone(b.metrics())))
    }

    fn filter(s: &str) -> Filter {
        Filter::parse(s.as_bytes()).expect("valid")
    }

    fn sub(b: &Broker, key: ClientKey, d: &mut Delivery, f: &str) -> Subscribed {
        let (outcomes, switch) = b.subscribe(key, &[filter(f)]);
        d.switch(switch);
        outcomes[0]
    }

    fn unsub(b: &Broker, key: ClientKey, d: &mut Delivery, f: &str) {
        d.switch(b.unsubscribe(key, &[filter(f)]));
    }

    /// Everything the client's writer would send now, as one byte stream.
    fn sent(d: &mut Delivery) -> Vec<u8> {
        std::iter::from_fn(|| d.next_frame(1 << 20))
            .flat_map(|f| f.to_vec())
            .collect()
    }

    fn packets(list: &[(&str, &[u8])]) -> Vec<u8> {
        list.iter()
            .flat_map(|(t, p)| publish_qos0(t, p).expect("fits").to_vec())
            .collect()
    }

    #[test]
    fn fan_out_by_exact_and_wildcard_filters_once_per_client() {
        let b = broker(BrokerConfig::default());
        let (a, mut da) = client(&b, "a");
        let (c, mut dc) = client(&b, "c");
        assert_eq!(sub(&b, a, &mut da, "blocks"), Subscribed::Granted);
        assert_eq!(sub(&b, a, &mut da, "blocks/#"), Subscribed::Granted);
        assert_eq!(sub(&b, c, &mut dc, "+/transaction"), Subscribed::Granted);
        sent(&mut da);
        assert_eq!(
            b.publish("blocks", b"x"),
            1,
            "a once, though two filters match"
        );
        assert_eq!(b.publish("blocks/transaction", b"y"), 2);
        assert_eq!(b.publish("milestones", b"z"), 0);
        assert_eq!(
            sent(&mut da),
            packets(&[("blocks", b"x"), ("blocks/transaction", b"y")])
        );
        assert_eq!(sent(&mut dc), packets(&[("blocks/transaction", b"y")]));
        assert!(da.next_frame(1 << 20).is_none());
    }

    #[test]
    fn clients_with_the_same_filters_share_one_feed_and_read_at_their_own_pace() {
        let b = broker(BrokerConfig::default());
        let mut clients: Vec<_> = (0..3).map(|i| client(&b, &format!("c{i}"))).collect();
        for (key, d) in &mut clients {
            sub(&b, *key, d, "blocks");
        }
        assert_eq!(b.registry.read().audiences.len(), 1);
        assert_eq!(b.publish("blocks", b"1"), 3);
        let first = sent(&mut clients[0].1);
        assert_eq!(first, packets(&[("blocks", b"1")]));
        assert_eq!(b.publish("blocks", b"2"), 3);
        assert_eq!(sent(&mut clients[0].1), packets(&[("blocks", b"2")]));
        assert_eq!(
            sent(&mut clients[1].1),
            packets(&[("blocks", b"1"), ("blocks", b"2")])
        );
        // A client adding a filter moves to another audience: what was published before the
        // move comes from the old feed, what after from the new one, nothing twice.
        assert_eq!(b.publish("blocks", b"3"), 3);
        let (key, d) = &mut clients[2];
        sub(&b, *key, d, "milestones");
        assert_eq!(b.registry.read().audiences.len(), 2);
        assert_eq!(b.publish("milestones", b"m"), 1);
        assert_eq!(b.publish("blocks", b"4"), 3);
        assert_eq!(
            sent(d),
            packets(&[
                ("blocks", b"1"),
                ("blocks", b"2"),
                ("blocks", b"3"),
                ("milestones", b"m"),
                ("blocks", b"4"),
            ])
        );
        unsub(&b, *key, d, "milestones");
        unsub(&b, *key, d, "blocks");
        assert_eq!(b.publish("blocks", b"5"), 2);
        assert!(sent(d).is_empty(), "no filters, nothing");
        assert_eq!(
            b.registry.read().audiences.len(),
            1,
            "the emptied one is gone"
        );
        assert_eq!(clients[1].1.pending(), 3, "3, 4 and 5 unread");
    }

    #[test]
    fn a_client_that_falls_behind_its_bound_loses_the_oldest_and_others_do_not() {
        let b = broker(BrokerConfig {
            client_queue_bytes: 100 * 1024,
            ..BrokerConfig::default()
        });
        let (fast, mut df) = client(&b, "fast");
        let (slow, mut ds) = client(&b, "slow");
        sub(&b, fast, &mut df, "blocks");
        sub(&b, slow, &mut ds, "blocks");
        let payload = [7u8; 1000];
        let one = packets(&[("blocks", &payload)]);
        let mut fast_got = 0;
        for _ in 0..1000 {
            b.publish("blocks", &payload);
            fast_got += sent(&mut df).len();
        }
        assert_eq!(
            fast_got,
            1000 * one.len(),
            "the reader that keeps up loses nothing"
        );
        assert!(
            ds.backlogged_for().is_some(),
            "the other lags beyond its bound"
        );
        let got = sent(&mut ds);
        assert_eq!(got.len() % one.len(), 0, "whole packets only");
        let kept = got.len() / one.len();
        // The feed drops whole pieces of an eighth of the bound.
        assert!(
            (85..=102).contains(&kept),
            "about the bound's worth: {kept}"
        );
        assert_eq!(
            b.metrics()
                .dropped_count(crate::metrics::DropReason::QueueFull),
            1000 - kept as u64
        );
        let feed = Arc::clone(
            &b.registry
                .read()
                .audiences
                .values()
                .next()
                .expect("one")
                .feed,
        );
        assert!(
            feed.held_bytes() <= 100 * 1024 / 8 + one.len(),
            "read by both: released"
        );
    }

    #[test]
    fn nothing_is_built_for_a_topic_nobody_matches() {
        let b = broker(BrokerConfig::default());
        let (a, mut da) = client(&b, "a");
        sub(&b, a, &mut da, "blocks");
        let mut built = 0;
        b.publish_with("milestones", || {
            built += 1;
            Some([])
        });
        assert_eq!(built, 0);
        b.publish_with("blocks", || {
            built += 1;
            Some([])
        });
        assert_eq!(built, 1);
        assert!(b.may_match_under("blocks"));
        assert!(!b.may_match_under("outputs"));
        sub(&b, a, &mut da, "outputs/unlock/+/rms1x");
        assert!(b.may_match_under("outputs"));
        assert!(!b.may_match_under("transactions"));
        sub(&b, a, &mut da, "+/x/included-block");
        assert!(b.may_match_under("transactions"));
        unsub(&b, a, &mut da, "+/x/included-block");
        unsub(&b, a, &mut da, "outputs/unlock/+/rms1x");
        assert!(!b.may_match_under("transactions"));
        let (c, mut dc) = client(&b, "c");
        sub(&b, c, &mut dc, "outputs/0x01");
        sub(&b, a, &mut da, "outputs/0x01");
        assert!(b.may_match_under("outputs"));
        b.disconnect(c);
        assert!(b.may_match_under("outputs"), "a still holds it");
        unsub(&b, a, &mut da, "outputs/0x01");
        assert!(!b.may_match_under("outputs"));
        assert!(b.may_match_under("blocks"));
    }

    #[test]
    fn below_a_level_means_strictly_below_it() {
        let b = broker(BrokerConfig::default());
        let (a, mut da) = client(&b, "a");
        sub(&b, a, &mut da, "blocks");
        assert!(b.may_match_under("blocks"));
        assert!(
            !b.may_match_below("blocks"),
            "`blocks` alone is not below itself"
        );
        for filter in [
            "blocks/tagged-data/0x01",
            "blocks/#",
            "blocks/+",
            "+/transaction",
            "#",
        ] {
            let (c, mut dc) = client(&b, "c");
            sub(&b, c, &mut dc, filter);
            assert!(b.may_match_below("blocks"), "{filter}");
            b.disconnect(c);
            assert!(!b.may_match_below("blocks"), "{filter} gone");
        }
        // An exact filter below `blocks` held while `blocks` itself is not.
        unsub(&b, a, &mut da, "blocks");
        sub(&b, a, &mut da, "blocks/transaction");
        assert!(b.may_match_below("blocks"));
        assert!(!b.may_match_below("outputs"));
    }

    #[test]
    fn caps_on_clients_subscriptions_and_ids() {
        let b = broker(BrokerConfig {
            max_clients: 2,
            max_subscriptions: 2,
            ..BrokerConfig::default()
        });
        let (a, mut da) = client(&b, "a");
        let (_c, _dc) = client(&b, "");
        let (out, _) = queue();
        assert_eq!(b.connect("d", out), Err(ConnectCode::ServerUnavailable));
        let (out, _) = queue();
        assert_eq!(
            b.connect(&"x".repeat(MAX_CLIENT_ID_LEN + 1), out),
            Err(ConnectCode::IdentifierRejected)
        );
        assert_eq!(sub(&b, a, &mut da, "x"), Subscribed::Granted);
        assert_eq!(sub(&b, a, &mut da, "y/#"), Subscribed::Granted);
        assert_eq!(
            sub(&b, a, &mut da, "x"),
            Subscribed::Granted,
            "held already"
        );
        assert_eq!(sub(&b, a, &mut da, "z"), Subscribed::AtCap);
        let (outcomes, _) = b.subscribe(a, &[filter("x"), filter("w")]);
        assert_eq!(outcomes, vec![Subscribed::Granted, Subscribed::AtCap]);
        unsub(&b, a, &mut da, "x");
        assert_eq!(sub(&b, a, &mut da, "z"), Subscribed::Granted);
        assert_eq!(b.registry.read().subscriptions, 2);
        b.disconnect(a);
        assert!(!b.has_subscribers("z"));
        assert!(!b.has_subscribers("y"));
        assert_eq!(b.registry.read().subscriptions, 0);
        assert!(b.registry.read().audiences.is_empty());
    }

    #[test]
    fn the_same_id_replaces_the_old_connection_whose_late_close_changes_nothing() {
        let b = broker(BrokerConfig::default());
        let bound = b.config().client_queue_bytes;
        let (out, _inbox) = queue();
        let old = b.connect("iotasdk0x1", Arc::clone(&out)).expect("connects");
        let mut d = Delivery::new(queue().1, bound, Arc::default());
        sub(&b, old, &mut d, "blocks");
        let (new, mut dn) = client(&b, "iotasdk0x1");
        assert!(
            !b.has_subscribers("blocks"),
            "the old one's filters went with it"
        );
        sub(&b, new, &mut dn, "milestones");
        b.disconnect(old);
        assert!(b.has_subscribers("milestones"));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(5), out.stopped())
                .await
                .expect("the old connection was told to stop");
        });
    }

    #[test]
    fn the_engines_checks_never_wait_for_the_registry() {
        let b = broker(BrokerConfig::default());
        assert!(!b.has_clients());
        let (key, mut d) = client(&b, "a");
        assert!(b.has_clients());
        assert!(!b.may_have_subscribers("tip-score-updates"));
        sub(&b, key, &mut d, "tip-score-updates");
        assert!(b.may_have_subscribers("tip-score-updates"));
        assert!(!b.may_have_subscribers("blocks"));
        {
            // A connection changing the registry (possibly preempted while it does): the
            // engine's threads answer at once, and "maybe" leaves the decision to the publisher.
            let _held = b.registry.write();
            assert!(b.has_clients());
            assert!(b.may_have_subscribers("blocks"));
        }
        b.disconnect(key);
        assert!(!b.has_clients());
    }
}
