//! `ApiError`: every error the API answers with, as `{"error":{"code":<status>,"message":"..."}}`.

use std::{borrow::Cow, ops::ControlFlow};

use axum::{
    body::Body,
    extract::rejection::{BytesRejection, JsonRejection, PathRejection, QueryRejection},
    http::{header, HeaderValue, Request, StatusCode},
    response::{IntoResponse, Response},
};
use ledger_engine::SubmitError;
use serde::Serialize;

use crate::{
    around::{Hook, Rewrite},
    submit::{PowPoolError, SubmitFailure},
};

/// The message of every 403: clients and operators look for its first words (Hornet's), the
/// rest says how to get in.
pub const NOT_PUBLIC: &str = "not available for public use: this route needs \
     `Authorization: Bearer <token>` (`ledger-node tools jwt --data-dir DIR` prints one)";

impl From<SubmitFailure> for ApiError {
    /// A refused or failed submit: an invalid block is a 400, a node that cannot take it now
    /// a 503 (a full queue with `Retry-After`), anything else a 500.
    fn from(failure: SubmitFailure) -> Self {
        match failure {
            SubmitFailure::Refused(e @ SubmitError::Invalid(_)) => Self::bad_request(e.to_string()),
            SubmitFailure::Refused(e @ SubmitError::Unavailable(_)) => {
                Self::unavailable(e.to_string())
            }
            SubmitFailure::PowPool(e @ PowPoolError::Busy) => Self::Busy(e.to_string().into()),
            e @ (SubmitFailure::PowDisabled
            | SubmitFailure::PowTimeout(_)
            | SubmitFailure::PowCancelled) => Self::unavailable(e.to_string()),
            other => Self::internal(other),
        }
    }
}

/// An error answer of the API. The HTTP status follows from the variant; the message is
/// meant for people and says what is wrong in plain words.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// 400: the request is malformed or invalid (bad hex, bad JSON, invalid block, ...).
    #[error("{0}")]
    BadRequest(Cow<'static, str>),
    /// 403: the route is not public and the request carries no valid token.
    #[error("{NOT_PUBLIC}")]
    Forbidden,
    /// 404: unknown route, id or ledger index.
    #[error("{0}")]
    NotFound(Cow<'static, str>),
    /// 405: the route exists but not for this method.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// 413: the body is larger than the limit.
    #[error("request body is too large{}", limit_text(*.limit))]
    PayloadTooLarge {
        /// The limit in bytes, when known.
        limit: Option<usize>,
    },
    /// 415: the `Content-Type` of the request is not one the route accepts.
    #[error("unsupported Content-Type {0:?}: use application/json, application/vnd.ledger.serializer-v1 (v2 binary) or application/vnd.ledger.serializer-v2 (v3 binary)")]
    UnsupportedMediaType(String),
    /// 503: the node cannot serve the request now (not synced, no tips, no PoW, not ready).
    #[error("{0}")]
    ServiceUnavailable(Cow<'static, str>),
    /// 503 with `Retry-After`: the node is saturated; the client may try again shortly.
    #[error("{0}")]
    Busy(Cow<'static, str>),
    /// 408: the request body did not arrive in time.
    #[error("request body not received within {0:?}")]
    BodyTimeout(std::time::Duration),
    /// 500: a real internal fault. The client only sees `internal server error`; the
    /// detail is logged.
    #[error("internal server error: {0}")]
    Internal(Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    /// A 400 with this message.
    pub fn bad_request(message: impl Into<Cow<'static, str>>) -> Self {
        Self::BadRequest(message.into())
    }

    /// A 404 with this message.
    pub fn not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Self::NotFound(message.into())
    }

    /// A 503 with this message.
    pub fn unavailable(message: impl Into<Cow<'static, str>>) -> Self {
        Self::ServiceUnavailable(message.into())
    }

    /// A 500 wrapping an internal fault.
    pub fn internal(err: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Internal(err.into())
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Forbidden => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::ServiceUnavailable(_) | Self::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        match &self {
            // Internals stay in the log, never in the answer.
            Self::Internal(err) => {
                tracing::error!(error = %err, "internal error");
                error_response(status, "internal server error")
            }
            Self::Busy(message) => {
                let mut response = error_response(status, message);
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                response
            }
            other => error_response(status, &other.to_string()),
        }
    }
}

/// The JSON error envelope: `{"error":{"code":400,"message":"..."}}`.
#[derive(Debug, Serialize)]
struct Envelope<'a> {
    error: ErrorBody<'a>,
}

#[derive(Debug, Serialize)]
struct ErrorBody<'a> {
    code: u16,
    message: &'a str,
}

/// Builds the error envelope response for any status and message.
pub fn error_response(status: StatusCode, message: &str) -> Response {
    let body = Envelope {
        error: ErrorBody {
            code: status.as_u16(),
            message,
        },
    };
    // Serialising two plain fields cannot fail; fall back to an empty object regardless.
    let json = serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec());
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        json,
    )
        .into_response()
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::MissingJsonContentType(_) => {
                Self::UnsupportedMediaType(String::from("(not application/json)"))
            }
            JsonRejection::BytesRejection(bytes) => bytes.into(),
            other => Self::bad_request(format!("invalid JSON body: {}", other.body_text())),
        }
    }
}

