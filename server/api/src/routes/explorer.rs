//! `GET /api/explorer/v2/ledger/richest-addresses?ledgerIndex&top` (`docs/decisions.md`): the
//! addresses holding the most base tokens at a ledger index, from the engine's incrementally
//! kept rich list.

use axum::{
    extract::{Query, State},
    response::Response,
};
use serde::Serialize;

use ledger_codec::{stardust::Address, Codec};
use ledger_engine::RichListError;

use crate::{error::ApiError, routes::ids::json_response, state::AppState};

/// `top` when the query has none.
pub const DEFAULT_TOP: usize = 100;
/// Larger `top` values are clamped to this.
pub const MAX_TOP: usize = 1000;

/// One entry of the rich list.
#[derive(Debug, Clone, Serialize)]
pub struct RichAddress {
    /// The owning address, as a one-element array of address objects.
    pub address: Vec<Address<'static>>,
    /// Its balance, a decimal string.
    pub balance: String,
}

/// Body of the rich-list answer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RichestAddressesResponse {
    /// Richest first; ties by address bytes ascending.
    pub top: Vec<RichAddress>,
    /// The ledger index the list is valid for.
    pub ledger_index: u32,
}

/// The query: `top` and `ledgerIndex` (or `ledger_index`); other parameters are ignored.
fn parse_query(pairs: &[(String, String)]) -> Result<(usize, Option<u32>), ApiError> {
    let mut top = DEFAULT_TOP;
    let mut index: Option<u32> = None;
    for (key, value) in pairs {
        match key.as_str() {
            "top" => {
                if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(ApiError::bad_request(format!(
                        "invalid top {value:?}: expected a number from 1 to {MAX_TOP}"
                    )));
                }
                // All digits: a number too large for u64 is clamped like any other.
                let n: u64 = value.parse().unwrap_or(u64::MAX);
                if n == 0 {
                    return Err(ApiError::bad_request(format!(
                        "invalid top 0: expected a number from 1 to {MAX_TOP}"
                    )));
                }
                top = usize::try_from(n).map_or(MAX_TOP, |n| n.min(MAX_TOP));
            }
            "ledgerIndex" | "ledger_index" => {
                let i: u32 = value.parse().map_err(|_| {
                    ApiError::bad_request(format!(
                        "invalid {key} {value:?}: expected a milestone index (a decimal number)"
                    ))
                })?;
                if index.is_some_and(|prev| prev != i) {
                    return Err(ApiError::bad_request(
                        "ledgerIndex and ledger_index are both given and differ",
                    ));
                }
                index = Some(i);
            }
            _ => {}
        }
    }
    Ok((top, index))
}

/// `GET /api/explorer/v2/ledger/richest-addresses`.
pub async fn richest_addresses(
    State(state): State<AppState>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let (top, index) = parse_query(&pairs)?;
    let engine = state.engine()?;
    let (ledger_index, list) = engine.richest(top, index).map_err(|e| match e {
        RichListError::OutOfRange { .. } => ApiError::not_found(e.to_string()),
        other => ApiError::internal(other),
    })?;
    let top = list
        .iter()
        .map(|(key, balance)| {
            let address = Address::decode(key)
                .map_err(ApiError::internal)?
                .into_owned();
            Ok(RichAddress {
                address: vec![address],
                balance: balance.to_string(),
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    json_response(&RichestAddressesResponse { top, ledger_index })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> Result<(usize, Option<u32>), ApiError> {
        let owned: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        parse_query(&owned)
    }

    #[test]
    fn query_defaults_clamps_and_rejects() {
        assert_eq!(q(&[]).ok(), Some((100, None)));
        assert_eq!(q(&[("top", "5")]).ok(), Some((5, None)));
        assert_eq!(q(&[("top", "1001")]).ok(), Some((1000, None)));
        for huge in [
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999",
        ] {
            assert_eq!(q(&[("top", huge)]).ok(), Some((1000, None)), "{huge}");
        }
        assert_eq!(q(&[("top", "0000")]).ok().map(|r| r.0), None);
        assert_eq!(q(&[("ledgerIndex", "3")]).ok(), Some((100, Some(3))));
        assert_eq!(q(&[("ledger_index", "3")]).ok(), Some((100, Some(3))));
        assert_eq!(
            q(&[("ledger_index", "3"), ("ledgerIndex", "3")]).ok(),
            Some((100, Some(3)))
        );
        assert_eq!(q(&[("other", "x")]).ok(), Some((100, None)));
        for bad in [
            vec![("top", "0")],
            vec![("top", "")],
            vec![("top", "-1")],
            vec![("top", "ten")],
            vec![("top", "1.5")],
            vec![("ledgerIndex", "x")],
            vec![("ledger_index", "-1")],
            vec![("ledgerIndex", "4294967296")],
            vec![("ledgerIndex", "1"), ("ledger_index", "2")],
        ] {
            assert!(q(&bad).is_err(), "{bad:?}");
        }
    }
}
