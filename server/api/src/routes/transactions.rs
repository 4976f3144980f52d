//! `GET /api/core/v2/transactions/{transactionId}/included-block` and `…/metadata`: the block
//! whose transaction was applied to the ledger (found through output 0 of the transaction);
//! unknown, unconfirmed and conflicting transactions are 404.

use axum::{
    extract::{Path, State},
    response::Response,
};

use ledger_engine::Engine;

use crate::{
    error::ApiError,
    media::Accept,
    routes::{
        blocks::{block_bytes, block_response, metadata_of},
        ids::{json_response, parse_hex_id, to_hex},
    },
    state::AppState,
};

fn included(engine: &Engine, transaction_id: &str) -> Result<[u8; 32], ApiError> {
    let tx = parse_hex_id::<32>("transactionId", transaction_id)?;
    engine.included_block(&tx).ok_or_else(|| {
        ApiError::not_found(format!("output for transaction not found: {}", to_hex(&tx)))
    })
}

/// `GET /api/core/v2/transactions/{transactionId}/included-block`: the block as JSON, or its
/// bytes when `Accept` asks for v2 binary.
pub async fn included_block(
    State(state): State<AppState>,
    Path(transaction_id): Path<String>,
    accept: Accept,
) -> Result<Response, ApiError> {
    let engine = state.engine()?;
    let id = included(engine, &transaction_id)?;
    block_response(block_bytes(engine, &id)?, accept)
}

/// `GET /api/core/v2/transactions/{transactionId}/included-block/metadata`.
pub async fn included_block_metadata(
    State(state): State<AppState>,
    Path(transaction_id): Path<String>,
) -> Result<Response, ApiError> {
    let engine = state.engine()?;
    let id = included(engine, &transaction_id)?;
    json_response(&metadata_of(engine, &id)?)
}
