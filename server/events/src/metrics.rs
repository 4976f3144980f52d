//! The broker's Prometheus families: `iota_mqtt_clients_connected`,
//! `iota_mqtt_subscriptions`, `iota_mqtt_published_total{topic_class}` and
//! `iota_mqtt_dropped_total{reason}`.

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

/// Why messages were not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The client's queue was at its byte bound.
    QueueFull,
    /// Left in the queue of a connection that closed (slow client disconnected, replaced,
    /// or gone).
    Disconnected,
    /// The event source's own queue was full (the publisher thread fell behind).
    SourceBacklog,
}

impl DropReason {
    fn label(self) -> &'static str {
        match self {
            Self::QueueFull => "queue_full",
            Self::Disconnected => "disconnected",
            Self::SourceBacklog => "source_backlog",
        }
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClassLabel {
    topic_class: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

/// The topic classes: the first level of the topics the node publishes (a bounded set: the
/// broker publishes only its own topics).
const CLASSES: [&str; 7] = [
    "milestone-info",
    "milestones",
    "blocks",
    "block-metadata",
    "transactions",
    "outputs",
    "other",
];

/// The broker's counters and gauges.
#[derive(Debug, Default)]
pub struct MqttMetrics {
    clients: Gauge,
    subscriptions: Gauge,
    published: Family<ClassLabel, Counter>,
    dropped: Family<ReasonLabel, Counter>,
}

impl MqttMetrics {
    /// Adds the families to `registry`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "iota_mqtt_clients_connected",
            "MQTT clients connected (CONNECT accepted)",
            self.clients.clone(),
        );
        registry.register(
            "iota_mqtt_subscriptions",
            "MQTT topic filters held by connected clients",
            self.subscriptions.clone(),
        );
        registry.register(
            "iota_mqtt_published",
            "MQTT messages queued to clients, by topic class (the topic's first level)",
            self.published.clone(),
        );
        registry.register(
            "iota_mqtt_dropped",
            "MQTT messages not delivered, by reason",
            self.dropped.clone(),
        );
        // Every label value from the start, so the families show before the first event.
        for class in CLASSES {
            let _ = self
                .published
                .get_or_create(&ClassLabel { topic_class: class });
        }
        for reason in [
            DropReason::QueueFull,
            DropReason::Disconnected,
            DropReason::SourceBacklog,
        ] {
            let _ = self.dropped.get_or_create(&ReasonLabel {
                reason: reason.label(),
            });
        }
    }

    /// Counts `n` messages queued on `topic`.
    pub fn published(&self, topic: &str, n: u64) {
        let first = crate::topic::first_level(topic);
        let class = CLASSES
            .iter()
            .find(|c| **c == first)
            .copied()
            .unwrap_or("other");
        self.published
            .get_or_create(&ClassLabel { topic_class: class })
            .inc_by(n);
    }

    /// Counts one message dropped for `reason`.
    pub fn dropped(&self, reason: DropReason) {
        self.dropped_n(reason, 1);
    }

    /// Counts `n` messages dropped for `reason`.
    pub fn dropped_n(&self, reason: DropReason, n: u64) {
        if n > 0 {
            self.dropped
                .get_or_create(&ReasonLabel {
                    reason: reason.label(),
                })
                .inc_by(n);
        }
    }

    /// Messages dropped so far for `reason`.
    pub fn dropped_count(&self, reason: DropReason) -> u64 {
        self.dropped
            .get_or_create(&ReasonLabel {
                reason: reason.label(),
            })
            .get()
    }

    pub(crate) fn set_clients(&self, n: usize) {
        self.clients.set(i64::try_from(n).unwrap_or(i64::MAX));
    }

    pub(crate) fn set_subscriptions(&self, n: usize) {
        self.subscriptions.set(i64::try_from(n).unwrap_or(i64::MAX));
    }
}
