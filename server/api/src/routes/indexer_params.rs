//! Query parameters of the TIP-26 indexer endpoints, parsed as inx-indexer does, except that
//! a malformed `pageSize` is a 400 rather than silently the maximum.
//!
//! Each endpoint accepts its own set of parameters ([`Params`]); parameters it does not know
//! are ignored, like inx-indexer. Every bad value is a 400 naming the parameter.

use ledger_codec::stardust::Address;
use ledger_engine::{Cursor, Filter};

use crate::error::ApiError;

/// Largest and default page size (inx-indexer's `maxPageSize`).
pub const MAX_PAGE_SIZE: usize = 1000;
/// At most this many native tokens fit in one output.
const MAX_NATIVE_TOKENS: u32 = 64;
/// Longest tag feature in bytes.
const MAX_TAG_LEN: usize = 64;
/// Hex digits of a cursor before the `.pageSize`: booking time (8) and output id (68).
const CURSOR_HEX_LEN: usize = 76;

/// Which filter parameters an endpoint accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Params {
    /// `outputs`: native tokens, unlockableByAddress, created bounds.
    Combined,
    /// `outputs/basic`.
    Basic,
    /// `outputs/alias`.
    Alias,
    /// `outputs/foundry`.
    Foundry,
    /// `outputs/nft`.
    Nft,
}

impl Params {
    fn accepts(self, name: &str) -> bool {
        const COMMON: &[&str] = &[
            "hasNativeTokens",
            "minNativeTokenCount",
            "maxNativeTokenCount",
            "createdBefore",
            "createdAfter",
        ];
        const HOLDER: &[&str] = &[
            "address",
            "unlockableByAddress",
            "hasStorageDepositReturn",
            "storageDepositReturnAddress",
            "hasExpiration",
            "expiresBefore",
            "expiresAfter",
            "expirationReturnAddress",
            "hasTimelock",
            "timelockedBefore",
            "timelockedAfter",
            "sender",
            "tag",
        ];
        if COMMON.contains(&name) {
            return true;
        }
        match self {
            Self::Combined => name == "unlockableByAddress",
            Self::Basic => HOLDER.contains(&name),
            Self::Nft => HOLDER.contains(&name) || name == "issuer",
            Self::Alias => [
                "unlockableByAddress",
                "stateController",
                "governor",
                "issuer",
                "sender",
            ]
            .contains(&name),
            Self::Foundry => name == "aliasAddress",
        }
    }
}

/// A parsed query: filters, page size and where the page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedQuery {
    /// The filters.
    pub filter: Filter,
    /// Items per page.
    pub page_size: usize,
    /// Start of the page.
    pub cursor: Option<Cursor>,
}

fn bad(name: &str, value: &str, why: &str) -> ApiError {
    let shown: String = value.chars().take(100).collect();
    ApiError::bad_request(format!("invalid query parameter {name} {shown:?}: {why}"))
}

fn parse_bool(name: &str, v: &str) -> Result<bool, ApiError> {
    match v {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(bad(name, v, "expected true or false")),
    }
}

fn parse_count(name: &str, v: &str) -> Result<u32, ApiError> {
    v.parse::<u32>()
        .ok()
        .filter(|n| *n <= MAX_NATIVE_TOKENS)
        .ok_or_else(|| bad(name, v, "expected a number from 0 to 64"))
}

fn parse_time(name: &str, v: &str) -> Result<u32, ApiError> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(name, v, "expected a unix timestamp in seconds"));
    }
    // All digits: beyond u32 every bound means "no time is that late".
    Ok(v.parse::<u32>().unwrap_or(u32::MAX))
}

fn parse_address(name: &str, v: &str, hrp: &str) -> Result<[u8; 33], ApiError> {
    let (got, address) =
        Address::from_bech32(v).map_err(|e| bad(name, v, &format!("not a bech32 address: {e}")))?;
    if got != hrp {
        return Err(bad(
            name,
            v,
            &format!("address is for network prefix {got:?}, this node uses {hrp:?}"),
        ));
    }
    Ok(address.to_array())
}

fn parse_tag(name: &str, v: &str) -> Result<Vec<u8>, ApiError> {
    let digits = ledger_codec::hexstr::strip_0x(v)
        .ok_or_else(|| bad(name, v, "expected 0x-prefixed hex"))?;
    let tag = hex::decode(digits).map_err(|e| bad(name, v, &format!("not hex: {e}")))?;
    if tag.is_empty() || tag.len() > MAX_TAG_LEN {
        return Err(bad(name, v, "a tag has 1 to 64 bytes"));
    }
    Ok(tag)
}

