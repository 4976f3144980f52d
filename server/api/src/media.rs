//! Content negotiation: which encoding a request body has (`Content-Type`) and which one
//! the client wants back (`Accept`).
//!
//! Rules (`docs/decisions.md`): JSON is the default; `application/vnd.ledger.serializer-v1` is v2
//! binary and `...-v2` is v3 binary; the `vnd.iota.` names are aliases; headers are matched
//! by prefix (so parameters like `; charset=utf-8` are fine); an unknown `Content-Type` is a
//! 415; `Accept` never causes a 406 (anything unknown gets JSON); a binary response names
//! the media type that was asked for.

use axum::{
    body::Bytes,
    extract::{FromRef, FromRequest, FromRequestParts, Request},
    http::{header, request::Parts, HeaderMap, HeaderValue},
    response::{IntoResponse, Response},
};

use std::{sync::Arc, time::Duration};

use bytes::BytesMut;
use http_body_util::BodyExt;
use tokio::sync::Semaphore;

use crate::error::ApiError;

/// How a body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// JSON (the default).
    Json,
    /// v2 (Stardust) binary wire format.
    V2Binary,
    /// v3 (Nova) binary wire format.
    V3Binary,
}

/// A media type the API speaks: its encoding and the exact name to put in `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MediaType {
    encoding: Encoding,
    name: &'static str,
}

impl MediaType {
    /// `application/json`.
    pub const JSON: Self = Self::new(Encoding::Json, "application/json");
    /// `application/vnd.ledger.serializer-v1`: v2 binary.
    pub const LEDGER_V1: Self =
        Self::new(Encoding::V2Binary, "application/vnd.ledger.serializer-v1");
    /// `application/vnd.iota.serializer-v1`: v2 binary (alias).
    pub const IOTA_V1: Self = Self::new(Encoding::V2Binary, "application/vnd.iota.serializer-v1");
    /// `application/vnd.ledger.serializer-v2`: v3 binary.
    pub const LEDGER_V2: Self =
        Self::new(Encoding::V3Binary, "application/vnd.ledger.serializer-v2");
    /// `application/vnd.iota.serializer-v2`: v3 binary (alias).
    pub const IOTA_V2: Self = Self::new(Encoding::V3Binary, "application/vnd.iota.serializer-v2");

    /// Every media type understood, tested in this order by prefix.
    pub const ALL: [Self; 5] = [
        Self::LEDGER_V1,
        Self::IOTA_V1,
        Self::LEDGER_V2,
        Self::IOTA_V2,
        Self::JSON,
    ];

    const fn new(encoding: Encoding, name: &'static str) -> Self {
        Self { encoding, name }
    }

    /// The encoding.
    pub fn encoding(self) -> Encoding {
        self.encoding
    }

    /// The media type name, as it goes into `Content-Type`.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// Whether this is a binary encoding.
    pub fn is_binary(self) -> bool {
        self.encoding != Encoding::Json
    }

    /// The media type named by `value`: its type/subtype (before any `;` parameters, and
    /// before a `,` that starts a further `Accept` entry), compared exactly, case-insensitive,
    /// surrounding whitespace ignored. `application/jsonx` is not JSON.
    pub fn from_header(value: &str) -> Option<Self> {
        let first = value.split(',').next().unwrap_or_default();
        let essence = first.split(';').next().unwrap_or_default().trim();
        Self::ALL
            .into_iter()
            .find(|m| essence.eq_ignore_ascii_case(m.name))
    }
}

/// The media type of a request body from its `Content-Type`: none means JSON, a known
/// name gives that type, anything else is a 415.
pub fn request_media_type(headers: &HeaderMap) -> Result<MediaType, ApiError> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Ok(MediaType::JSON);
    };
    let text = value.to_str().map_err(|_| {
        ApiError::UnsupportedMediaType(String::from_utf8_lossy(value.as_bytes()).into_owned())
    })?;
    MediaType::from_header(text).ok_or_else(|| ApiError::UnsupportedMediaType(text.to_owned()))
}

/// The media type to answer with, from `Accept`: a known name gives that type, anything
/// else (missing, `*/*`, unknown) gives JSON. Never fails.
pub fn response_media_type(headers: &HeaderMap) -> MediaType {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .and_then(MediaType::from_header)
        .unwrap_or(MediaType::JSON)
}

/// Extractor: the media type the client asked for in `Accept` (see [`response_media_type`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accept(pub MediaType);

impl<S: Send + Sync> FromRequestParts<S> for Accept {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(response_media_type(&parts.headers)))
    }
}

/// Default limit for request bodies: 1 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 1 << 20;

/// Bytes per permit of the body budget (a semaphore counts at most `u32::MAX` permits).
const BODY_PERMIT_BYTES: usize = 1024;

/// Permits of the body budget for `bytes` bytes, rounded up.
fn body_permits(bytes: usize) -> usize {
    bytes
        .div_ceil(BODY_PERMIT_BYTES)
        .clamp(1, u32::MAX as usize)
}

/// The rules a request body is read under: the sub-state of [`RawBody`] and [`ApiJson`].
#[derive(Debug, Clone)]
pub struct BodyLimits {
    /// Largest accepted request body in bytes (413 above).
    pub limit: usize,
    /// Time a client has for a whole request body (408 after).
    pub timeout: Duration,
    /// Request-body bytes that may be buffered at once over all requests, in KiB permits.
    budget: Arc<Semaphore>,
    /// The budget in bytes, as configured.
    max_buffered: usize,
}

