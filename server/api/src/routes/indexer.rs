//! The TIP-26 indexer API under `/api/indexer/v1/`: output ids by filter, paged, and the
//! current output of an alias, foundry or NFT, answered from the engine's incremental indexes.

use std::sync::Arc;

use axum::{
    extract::{Path, Query, State},
    response::Response,
};
use serde::Serialize;

use ledger_engine::{ChainId, Engine, OutputKind, Query as IndexQuery};

use crate::{
    error::ApiError,
    routes::{
        ids::{json_response, parse_hex_id, to_hex},
        indexer_params::{format_cursor, parse, Params},
    },
    state::AppState,
};

/// Body of every indexer answer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputsResponse {
    /// The ledger index the answer is valid for.
    pub ledger_index: u32,
    /// The page size used.
    pub page_size: usize,
    /// Where the next page starts, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Output ids, by booking time then output id.
    pub items: Vec<String>,
}

fn indexer_off() -> ApiError {
    ApiError::unavailable("the indexer is turned off on this node (--no-indexer)")
}

/// Runs `read` on the engine: inline when the indexer is caught up (the usual case), on the
/// blocking pool when the query has to wait for it (right after a large milestone).
async fn read_indexer<T: Send + 'static>(
    state: &AppState,
    read: impl FnOnce(&Engine) -> T + Send + 'static,
) -> Result<T, ApiError> {
    let engine = Arc::clone(state.engine()?);
    if engine.indexer_caught_up() {
        return Ok(read(&engine));
    }
    tokio::task::spawn_blocking(move || read(&engine))
        .await
        .map_err(ApiError::internal)
}

async fn outputs(
    state: &AppState,
    params: Params,
    kinds: &'static [OutputKind],
    pairs: &[(String, String)],
) -> Result<Response, ApiError> {
    let q = parse(params, pairs, &state.engine()?.params().bech32_hrp)?;
    let page_size = q.page_size;
    let query = IndexQuery {
        kinds: kinds.to_vec(),
        filter: q.filter,
        page_size,
        cursor: q.cursor,
    };
    let page = read_indexer(state, move |engine| engine.indexed_outputs(&query))
        .await?
        .ok_or_else(indexer_off)?;
    json_response(&OutputsResponse {
        ledger_index: page.ledger_index,
        page_size,
        cursor: page.next.map(|c| format_cursor(&c, page_size)),
        items: page.items.iter().map(|id| to_hex(id)).collect(),
    })
}

/// Declares the handlers of the output lists: each is `outputs` with its parameters and kinds.
macro_rules! output_lists {
    ($($(#[$doc:meta])* $name:ident => $params:ident, $kinds:expr;)*) => {$(
        $(#[$doc])*
        pub async fn $name(
            State(state): State<AppState>,
            Query(pairs): Query<Vec<(String, String)>>,
        ) -> Result<Response, ApiError> {
            outputs(&state, Params::$params, $kinds, &pairs).await
        }
    )*};
}

output_lists! {
    /// `GET /api/indexer/v1/outputs`: basic, alias, foundry and NFT outputs together.
    combined => Combined, &OutputKind::ALL;
    /// `GET /api/indexer/v1/outputs/basic`.
    basic => Basic, &[OutputKind::Basic];
    /// `GET /api/indexer/v1/outputs/alias`.
    aliases => Alias, &[OutputKind::Alias];
    /// `GET /api/indexer/v1/outputs/foundry`.
    foundries => Foundry, &[OutputKind::Foundry];
    /// `GET /api/indexer/v1/outputs/nft`.
    nfts => Nft, &[OutputKind::Nft];
}

async fn chain(state: &AppState, id: ChainId, shown: &str) -> Result<Response, ApiError> {
    let (ledger_index, output) = read_indexer(state, move |engine| engine.chain_output(&id))
        .await?
        .ok_or_else(indexer_off)?;
    let output = output.ok_or_else(|| ApiError::not_found(format!("record not found: {shown}")))?;
    json_response(&OutputsResponse {
        ledger_index,
        page_size: 1,
        cursor: None,
        items: vec![to_hex(&output)],
    })
}

/// Declares the handlers of the chain lookups: each parses its id and asks `chain`.
macro_rules! chain_lookups {
    ($($(#[$doc:meta])* $name:ident => $variant:ident($field:literal, $len:literal);)*) => {$(
        $(#[$doc])*
        pub async fn $name(
            State(state): State<AppState>,
            Path(id): Path<String>,
        ) -> Result<Response, ApiError> {
            let chain_id = ChainId::$variant(parse_hex_id::<$len>($field, &id)?);
            chain(&state, chain_id, &id).await
        }
    )*};
}

chain_lookups! {
    /// `GET /api/indexer/v1/outputs/alias/{aliasId}`.
    alias_by_id => Alias("aliasId", 32);
    /// `GET /api/indexer/v1/outputs/foundry/{foundryId}`.
    foundry_by_id => Foundry("foundryId", 38);
    /// `GET /api/indexer/v1/outputs/nft/{nftId}`.
    nft_by_id => Nft("nftId", 32);
}
