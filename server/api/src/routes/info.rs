//! `GET /api/core/v2/info` and `GET /api/core/v2/tips`.

use axum::{extract::State, response::Response};
use serde::Serialize;

use ledger_codec::stardust::ProtocolParameters;

use crate::{
    error::ApiError,
    node::NODE_NAME,
    rates::Rates,
    routes::ids::{json_response, to_hex},
    state::AppState,
};

/// Body of `GET /api/core/v2/info`: every field iota-sdk 1.1.4 requires.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InfoResponse {
    /// Node software name.
    pub name: &'static str,
    /// Node software version.
    pub version: &'static str,
    /// Health and milestones.
    pub status: Status,
    /// Protocol versions this node can run (`[2]`).
    pub supported_protocol_versions: Vec<u8>,
    /// The current v2 protocol parameters.
    pub protocol: ProtocolParameters,
    /// Announced parameter changes (never null; none on this node).
    pub pending_protocol_parameters: Vec<serde_json::Value>,
    /// The base token.
    pub base_token: BaseToken,
    /// Block rates.
    pub metrics: Metrics,
    /// Optional features: `pow` when the node fills in nonces.
    pub features: Vec<&'static str>,
}

/// `info.status`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Whether the node is healthy (a dev node with its own coordinator is).
    pub is_healthy: bool,
    /// The newest milestone known.
    pub latest_milestone: MilestoneRef,
    /// The newest confirmed milestone (the ledger index).
    pub confirmed_milestone: MilestoneRef,
    /// Milestones below this index are pruned.
    pub pruning_index: u32,
}

/// A milestone in `info.status`; timestamp and id are omitted before the first milestone.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneRef {
    /// Milestone index.
    pub index: u32,
    /// Milestone timestamp (Unix seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u32>,
    /// Milestone id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub milestone_id: Option<String>,
}

/// `info.baseToken`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BaseToken {
    /// Token name.
    pub name: &'static str,
    /// Ticker symbol.
    pub ticker_symbol: &'static str,
    /// Unit name.
    pub unit: &'static str,
    /// Subunit name.
    pub subunit: &'static str,
    /// Decimals between unit and subunit.
    pub decimals: u32,
    /// Whether amounts use metric prefixes.
    pub use_metric_prefix: bool,
}

/// The dev network's base token (Hornet's defaults).
pub const BASE_TOKEN: BaseToken = BaseToken {
    name: "IOTA",
    ticker_symbol: "IOTA",
    unit: "IOTA",
    subunit: "micro",
    decimals: 6,
    use_metric_prefix: false,
};

/// `info.metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    /// New blocks per second.
    pub blocks_per_second: f64,
    /// Blocks referenced per second.
    pub referenced_blocks_per_second: f64,
    /// Referenced ÷ new × 100.
    pub referenced_rate: f64,
}

impl From<Rates> for Metrics {
    fn from(r: Rates) -> Self {
        Self {
            blocks_per_second: r.blocks_per_second,
            referenced_blocks_per_second: r.referenced_blocks_per_second,
            referenced_rate: r.referenced_rate,
        }
    }
}

/// `GET /api/core/v2/info`.
pub async fn info(State(state): State<AppState>) -> Result<Response, ApiError> {
    let engine = state.engine()?;
    let genesis = engine.genesis();
    let reference = |m: Option<ledger_engine::MilestoneInfo>| match m {
        Some(m) => MilestoneRef {
            index: m.index,
            timestamp: Some(m.timestamp),
            milestone_id: Some(to_hex(&m.milestone_id)),
        },
        None => MilestoneRef {
            index: genesis.milestone_index,
            timestamp: Some(genesis.milestone_timestamp).filter(|&t| t != 0),
            milestone_id: None,
        },
    };
    // A syncing node knows milestones it has not confirmed yet (Hornet's LMI vs CMI).
    let confirmed = reference(engine.latest_milestone());
    let latest = reference(engine.latest_known_milestone());
    let response = InfoResponse {
        name: NODE_NAME,
        version: env!("CARGO_PKG_VERSION"),
        status: Status {
            is_healthy: state.node.is_healthy(),
            latest_milestone: latest,
            confirmed_milestone: confirmed,
            pruning_index: engine.pruning_index(),
        },
        supported_protocol_versions: vec![ledger_codec::stardust::PROTOCOL_VERSION],
        protocol: engine.params().clone(),
        pending_protocol_parameters: Vec::new(),
        base_token: BASE_TOKEN,
        metrics: state.rates.get().into(),
        features: if state.submit.pow_enabled() {
            vec!["pow"]
        } else {
            Vec::new()
        },
    };
    json_response(&response)
}

/// Body of `GET /api/core/v2/tips`.
#[derive(Debug, Clone, Serialize)]
pub struct TipsResponse {
    /// Up to 4 block ids, sorted.
    pub tips: Vec<String>,
}

/// `GET /api/core/v2/tips`: up to 4 non-lazy tips (on a node with no tip at all, the last
/// milestone block or the genesis entry point, as for auto-filled parents); 503 if none.
pub async fn tips(State(state): State<AppState>) -> Result<Response, ApiError> {
    let tips = state.engine()?.select_parents();
    if tips.is_empty() {
        return Err(ApiError::unavailable("no tips available"));
    }
    json_response(&TipsResponse {
        tips: tips.iter().map(|t| to_hex(t)).collect(),
    })
}
