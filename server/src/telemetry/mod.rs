//! The Prometheus endpoint: `GET /metrics` on its own listener (`--metrics-bind`), encoded by
//! prometheus-client (OpenMetrics text).
//!
//! Names and labels follow Hornet's `components/prometheus` so existing dashboards work:
//! `iota_node_*` and `iota_database_*` are read from the engine at scrape time
//! ([`node::NodeCollector`]), `iota_restapi_*` are counted by a layer of the API, which
//! registers them itself ([`ledger_api::request_metrics::ApiMetrics`]), `iota_gossip_peers_*`
//! are registered by peering ([`ledger_p2p::metrics::register`]), `process_*` come from
//! `/proc/self` ([`process::ProcessCollector`]),
//! and two histograms of our own time milestone confirmation and block-log commits
//! ([`timings::EngineTimings`], fed by the engine's [`ledger_engine::TimingObserver`] hook).

pub mod endpoint;
pub mod node;
pub mod process;
pub mod timings;
pub mod utxo_size;

use prometheus_client::{encoding::text, registry::Registry};

use std::sync::Arc;

use ledger_api::{
    node::NodeApi, rates::BlockRates, request_metrics::ApiMetrics, submit::SubmitService,
};
use ledger_engine::Engine;
use ledger_p2p::P2p;

/// Every metric family of the node, ready to be encoded.
#[derive(Debug)]
pub struct NodeMetrics {
    registry: Registry,
}

/// What the metrics read, handed over by the composition root: each crate's own handle.
#[derive(Clone)]
pub struct MetricSources {
    /// The ledger engine.
    pub engine: Arc<Engine>,
    /// The node's health.
    pub node: Arc<dyn NodeApi>,
    /// Block rates.
    pub rates: Arc<BlockRates>,
    /// The submit service (completed PoW requests).
    pub submit: Arc<SubmitService>,
    /// The API's request counters.
    pub api: Arc<ApiMetrics>,
    /// Peering, unless it is off.
    pub p2p: Option<P2p>,
    /// The event API's broker counters, unless it is off (the families are shown anyway).
    pub mqtt: Option<Arc<ledger_events::metrics::MqttMetrics>>,
}

impl std::fmt::Debug for MetricSources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricSources").finish_non_exhaustive()
    }
}

impl NodeMetrics {
    /// The metrics of the node behind `sources`, with the confirmation and commit histograms
    /// of `timings`.
    pub fn new(sources: MetricSources, timings: &timings::EngineTimings) -> Self {
        let mut registry = Registry::default();
        sources.api.register(&mut registry);
        ledger_p2p::metrics::register(sources.p2p.clone(), &mut registry);
        sources
            .mqtt
            .clone()
            .unwrap_or_default()
            .register(&mut registry);
        registry.register_collector(Box::new(node::NodeCollector::new(sources)));
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
