//! `GET /api/core/v2/milestones/by-index/{index}` and `…/by-id/{milestoneId}`: the milestone
//! payload as JSON, or its bytes (with the payload type) when `Accept` asks for v2 binary.

use axum::{
    extract::{Path, State},
    response::Response,
};

use ledger_codec::{
    stardust::{Block, Payload},
    Codec,
};
use ledger_engine::{Engine, MilestoneInfo};

use crate::{
    app::AppState,
    error::ApiError,
    media::{binary, Accept},
    routes::{
        blocks::block_bytes,
        ids::{json_response, parse_hex_id, parse_index, v2_binary},
    },
};

fn milestone_response(
    engine: &Engine,
    info: MilestoneInfo,
    accept: Accept,
) -> Result<Response, ApiError> {
    let bytes = block_bytes(engine, &info.block_id)?;
    let block = Block::decode(&bytes).map_err(ApiError::internal)?;
    let Some(payload @ Payload::Milestone(_)) = block.payload else {
        return Err(ApiError::internal(format!(
            "milestone {} is recorded on a block without a milestone payload",
            info.index
        )));
    };
    match v2_binary(accept.0) {
        Some(media) => Ok(binary(media, payload.to_bytes())),
        None => json_response(&payload),
    }
}

/// `GET /api/core/v2/milestones/by-index/{index}`.
pub async fn by_index(
    State(state): State<AppState>,
    Path(index): Path<String>,
    accept: Accept,
) -> Result<Response, ApiError> {
    let index = parse_index("milestone index", &index)?;
    let engine = state.engine()?;
    let info = engine
        .milestone_by_index(index)
        .ok_or_else(|| ApiError::not_found(format!("milestone not found: index {index}")))?;
    milestone_response(engine, info, accept)
}

/// `GET /api/core/v2/milestones/by-id/{milestoneId}`.
pub async fn by_id(
    State(state): State<AppState>,
    Path(milestone_id): Path<String>,
    accept: Accept,
) -> Result<Response, ApiError> {
    let id = parse_hex_id::<32>("milestoneId", &milestone_id)?;
    let engine = state.engine()?;
    let info = engine.milestone_by_id(&id).ok_or_else(|| {
        ApiError::not_found(format!("milestone not found: {milestone_id}"))
    })?;
    milestone_response(engine, info, accept)
}