fn parse_page_size(name: &str, v: &str) -> Result<usize, ApiError> {
    let n: u64 = if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        v.parse().unwrap_or(u64::MAX)
    } else {
        return Err(bad(name, v, "expected a number"));
    };
    // 0 and anything above the maximum give the maximum, as in inx-indexer.
    Ok(usize::try_from(n)
        .ok()
        .filter(|n| (1..=MAX_PAGE_SIZE).contains(n))
        .unwrap_or(MAX_PAGE_SIZE))
}

/// Parses `<8 hex: booking time><68 hex: output id>.<pageSize>`.
fn parse_cursor(v: &str) -> Result<(Cursor, usize), ApiError> {
    let wrong = || bad("cursor", v, "expected the cursor of an earlier answer");
    let (key, size) = v.split_once('.').ok_or_else(wrong)?;
    if key.len() != CURSOR_HEX_LEN {
        return Err(wrong());
    }
    if !key.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(wrong());
    }
    let (time, id) = key.split_at(8);
    let time = u32::from_str_radix(time, 16).map_err(|_| wrong())?;
    let mut output_id = [0u8; 34];
    hex::decode_to_slice(id, &mut output_id).map_err(|_| wrong())?;
    Ok(((time, output_id), parse_page_size("cursor", size)?))
}

/// The cursor string of `c` for pages of `page_size` items.
pub fn format_cursor(c: &Cursor, page_size: usize) -> String {
    format!("{:08x}{}.{page_size}", c.0, hex::encode(c.1))
}

