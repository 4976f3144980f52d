//! `GET /api/core/v2/outputs/{outputId}` and `…/metadata`: confirmed outputs only.

use axum::{
    extract::{Path, State},
    response::Response,
};
use serde::Serialize;

use ledger_codec::{stardust::Output, Codec};
use ledger_engine::{Engine, OutputRead};

use crate::{
    error::ApiError,
    media::{binary, Accept},
    routes::ids::{json_response, parse_hex_id, to_hex, v2_binary},
    state::AppState,
};

/// Output metadata in Hornet's shape: the `…Spent` fields are omitted while unspent.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputMetadata {
    /// Block whose transaction created the output (zero for genesis outputs).
    pub block_id: String,
    /// Creating transaction.
    pub transaction_id: String,
    /// Index in that transaction.
    pub output_index: u16,
    /// Whether it is spent at `ledgerIndex`.
    pub is_spent: bool,
    /// Milestone that spent it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub milestone_index_spent: Option<u32>,
    /// That milestone's timestamp.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub milestone_timestamp_spent: Option<u32>,
    /// Spending transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction_id_spent: Option<String>,
    /// Milestone that booked it.
    pub milestone_index_booked: u32,
    /// That milestone's timestamp.
    pub milestone_timestamp_booked: u32,
    /// The ledger index the answer is valid for.
    pub ledger_index: u32,
}

impl OutputMetadata {
    /// The metadata of an output read from the ledger.
    pub fn new(read: &OutputRead) -> Self {
        let row = &read.row;
        let (tx, index) = split_output_id(&row.output_id);
        Self {
            block_id: to_hex(&row.block_id),
            transaction_id: to_hex(tx),
            output_index: index,
            is_spent: row.spent.is_some(),
            milestone_index_spent: row.spent.map(|s| s.index),
            milestone_timestamp_spent: row.spent.map(|s| s.timestamp),
            transaction_id_spent: row.spent.map(|s| to_hex(&s.transaction_id)),
            milestone_index_booked: row.booked_index,
            milestone_timestamp_booked: row.booked_timestamp,
            ledger_index: read.ledger_index,
        }
    }
}

fn split_output_id(id: &[u8; 34]) -> (&[u8], u16) {
    let (tx, index) = id.split_at(32);
    let index = match index {
        [lo, hi] => u16::from_le_bytes([*lo, *hi]),
        _ => 0,
    };
    (tx, index)
}

/// Body of `GET /api/core/v2/outputs/{outputId}`.
#[derive(Debug, Clone, Serialize)]
pub struct OutputResponse<'a> {
    /// Ledger metadata.
    pub metadata: OutputMetadata,
    /// The output, borrowed from the bytes read (not copied to be serialised).
    pub output: Output<'a>,
}

/// Parses an output id path parameter: 34 bytes. Any index is read: only new transaction
/// outputs are limited to 127, and a ledger started from a snapshot may hold others (Hornet's
/// own snapshot test reads index 2313).
///
/// # Errors
/// 400 naming `outputId`.
pub fn parse_output_id(value: &str) -> Result<[u8; 34], ApiError> {
    parse_hex_id::<34>("outputId", value)
}

fn read(engine: &Engine, id: &[u8; 34]) -> Result<OutputRead, ApiError> {
    engine
        .output(id)
        .ok_or_else(|| ApiError::not_found(format!("output not found: {}", to_hex(id))))
}

/// `GET /api/core/v2/outputs/{outputId}`: `{metadata, output}` as JSON, or only the output
/// bytes when `Accept` asks for v2 binary.
pub async fn get(
    State(state): State<AppState>,
    Path(output_id): Path<String>,
    accept: Accept,
) -> Result<Response, ApiError> {
    let id = parse_output_id(&output_id)?;
    let read = read(state.engine()?, &id)?;
    if let Some(media) = v2_binary(accept.0) {
        return Ok(binary(media, read.bytes));
    }
    let output = Output::decode(&read.bytes).map_err(ApiError::internal)?;
    json_response(&OutputResponse {
        metadata: OutputMetadata::new(&read),
        output,
    })
}

/// `GET /api/core/v2/outputs/{outputId}/metadata`.
pub async fn metadata(
    State(state): State<AppState>,
    Path(output_id): Path<String>,
) -> Result<Response, ApiError> {
    let id = parse_output_id(&output_id)?;
    json_response(&OutputMetadata::new(&read(state.engine()?, &id)?))
}