impl BodyLimits {
    /// Bodies of at most `limit` bytes, read within `timeout`, at most `max_buffered` bytes
    /// buffered at once over all requests.
    pub fn new(limit: usize, timeout: Duration, max_buffered: usize) -> Self {
        Self {
            limit,
            timeout,
            budget: Arc::new(Semaphore::new(body_permits(max_buffered))),
            max_buffered,
        }
    }

    /// The configured budget of buffered body bytes.
    pub fn max_buffered(&self) -> usize {
        self.max_buffered
    }
}

/// Extractor: a request body with its media type. Rejects a body over the configured limit
/// with 413 (checked on `Content-Length` first, then while reading) and an unsupported
/// `Content-Type` with 415, in that order.
#[derive(Debug, Clone)]
pub struct RawBody {
    /// The media type from `Content-Type`.
    pub media: MediaType,
    /// The body bytes, at most the configured limit.
    pub bytes: Bytes,
}

impl<S> FromRequest<S> for RawBody
where
    S: Send + Sync,
    BodyLimits: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let rules = BodyLimits::from_ref(state);
        let limit = rules.limit;
        let too_large = ApiError::PayloadTooLarge { limit: Some(limit) };
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        // Answered at once, the body unread: the answer says `Connection: close` and the
        // connection's close reads what the client still sends, so it sees the 413 instead of
        // a reset (`unread_body.rs`, `conn_stream.rs`).
        if declared.is_some_and(|len| len > limit as u64) {
            return Err(too_large);
        }
        let media = request_media_type(request.headers())?;
        // Room in the budget for the whole body (its declared length, else the limit), held
        // while it is read and parsed: beyond the budget a body is refused, not buffered.
        let reserve = declared.map_or(limit, |len| usize::try_from(len).unwrap_or(limit));
        let permits = u32::try_from(body_permits(reserve)).unwrap_or(u32::MAX);
        let _budget = Arc::clone(&rules.budget)
            .try_acquire_many_owned(permits)
            .map_err(|_| {
                ApiError::Busy("too many request bodies in flight: try again shortly".into())
            })?;
        let mut body = request.into_body();
        let read = async {
            let mut bytes = BytesMut::new();
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|err| {
                    ApiError::bad_request(format!("could not read the request body: {err}"))
                })?;
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                if bytes.len().saturating_add(data.len()) > limit {
                    // A chunked body over the limit: answered as a declared one above.
                    return Err(too_large);
                }
                bytes.extend_from_slice(&data);
            }
            Ok(bytes)
        };
        let bytes = tokio::time::timeout(rules.timeout, read)
            .await
            .map_err(|_| ApiError::BodyTimeout(rules.timeout))??;
        Ok(Self {
            media,
            bytes: bytes.freeze(),
        })
    }
}

/// Extractor: a JSON request body parsed into `T`. Like [`RawBody`] (413, then 415 for any
/// `Content-Type` that is not JSON), then 400 with serde's reason if the JSON does not parse
/// or does not fit `T`.
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
    BodyLimits: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let body = RawBody::from_request(request, state).await?;
        if body.media.encoding() != Encoding::Json {
            return Err(ApiError::UnsupportedMediaType(body.media.name().to_owned()));
        }
        serde_json::from_slice(&body.bytes)
            .map(Self)
            .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
    }
}

/// A binary response in the media type the client asked for.
pub fn binary(media: MediaType, bytes: impl Into<Bytes>) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(media.name()))],
        bytes.into(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: header::HeaderName, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_str(value).expect("test header"));
        h
    }

    #[test]
    fn content_type_maps_to_media_type_by_exact_name() {
        let cases = [
            ("application/json", MediaType::JSON),
            ("application/json; charset=utf-8", MediaType::JSON),
            ("Application/JSON", MediaType::JSON),
            ("application/vnd.ledger.serializer-v1", MediaType::LEDGER_V1),
            ("application/vnd.iota.serializer-v1", MediaType::IOTA_V1),
            ("application/vnd.ledger.serializer-v2", MediaType::LEDGER_V2),
            (
                "application/vnd.iota.serializer-v2; q=1",
                MediaType::IOTA_V2,
            ),
        ];
        for (value, want) in cases {
            let got = request_media_type(&headers(header::CONTENT_TYPE, value));
            assert_eq!(got.ok(), Some(want), "Content-Type {value}");
        }
    }

    #[test]
    fn missing_content_type_is_json() {
        assert_eq!(
            request_media_type(&HeaderMap::new()).ok(),
            Some(MediaType::JSON)
        );
    }

    #[test]
    fn unknown_content_type_is_415() {
        for value in [
            "text/plain",
            "application/octet-stream",
            "",
            "json",
            "application/vnd.ledger",
            "application/jsonx",
            "application/json-patch+json",
            "application/vnd.iota.serializer-v1x",
        ] {
            let got = request_media_type(&headers(header::CONTENT_TYPE, value));
            assert!(
                matches!(got, Err(ApiError::UnsupportedMediaType(_))),
                "Content-Type {value:?} gave {got:?}"
            );
        }
    }

    #[test]
    fn accept_falls_back_to_json_and_keeps_the_asked_name() {
        let cases = [
            ("*/*", MediaType::JSON),
            ("text/html", MediaType::JSON),
            (
                "application/json, application/vnd.iota.serializer-v1",
                MediaType::JSON,
            ),
            ("application/vnd.iota.serializer-v1", MediaType::IOTA_V1),
            ("application/vnd.ledger.serializer-v1", MediaType::LEDGER_V1),
            ("application/vnd.ledger.serializer-v2", MediaType::LEDGER_V2),
        ];
        for (value, want) in cases {
            assert_eq!(
                response_media_type(&headers(header::ACCEPT, value)),
                want,
                "Accept {value}"
            );
        }
        assert_eq!(response_media_type(&HeaderMap::new()), MediaType::JSON);
    }
}
