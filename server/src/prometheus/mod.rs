//! The Prometheus endpoint: `GET /metrics` on its own listener (`--metrics-bind`), encoded by
//! prometheus-client (OpenMetrics text).
//!
//! Names and labels follow Hornet's `components/prometheus` so existing dashboards work:
//! `iota_node_*` and `iota_database_*` are read from the engine at scrape time
//! ([`node::NodeCollector`]), `iota_restapi_*` are counted by a layer of the API
//! ([`api::ApiMetrics`]), `iota_gossip_peers_*` from the peer registry
//! ([`gossip::GossipCollector`]), `process_*` come from `/proc/self` ([`process::ProcessCollector`]),
//! and two histograms of our own time milestone confirmation and block-log commits
//! ([`timings::EngineTimings`], fed by the engine's [`ledger_engine::TimingObserver`] hook).

pub mod api;
pub mod endpoint;
pub mod gossip;
pub mod node;
pub mod process;
pub mod timings;
pub mod utxo_size;

use prometheus_client::{encoding::text, registry::Registry};

use crate::app::AppState;

/// Every metric family of the node, ready to be encoded.
#[derive(Debug)]
pub struct NodeMetrics {
    registry: Registry,
}

impl NodeMetrics {
    /// The metrics of the node behind `state` (its engine, API counters and PoW pool), with
    /// the confirmation and commit histograms of `timings`.
    pub fn new(state: &AppState, timings: &timings::EngineTimings) -> Self {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(node::NodeCollector::new(state.clone())));
        registry.register_collector(Box::new(gossip::GossipCollector(state.clone())));
        state.api_metrics.register(&mut registry);
        timings.register(&mut registry);
        registry.register_collector(Box::new(process::ProcessCollector));
        Self { registry }
    }

    /// The exposition text of every family now.
    ///
    /// # Errors
    /// Only a formatting fault of the encoder.
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        let mut out = String::new();
        text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}
