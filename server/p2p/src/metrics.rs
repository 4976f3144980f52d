//! `iota_gossip_peers_*`: each peer's gossip counters and connection state, read from the
//! peer registry at scrape time, under Hornet's names and labels (`address`, `alias`, `id`,
//! and `type` for the counters) so its Grafana dashboards work unchanged.

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::{gauge::ConstGauge, MetricType},
    registry::Registry,
};

use crate::{P2p, PeerInfo, PeerStats};

/// Registers the `iota_gossip_peers_*` families in `registry`, read from `p2p`'s peers at
/// each scrape (no peers, but the same families, when peering is off).
pub fn register(p2p: Option<P2p>, registry: &mut Registry) {
    registry.register_collector(Box::new(GossipCollector(p2p)));
}

/// Reads the node's peers for each scrape.
#[derive(Debug)]
struct GossipCollector(Option<P2p>);

/// A counter family: its name, help and, per `type` label, the counter it reports.
type CounterFamily = (
    &'static str,
    &'static str,
    &'static [(&'static str, fn(&PeerStats) -> u64)],
);

/// Hornet's per-peer counter families, in its order.
const COUNTER_FAMILIES: &[CounterFamily] = &[
    (
        "iota_gossip_peers_blocks",
        "Number of blocks by peer.",
        &[
            ("all", |m| m.received_blocks),
            ("new", |m| m.new_blocks),
            ("known", |m| m.known_blocks),
            ("sent", |m| m.sent_blocks),
        ],
    ),
    (
        "iota_gossip_peers_requests",
        "Number of requests by peer.",
        &[
            ("received_blocks", |m| m.received_block_requests),
            ("received_milestones", |m| m.received_milestone_requests),
            ("sent_blocks", |m| m.sent_block_requests),
            ("sent_milestones", |m| m.sent_milestone_requests),
        ],
    ),
    (
        "iota_gossip_peers_heartbeats",
        "Number of heartbeats by peer.",
        &[
            ("received", |m| m.received_heartbeats),
            ("sent", |m| m.sent_heartbeats),
        ],
    ),
    (
        "iota_gossip_peers_dropped_packets",
        "Number of dropped packets by peer.",
        &[("sent", |m| m.dropped_packets)],
    ),
];

/// The labels naming `peer`: `address`, `alias`, `id`.
fn peer_labels(peer: &PeerInfo) -> [(&'static str, &str); 3] {
    [
        (
            "address",
            peer.multi_addresses.first().map_or("", String::as_str),
        ),
        ("alias", peer.alias.as_deref().unwrap_or("")),
        ("id", peer.id.as_str()),
    ]
}

impl Collector for GossipCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let peers = self.0.as_ref().map(P2p::peers).unwrap_or_default();
        for (name, help, counters) in COUNTER_FAMILIES {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for peer in &peers {
                let metrics = peer.gossip.stats;
                let [address, alias, id] = peer_labels(peer);
                for (kind, value) in counters.iter() {
                    let labels = [address, alias, id, ("type", *kind)];
                    ConstGauge::new(value(&metrics)).encode(family.encode_family(&labels)?)?;
                }
            }
        }
        let mut connected = encoder.encode_descriptor(
            "iota_gossip_peers_connected_peers",
            "Are peers connected?",
            None,
            MetricType::Gauge,
        )?;
        for peer in &peers {
            ConstGauge::new(u32::from(peer.connected))
                .encode(connected.encode_family(&peer_labels(peer))?)?;
        }
        Ok(())
    }
}
