//! The broker: connected clients, the subscription index, and fan-out of each message to the
//! queues of the clients whose filters match it, encoded once.
//!
//! The index holds every client's filters in two maps: exact filters by name (one lookup per
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

use bytes::Bytes;
use parking_lot::RwLock;

use crate::{
    metrics::MqttMetrics,
    outbox::Outbox,
    packet::{publish_qos0, ConnectCode},
    topic::{matches, Filter},
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

#[derive(Debug)]
struct Client {
    name: String,
    outbox: Arc<Outbox>,
    filters: BTreeSet<Filter>,
}

#[derive(Debug, Default)]
struct Registry {
    clients: HashMap<ClientKey, Client>,
    names: HashMap<String, ClientKey>,
    exact: HashMap<String, HashSet<ClientKey>>,
    wild: HashMap<Filter, HashSet<ClientKey>>,
    subscriptions: usize,
}

impl Registry {
    fn subscribers(&self, topic: &str, out: &mut Vec<ClientKey>) {
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

    fn has_subscribers(&self, topic: &str) -> bool {
        self.exact.contains_key(topic) || self.wild.keys().any(|f| matches(f.as_str(), topic))
    }

    fn unindex(&mut self, key: ClientKey, filter: &Filter) {
        let map_remove = |keys: &mut HashSet<ClientKey>| {
            keys.remove(&key);
            keys.is_empty()
        };
        if filter.is_wildcard() {
            if self.wild.get_mut(filter).is_some_and(map_remove) {
                self.wild.remove(filter);
            }
        } else if self.exact.get_mut(filter.as_str()).is_some_and(map_remove) {
            self.exact.remove(filter.as_str());
        }
        self.subscriptions -= 1;
    }

    fn remove(&mut self, key: ClientKey) -> Option<Client> {
        let client = self.clients.remove(&key)?;
        for filter in &client.filters {
            self.unindex(key, filter);
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
            return Err(ConnectCode::ServerUnavailable);
        }
        reg.names.insert(name.clone(), key);
        reg.clients.insert(
            key,
            Client {
                name,
                outbox,
                filters: BTreeSet::new(),
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

    /// Adds `filter` to client `key`'s filters.
    pub fn subscribe(&self, key: ClientKey, filter: &Filter) -> Subscribed {
        let mut reg = self.registry.write();
        let cap = self.config.max_subscriptions;
        let Some(client) = reg.clients.get_mut(&key) else {
            return Subscribed::AtCap;
        };
        if client.filters.contains(filter) {
            return Subscribed::Granted;
        }
        if client.filters.len() >= cap {
            return Subscribed::AtCap;
        }
        client.filters.insert(filter.clone());
        if filter.is_wildcard() {
            reg.wild.entry(filter.clone()).or_default().insert(key);
        } else {
            reg.exact
                .entry(filter.as_str().to_owned())
                .or_default()
                .insert(key);
        }
        reg.subscriptions += 1;
        self.metrics.set_subscriptions(reg.subscriptions);
        Subscribed::Granted
    }

    /// Removes `filter` from client `key`'s filters (nothing if it does not hold it).
    pub fn unsubscribe(&self, key: ClientKey, filter: &Filter) {
        let mut reg = self.registry.write();
        let held = reg
            .clients
            .get_mut(&key)
            .is_some_and(|c| c.filters.remove(filter));
        if held {
            reg.unindex(key, filter);
            self.metrics.set_subscriptions(reg.subscriptions);
        }
    }

    /// Whether any client's filter matches `topic`.
    pub fn has_subscribers(&self, topic: &str) -> bool {
        self.registry.read().has_subscribers(topic)
    }

    /// Whether some client's filter may match a topic whose first level is `first` (`outputs`,
    /// `transactions`…): an exact filter below it, or a wildcard filter starting with it, `+`
    /// or `#`. Lets a publisher skip reading what would go out on none of them.
    pub fn may_match_under(&self, first: &str) -> bool {
        let reg = self.registry.read();
        let under = |f: &str| f.split('/').next().is_some_and(|l| l == first);
        reg.exact.keys().any(|f| under(f))
            || reg.wild.keys().any(|f| {
                let level = f.as_str().split('/').next().unwrap_or_default();
                level == "+" || level == "#" || level == first
            })
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
    /// encoded once; returns how many queues took it. Never waits.
    pub fn publish(&self, topic: &str, payload: &[u8]) -> usize {
        self.publish_with(topic, || Some(payload))
    }

    /// [`Broker::publish`] with the payload built (or borrowed) only when a client matches
    /// `topic` (`None` from `payload`: nothing is sent). The payload is copied once, into the
    /// packet every matching client shares.
    pub fn publish_with<P: AsRef<[u8]>>(
        &self,
        topic: &str,
        payload: impl FnOnce() -> Option<P>,
    ) -> usize {
        let mut keys = Vec::new();
        let outboxes: Vec<Arc<Outbox>> = {
            let reg = self.registry.read();
            reg.subscribers(topic, &mut keys);
            keys.iter()
                .filter_map(|k| reg.clients.get(k).map(|c| Arc::clone(&c.outbox)))
                .collect()
        };
        if outboxes.is_empty() {
            return 0;
        }
        let Some(packet) = payload().and_then(|p| publish_qos0(topic, p.as_ref())) else {
            return 0;
        };
        self.deliver(topic, &packet, &outboxes)
    }

    /// Sends `payload` on `topic` to one client only (a snapshot for a new subscriber).
    pub fn publish_to(&self, outbox: &Outbox, topic: &str, payload: &[u8]) -> bool {
        let Some(packet) = publish_qos0(topic, payload) else {
            return false;
        };
        let sent = outbox.publish(packet);
        if sent {
            self.metrics.published(topic, 1);
        }
        sent
    }

    fn deliver(&self, topic: &str, packet: &Bytes, outboxes: &[Arc<Outbox>]) -> usize {
        let sent = outboxes
            .iter()
            .filter(|o| o.publish(packet.clone()))
            .count();
        self.metrics.published(topic, sent as u64);
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbox::{queue, Inbox};

    fn broker(config: BrokerConfig) -> Broker {
        Broker::new(config, Arc::default())
    }

    fn client(b: &Broker, id: &str) -> (ClientKey, Inbox) {
        let (out, inbox) = queue(b.config().client_queue_bytes, Arc::clone(b.metrics()));
        (b.connect(id, out).expect("connects"), inbox)
    }

    fn filter(s: &str) -> Filter {
        Filter::parse(s.as_bytes()).expect("valid")
    }

    #[test]
    fn fan_out_by_exact_and_wildcard_filters_once_per_client() {
        let b = broker(BrokerConfig::default());
        let (a, mut ia) = client(&b, "a");
        let (c, mut ic) = client(&b, "c");
        assert_eq!(b.subscribe(a, &filter("blocks")), Subscribed::Granted);
        assert_eq!(b.subscribe(a, &filter("blocks/#")), Subscribed::Granted);
        assert_eq!(
            b.subscribe(c, &filter("+/transaction")),
            Subscribed::Granted
        );
        assert_eq!(
            b.publish("blocks", b"x"),
            1,
            "a once, though two filters match"
        );
        assert_eq!(b.publish("blocks/transaction", b"y"), 2);
        assert_eq!(b.publish("milestones", b"z"), 0);
        assert_eq!(
            ia.try_recv().map(|p| p.to_vec()),
            publish_qos0("blocks", b"x").map(|p| p.to_vec())
        );
        assert!(ia.try_recv().is_some());
        assert!(ia.try_recv().is_none());
        assert!(ic.try_recv().is_some());
        assert!(ic.try_recv().is_none());
    }

    #[test]
    fn nothing_is_built_for_a_topic_nobody_matches() {
        let b = broker(BrokerConfig::default());
        let (a, _ia) = client(&b, "a");
        b.subscribe(a, &filter("blocks"));
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
        b.subscribe(a, &filter("outputs/unlock/+/rms1x"));
        assert!(b.may_match_under("outputs"));
        assert!(!b.may_match_under("transactions"));
        b.subscribe(a, &filter("+/x/included-block"));
        assert!(b.may_match_under("transactions"));
    }

    #[test]
    fn caps_on_clients_subscriptions_and_ids() {
        let b = broker(BrokerConfig {
            max_clients: 2,
            max_subscriptions: 2,
            ..BrokerConfig::default()
        });
        let (a, _ia) = client(&b, "a");
        let (_c, _ic) = client(&b, "");
        let (out, _) = queue(10, Arc::default());
        assert_eq!(b.connect("d", out), Err(ConnectCode::ServerUnavailable));
        let (out, _) = queue(10, Arc::default());
        assert_eq!(
            b.connect(&"x".repeat(MAX_CLIENT_ID_LEN + 1), out),
            Err(ConnectCode::IdentifierRejected)
        );
        assert_eq!(b.subscribe(a, &filter("x")), Subscribed::Granted);
        assert_eq!(b.subscribe(a, &filter("y/#")), Subscribed::Granted);
        assert_eq!(
            b.subscribe(a, &filter("x")),
            Subscribed::Granted,
            "held already"
        );
        assert_eq!(b.subscribe(a, &filter("z")), Subscribed::AtCap);
        b.unsubscribe(a, &filter("x"));
        assert_eq!(b.subscribe(a, &filter("z")), Subscribed::Granted);
        b.disconnect(a);
        assert!(!b.has_subscribers("z"));
        assert!(!b.has_subscribers("y"));
    }

    #[test]
    fn the_same_id_replaces_the_old_connection_whose_late_close_changes_nothing() {
        let b = broker(BrokerConfig::default());
        let (old, old_inbox) = client(&b, "iotasdk0x1");
        b.subscribe(old, &filter("blocks"));
        let (new, _inbox) = client(&b, "iotasdk0x1");
        assert!(
            !b.has_subscribers("blocks"),
            "the old one's filters went with it"
        );
        b.subscribe(new, &filter("milestones"));
        b.disconnect(old);
        assert!(b.has_subscribers("milestones"));
        let stopped = old_inbox.outbox();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(5), stopped.stopped())
                .await
                .expect("the old connection was told to stop");
        });
    }

    #[test]
    fn the_engines_checks_never_wait_for_the_registry() {
        let b = broker(BrokerConfig::default());
        assert!(!b.has_clients());
        let (key, _inbox) = client(&b, "a");
        assert!(b.has_clients());
        assert!(!b.may_have_subscribers("tip-score-updates"));
        b.subscribe(key, &filter("tip-score-updates"));
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
