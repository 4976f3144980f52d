//! `iota_gossip_peers_*`: each peer's gossip counters and connection state, read from the
//! peer registry at scrape time, under Hornet's names and labels (`address`, `alias`, `id`,
//! and `type` for the counters) so its Grafana dashboards work unchanged.

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::{gauge::ConstGauge, MetricType},
    registry::Registry,
};

use crate::{app::AppState, routes::peers::Peer};

/// Reads the node's peers for each scrape.
#[derive(Debug)]
pub struct GossipCollector {
    state: AppState,
}

impl GossipCollector {
    /// A collector over the peers of the node behind `state`.
    pub fn new(state: AppState) -> Self {
        Self { state }
    }

    /// Adds the collector to `registry`.
    pub fn register(self, registry: &mut Registry) {
        registry.register_collector(Box::new(self));
    }
}

/// One family: for every peer, a gauge per `(type, value)` of `values(peer)`.
fn family(
    encoder: &mut DescriptorEncoder<'_>,
    peers: &[Peer],
    name: &str,
    help: &str,
    values: impl Fn(&Peer) -> Vec<(&'static str, u64)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for peer in peers {
        let address = peer.multi_addresses.first().map_or("", String::as_str);
        let alias = peer.alias.as_deref().unwrap_or("");
        for (kind, value) in values(peer) {
            let labels = [
                ("address", address),
                ("alias", alias),
                ("id", peer.id.as_str()),
                ("type", kind),
            ];
            ConstGauge::new(value).encode(family.encode_family(&labels)?)?;
        }
    }
    Ok(())
}

impl Collector for GossipCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let peers = self.state.node.peers();
        let metrics = |p: &Peer| p.gossip.as_ref().map(|g| g.metrics).unwrap_or_default();
        family(
            &mut encoder,
            &peers,
            "iota_gossip_peers_blocks",
            "Number of blocks by peer.",
            |p| {
                let m = metrics(p);
                vec![
                    ("all", m.received_blocks),
                    ("new", m.new_blocks),
                    ("known", m.known_blocks),
                    ("sent", m.sent_blocks),
                ]
            },
        )?;
        family(
            &mut encoder,
            &peers,
            "iota_gossip_peers_requests",
            "Number of requests by peer.",
            |p| {
                let m = metrics(p);
                vec![
                    ("received_blocks", m.received_block_requests),
                    ("received_milestones", m.received_milestone_requests),
                    ("sent_blocks", m.sent_block_requests),
                    ("sent_milestones", m.sent_milestone_requests),
                ]
            },
        )?;
        family(
            &mut encoder,
            &peers,
            "iota_gossip_peers_heartbeats",
            "Number of heartbeats by peer.",
            |p| {
                let m = metrics(p);
                vec![
                    ("received", m.received_heartbeats),
                    ("sent", m.sent_heartbeats),
                ]
            },
        )?;
        family(
            &mut encoder,
            &peers,
            "iota_gossip_peers_dropped_packets",
            "Number of dropped packets by peer.",
            |p| vec![("sent", metrics(p).dropped_packets)],
        )?;
        let mut connected = encoder.encode_descriptor(
            "iota_gossip_peers_connected_peers",
            "Are peers connected?",
            None,
            MetricType::Gauge,
        )?;
        for peer in &peers {
            let labels = [
                (
                    "address",
                    peer.multi_addresses.first().map_or("", String::as_str),
                ),
                ("alias", peer.alias.as_deref().unwrap_or("")),
                ("id", peer.id.as_str()),
            ];
            ConstGauge::new(u32::from(peer.connected)).encode(connected.encode_family(&labels)?)?;
        }
        Ok(())
    }
}
