//! `iota_node_*` and `iota_database_*`: read from the engine and the node at scrape time.

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::{gauge::ConstGauge, MetricType},
};

use ledger_api::node::NODE_NAME;

use super::{utxo_size::UtxoSizeEstimate, MetricSources};

/// Reads the node's state for each scrape (Hornet's `collectInfo` and database metrics).
#[derive(Debug)]
pub struct NodeCollector {
    sources: MetricSources,
    utxo_size: UtxoSizeEstimate,
}

impl NodeCollector {
    /// A collector over the node, engine, rates and PoW pool of `state`.
    pub fn new(sources: MetricSources) -> Self {
        Self {
            sources,
            utxo_size: UtxoSizeEstimate::default(),
        }
    }
}

/// Encodes one unlabelled gauge.
fn gauge<V: prometheus_client::encoding::EncodeGaugeValue>(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    value: V,
) -> Result<(), std::fmt::Error> {
    ConstGauge::new(value).encode(encoder.encode_descriptor(name, help, None, MetricType::Gauge)?)
}

/// Encodes one gauge family with a value per `(label value)` under label `label`.
fn gauge_by<V: prometheus_client::encoding::EncodeGaugeValue>(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    label: &'static str,
    values: &[(&'static str, V)],
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (value_label, value) in values {
        family
            .encode_family(&[(label, *value_label)])?
            .encode_gauge(value)?;
    }
    Ok(())
}

impl Collector for NodeCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let sources = &self.sources;
        encoder
            .encode_descriptor(
                "iota_node_app_info",
                "Node software name and version.",
                None,
                MetricType::Gauge,
            )?
            .encode_family(&[("name", NODE_NAME), ("version", env!("CARGO_PKG_VERSION"))])?
            .encode_gauge(&1u32)?;
        gauge(
            &mut encoder,
            "iota_node_health",
            "Health of the node.",
            u32::from(sources.node.is_healthy()),
        )?;
        let rates = sources.rates.get();
        gauge(
            &mut encoder,
            "iota_node_blocks_per_second",
            "Current rate of new blocks per second.",
            rates.blocks_per_second,
        )?;
        gauge(
            &mut encoder,
            "iota_node_referenced_blocks_per_second",
            "Current rate of referenced blocks per second.",
            rates.referenced_blocks_per_second,
        )?;
        gauge(
            &mut encoder,
            "iota_node_referenced_rate",
            "Ratio of referenced blocks in relation to new blocks.",
            rates.referenced_rate,
        )?;
        gauge(
            &mut encoder,
            "iota_restapi_pow_requests",
            "The amount of completed REST API PoW requests.",
            sources.submit.pow_completed(),
        )?;
        let engine = &sources.engine;
        // Latest: the highest milestone known, also one still waiting for its cone.
        let sync = engine.sync_state();
        let (confirmed, latest) = (sync.confirmed, sync.latest.max(sync.confirmed));
        gauge_by(
            &mut encoder,
            "iota_node_milestones",
            "Infos about milestone indexes.",
            "type",
            &[("latest", latest), ("confirmed", confirmed)],
        )?;
        let (non_lazy, semi_lazy, _lazy) = engine.tip_pool_sizes();
        gauge_by(
            &mut encoder,
            "iota_node_tips",
            "Number of tips.",
            "type",
            &[("nonlazy", non_lazy), ("semilazy", semi_lazy)],
        )?;
        gauge(
            &mut encoder,
            "iota_database_tangle_size_bytes",
            "Database sizes in bytes: the block log's records in its segment files.",
            engine.log_stats().used_bytes,
        )?;
        gauge(
            &mut encoder,
            "iota_database_utxo_size_bytes",
            "Database sizes in bytes: an estimate of the UTXO ledger's rows.",
            self.utxo_size.bytes(engine),
        )?;
        Ok(())
    }
}