impl From<BytesRejection> for ApiError {
    fn from(rejection: BytesRejection) -> Self {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            // The rejection does not tell the limit.
            Self::PayloadTooLarge { limit: None }
        } else {
            Self::bad_request(format!(
                "could not read the request body: {}",
                rejection.body_text()
            ))
        }
    }
}

fn limit_text(limit: Option<usize>) -> String {
    limit.map_or_else(String::new, |l| format!(" (limit {l} bytes)"))
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        Self::bad_request(format!("invalid path parameter: {}", rejection.body_text()))
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        Self::bad_request(format!("invalid query: {}", rejection.body_text()))
    }
}

/// Largest error body the normaliser reads to reuse as the message.
const MAX_PLAIN_ERROR: usize = 4096;

/// Whether `response` is an error answer that is not JSON yet, which [`envelope`] rewrites.
fn needs_envelope(response: &Response) -> bool {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return false;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    !is_json
}

/// The JSON envelope for an error answer that is not JSON (see [`needs_envelope`]): its
/// status (422 becomes 400), its headers such as `Allow`, its text as the message.
async fn envelope(response: Response) -> Response {
    let status = response.status();
    let (mut parts, body) = response.into_parts();
    // Our contract has no 422: axum's "JSON does not fit the type" is bad input.
    if status == StatusCode::UNPROCESSABLE_ENTITY {
        parts.status = StatusCode::BAD_REQUEST;
    }
    let status = parts.status;
    let text = axum::body::to_bytes(body, MAX_PLAIN_ERROR)
        .await
        .ok()
        .and_then(|b| String::from_utf8(b.to_vec()).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty() && status != StatusCode::INTERNAL_SERVER_ERROR);
    let message = match (status, text) {
        (StatusCode::FORBIDDEN, _) => NOT_PUBLIC.to_owned(),
        (_, Some(text)) => text,
        (_, None) => status
            .canonical_reason()
            .unwrap_or("error")
            .to_ascii_lowercase(),
    };
    let fresh = error_response(status, &message);
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, fresh.into_body())
}

/// Turns every error response that is not already JSON (axum's own rejections, 405 from the
/// router, a caught panic, ...) into the JSON envelope, as a layer ([`Around`]). Headers such
/// as `Allow` are kept.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonErrors;

impl Hook for JsonErrors {
    type Note = ();

    fn before<B>(&self, _: &Request<B>) -> ControlFlow<Response> {
        ControlFlow::Continue(())
    }

    fn after((): (), answer: Response) -> Result<Response, Rewrite> {
        if needs_envelope(&answer) {
            Err(Box::pin(envelope(answer)))
        } else {
            Ok(answer)
        }
    }
}

/// Fallback for requests that match no route: 404 in the JSON envelope.
pub async fn unknown_route(request: Request<Body>) -> ApiError {
    ApiError::not_found(format!(
        "no route for {} {}",
        request.method(),
        request.uri().path()
    ))
}