/// Parses the query pairs of an endpoint accepting `params`, for a node with bech32 prefix
/// `hrp`. With a cursor, the cursor's page size wins over `pageSize`.
///
/// # Errors
/// [`ApiError::BadRequest`] naming the first bad parameter.
pub fn parse(
    params: Params,
    pairs: &[(String, String)],
    hrp: &str,
) -> Result<ParsedQuery, ApiError> {
    let mut f = Filter::default();
    let mut page_size = MAX_PAGE_SIZE;
    let mut cursor = None;
    for (name, v) in pairs {
        let n = name.as_str();
        match n {
            "pageSize" => page_size = parse_page_size(n, v)?,
            "cursor" => cursor = Some(parse_cursor(v)?),
            _ if !params.accepts(n) => {}
            "hasNativeTokens" => f.has_native_tokens = Some(parse_bool(n, v)?),
            "minNativeTokenCount" => f.min_native_token_count = Some(parse_count(n, v)?),
            "maxNativeTokenCount" => f.max_native_token_count = Some(parse_count(n, v)?),
            "unlockableByAddress" => f.unlockable_by_address = Some(parse_address(n, v, hrp)?),
            "address" => f.address = Some(parse_address(n, v, hrp)?),
            "hasStorageDepositReturn" => f.has_storage_deposit_return = Some(parse_bool(n, v)?),
            "storageDepositReturnAddress" => {
                f.storage_deposit_return_address = Some(parse_address(n, v, hrp)?);
            }
            "hasExpiration" => f.has_expiration = Some(parse_bool(n, v)?),
            "expiresBefore" => f.expires_before = Some(parse_time(n, v)?),
            "expiresAfter" => f.expires_after = Some(parse_time(n, v)?),
            "expirationReturnAddress" => {
                f.expiration_return_address = Some(parse_address(n, v, hrp)?);
            }
            "hasTimelock" => f.has_timelock = Some(parse_bool(n, v)?),
            "timelockedBefore" => f.timelocked_before = Some(parse_time(n, v)?),
            "timelockedAfter" => f.timelocked_after = Some(parse_time(n, v)?),
            "sender" => f.sender = Some(parse_address(n, v, hrp)?),
            "tag" => f.tag = Some(parse_tag(n, v)?),
            "issuer" => f.issuer = Some(parse_address(n, v, hrp)?),
            "stateController" => f.state_controller = Some(parse_address(n, v, hrp)?),
            "governor" => f.governor = Some(parse_address(n, v, hrp)?),
            "aliasAddress" => {
                let a = parse_address(n, v, hrp)?;
                if a[0] != Address::ALIAS {
                    return Err(bad(n, v, "not an alias address"));
                }
                f.alias_address = Some(a);
            }
            "createdBefore" => f.created_before = Some(parse_time(n, v)?),
            "createdAfter" => f.created_after = Some(parse_time(n, v)?),
            _ => {}
        }
    }
    let (cursor, page_size) = match cursor {
        Some((c, size)) => (Some(c), size),
        None => (None, page_size),
    };
    Ok(ParsedQuery {
        filter: f,
        page_size,
        cursor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledger_codec::Codec;

    const HRP: &str = "rms";

    fn q(params: Params, pairs: &[(&str, &str)]) -> Result<ParsedQuery, ApiError> {
        let owned: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        parse(params, &owned, HRP)
    }

    fn message(e: ApiError) -> String {
        e.to_string()
    }

    fn address(kind: u8) -> String {
        let mut a = [7u8; 33];
        a[0] = kind;
        Address::decode(&a).unwrap().to_bech32(HRP).unwrap()
    }

    #[test]
    fn defaults_and_page_size_rules() {
        let p = q(Params::Basic, &[]).unwrap();
        assert_eq!((p.page_size, p.cursor), (MAX_PAGE_SIZE, None));
        assert_eq!(p.filter, Filter::default());
        assert_eq!(q(Params::Basic, &[("pageSize", "5")]).unwrap().page_size, 5);
        assert_eq!(
            q(Params::Basic, &[("pageSize", "0")]).unwrap().page_size,
            1000
        );
        assert_eq!(
            q(Params::Basic, &[("pageSize", "99999999999999999999")])
                .unwrap()
                .page_size,
            1000
        );
        assert!(message(q(Params::Basic, &[("pageSize", "x")]).unwrap_err()).contains("pageSize"));
    }

    #[test]
    fn cursor_round_trips_and_sets_the_page_size() {
        let c = (0x0102_0304, [0xab; 34]);
        let s = format_cursor(&c, 7);
        assert_eq!(s.len(), 76 + 2);
        let p = q(Params::Combined, &[("pageSize", "3"), ("cursor", &s)]).unwrap();
        assert_eq!((p.cursor, p.page_size), (Some(c), 7));
        for bad in [
            "",
            "abc.5",
            &s.replace('.', ""),
            &format!("{}zz.5", &s[..74]),
        ] {
            let e = q(Params::Combined, &[("cursor", bad)]).unwrap_err();
            assert!(message(e).contains("cursor"), "{bad}");
        }
    }

    #[test]
    fn every_bad_value_names_its_parameter() {
        let ed = address(0);
        let cases: &[(Params, &str, &str)] = &[
            (Params::Basic, "hasNativeTokens", "yes"),
            (Params::Basic, "minNativeTokenCount", "65"),
            (Params::Basic, "maxNativeTokenCount", "-1"),
            (Params::Basic, "address", "rms1notbech32"),
            (Params::Basic, "address", &address(0).replace("rms", "atoi")),
            (Params::Basic, "expiresBefore", "soon"),
            (Params::Basic, "tag", "0x"),
            (Params::Basic, "tag", "abcd"),
            (Params::Nft, "issuer", "x"),
            (Params::Alias, "governor", "x"),
            (Params::Foundry, "aliasAddress", &ed),
            (Params::Combined, "createdAfter", "1.5"),
        ];
        for (params, name, value) in cases {
            let e = q(*params, &[(name, value)]).unwrap_err();
            assert!(message(e).contains(name), "{name}={value}");
        }
    }

    #[test]
    fn filters_are_read_per_endpoint() {
        let ed = address(0);
        let alias = address(8);
        let p = q(
            Params::Basic,
            &[
                ("address", &ed),
                ("tag", "0x6869"),
                ("hasExpiration", "false"),
            ],
        )
        .unwrap();
        assert_eq!(p.filter.address.map(|a| a[0]), Some(0));
        assert_eq!(p.filter.tag.as_deref(), Some(&b"hi"[..]));
        assert_eq!(p.filter.has_expiration, Some(false));
        // Parameters of other endpoints are ignored, as in inx-indexer.
        let p = q(
            Params::Alias,
            &[("tag", "not hex"), ("stateController", &ed)],
        )
        .unwrap();
        assert_eq!(p.filter.tag, None);
        assert!(p.filter.state_controller.is_some());
        let p = q(Params::Foundry, &[("aliasAddress", &alias)]).unwrap();
        assert_eq!(p.filter.alias_address.map(|a| a[0]), Some(8));
    }
}
