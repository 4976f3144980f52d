//! Access control: public and protected route lists, Bearer JWT for protected routes.
//!
//! Per `docs/decisions.md`: a path on the public list needs nothing; a path on the protected list
//! needs `Authorization: Bearer <jwt>` (see [`crate::jwt`]); a protected path without a valid
//! token, or a path on neither list, gets 403 `not available for public use`. Patterns match
//! the whole path (never the query string); `*` matches any run of characters, including `/`.
//! The public list is checked first.

use std::{ops::ControlFlow, sync::Arc};

use axum::{
    http::{header, HeaderMap, Request},
    response::{IntoResponse, Response},
};

use crate::{
    around::{Hook, Rewrite},
    error::ApiError,
    jwt::JwtAuth,
};

/// Routes open to everyone by default: everything in our API except peers and admin routes.
pub const DEFAULT_PUBLIC_ROUTES: &[&str] = &[
    "/health",
    "/api/routes",
    "/api/openapi.json",
    "/api/core/v2/info",
    "/api/core/v2/tips",
    "/api/core/v2/blocks*",
    "/api/core/v2/transactions*",
    "/api/core/v2/milestones*",
    "/api/core/v2/outputs*",
    "/api/core/v2/treasury",
    "/api/core/v2/receipts*",
    "/api/core/v3/info",
    "/api/core/v3/blocks*",
    "/api/core/v3/transactions*",
    "/api/core/v3/outputs*",
    "/api/core/v3/commitments*",
    "/api/explorer/v2/*",
    "/api/indexer/v1/*",
    "/",
    "/dashboard",
    "/dashboard/*",
    "/api/dashboard/v1/*",
    "/api/mqtt/v1",
];

/// Routes that need a token by default: the rest of the API (peers, `/api/core/v2/control/*`).
pub const DEFAULT_PROTECTED_ROUTES: &[&str] = &["/api/*"];

/// A route pattern: a path where `*` matches any run of characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutePattern {
    text: String,
    shape: Shape,
}

/// How a [`RoutePattern`] is matched: the common shapes without the general glob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// No `*`: the path equals the pattern.
    Exact,
    /// Only one `*`, at the end: the path starts with the pattern's first `len` bytes.
    Prefix(usize),
    /// Anything else: [`glob_match`].
    Glob,
}

impl RoutePattern {
    /// The pattern as written.
    pub fn new(pattern: impl Into<String>) -> Self {
        let text = pattern.into();
        let stars = text.bytes().filter(|&b| b == b'*').count();
        let shape = match stars {
            0 => Shape::Exact,
            1 if text.ends_with('*') => Shape::Prefix(text.len() - 1),
            _ => Shape::Glob,
        };
        Self { text, shape }
    }

    /// The pattern text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the whole of `path` matches: what [`glob_match`] says, found without it for
    /// the shapes of the default lists (checked on every request).
    pub fn matches(&self, path: &str) -> bool {
        let (pattern, path) = (self.text.as_bytes(), path.as_bytes());
        match self.shape {
            Shape::Exact => pattern == path,
            Shape::Prefix(len) => pattern
                .get(..len)
                .is_some_and(|prefix| path.starts_with(prefix)),
            Shape::Glob => glob_match(pattern, path),
        }
    }
}

/// Whole-string match where `*` in `pattern` stands for any (possibly empty) run of bytes.
/// Greedy with backtracking to the last star: linear in practice, no recursion.
fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    // Position of the last `*` seen and the text position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if text.get(t) == Some(&c) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    // Let the star swallow one more byte and retry.
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern
        .get(p..)
        .is_some_and(|rest| rest.iter().all(|&c| c == b'*'))
}

/// What a path needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// On the public list.
    Public,
    /// On the protected list only: needs a valid token.
    Protected,
    /// On neither list: always 403.
    Denied,
}

/// The route lists and the token keys.
#[derive(Debug, Clone)]
pub struct AccessControl {
    public: Vec<RoutePattern>,
    protected: Vec<RoutePattern>,
    jwt: JwtAuth,
}

impl AccessControl {
    /// Access control from route lists and token keys.
    pub fn new(
        public: impl IntoIterator<Item = impl Into<String>>,
        protected: impl IntoIterator<Item = impl Into<String>>,
        jwt: JwtAuth,
    ) -> Self {
        Self {
            public: public.into_iter().map(RoutePattern::new).collect(),
            protected: protected.into_iter().map(RoutePattern::new).collect(),
            jwt,
        }
    }

    /// Access control with the default route lists.
    pub fn with_defaults(jwt: JwtAuth) -> Self {
        Self::new(
            DEFAULT_PUBLIC_ROUTES.iter().copied(),
            DEFAULT_PROTECTED_ROUTES.iter().copied(),
            jwt,
        )
    }

    /// What `path` (without query string) needs.
    pub fn classify(&self, path: &str) -> Access {
        if self.public.iter().any(|p| p.matches(path)) {
            Access::Public
        } else if self.protected.iter().any(|p| p.matches(path)) {
            Access::Protected
        } else {
            Access::Denied
        }
    }

    /// Checks a request to `path` with these headers: `Ok` to proceed, or 403.
    pub fn check(&self, path: &str, headers: &HeaderMap) -> Result<(), ApiError> {
        match self.classify(path) {
            Access::Public => Ok(()),
            Access::Protected if bearer(headers).is_some_and(|t| self.jwt.verify(t)) => Ok(()),
            Access::Protected | Access::Denied => Err(ApiError::Forbidden),
        }
    }
}

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// The path patterns of the API's routes (axum syntax: a `{param}` is one non-empty segment),
/// to tell a refused request to a route from a request to no route at all.
#[derive(Debug, Clone)]
pub struct RoutePaths(Arc<[&'static str]>);

impl RoutePaths {
    /// The patterns `paths`.
    pub fn new(paths: impl IntoIterator<Item = &'static str>) -> Self {
        Self(paths.into_iter().collect())
    }

    /// True when `path` names one of the routes.
    pub fn routes(&self, path: &str) -> bool {
        self.0.iter().any(|pattern| path_matches(pattern, path))
    }
}

/// Whether `path` matches the axum pattern `pattern`, segment by segment.
fn path_matches(pattern: &str, path: &str) -> bool {
    let mut want = pattern.split('/');
    let mut got = path.split('/');
    loop {
        match (want.next(), got.next()) {
            (None, None) => return true,
            (Some(w), Some(g)) if w.starts_with('{') && w.ends_with('}') => {
                if g.is_empty() {
                    return false;
                }
            }
            (Some(w), Some(g)) if w == g => {}
            _ => return false,
        }
    }
}

/// Enforces [`AccessControl`] on requests to the API's routes, as a layer
/// ([`crate::around::Around`]). A refused request to a path that names no route goes on to
/// the router, whose answer is 404: access control does not reveal which unknown paths would
/// be protected.
#[derive(Debug, Clone)]
pub struct Enforce {
    access: Arc<AccessControl>,
    paths: RoutePaths,
}

impl Enforce {
    /// Enforces `access` on requests to `paths`.
    pub fn new(access: Arc<AccessControl>, paths: RoutePaths) -> Self {
        Self { access, paths }
    }
}

impl Hook for Enforce {
    type Note = ();

    fn before<B>(&self, request: &Request<B>) -> ControlFlow<Response> {
        match self.access.check(request.uri().path(), request.headers()) {
            Err(refusal) if self.paths.routes(request.uri().path()) => {
                ControlFlow::Break(refusal.into_response())
            }
            Ok(()) | Err(_) => ControlFlow::Continue(()),
        }
    }

    fn after((): (), answer: Response) -> Result<Response, Rewrite> {
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn route_paths_match_like_the_router() {
        let paths = RoutePaths::new([
            "/health",
            "/api/core/v2/peers",
            "/api/core/v2/peers/{peer_id}",
            "/api/core/v2/milestones/by-index/{index}/utxo-changes",
        ]);
        let cases: &[(&str, bool)] = &[
            ("/health", true),
            ("/health/", false),
            ("/healthz", false),
            ("/api/core/v2/peers", true),
            ("/api/core/v2/peers/12D3Koo", true),
            ("/api/core/v2/peers/", false),
            ("/api/core/v2/peers/x/y", false),
            ("/api/core/v2/milestones/by-index/7/utxo-changes", true),
            ("/api/core/v2/milestones/by-index//utxo-changes", false),
            ("/api/core/v2/milestones/by-index/7", false),
            ("/", false),
            ("", false),
        ];
        for (path, want) in cases {
            assert_eq!(paths.routes(path), *want, "{path}");
        }
    }

    #[test]
    fn glob_matches_whole_path() {
        let cases: &[(&str, &str, bool)] = &[
            ("/health", "/health", true),
            ("/health", "/healthz", false),
            ("/health", "/x/health", false),
            ("/api/*", "/api/core/v2/peers", true),
            ("/api/*", "/api/", true),
            ("/api/*", "/api", false),
            ("/api/core/v2/blocks*", "/api/core/v2/blocks", true),
            (
                "/api/core/v2/blocks*",
                "/api/core/v2/blocks/0xab/metadata",
                true,
            ),
            ("/api/core/v2/blocks*", "/api/core/v2/peers", false),
            ("/a/*/c", "/a/b/b/c", true),
            ("/a/*/c", "/a/b/c/d", false),
            ("*", "", true),
            ("", "", true),
            ("", "/", false),
            ("/a*b*c", "/aXbYbZc", true),
            ("/a*b*c", "/aXbYbZ", false),
        ];
        for &(pattern, path, want) in cases {
            assert_eq!(
                RoutePattern::new(pattern).matches(path),
                want,
                "{pattern} vs {path}"
            );
            assert_eq!(
                glob_match(pattern.as_bytes(), path.as_bytes()),
                want,
                "glob {pattern} vs {path}"
            );
        }
    }

    #[test]
    fn shapes_match_as_the_glob_does() {
        let patterns = [
            "", "*", "**", "/a", "/a*", "/a**", "*/a", "/a*b", "/a/*", "/api/*", "/a*b*c",
        ];
        let paths = [
            "", "/", "/a", "/a/", "/ab", "/a/b", "/b/a", "/aXbYbZc", "/api", "/api/", "/api/x",
        ];
        for pattern in patterns {
            for path in paths {
                assert_eq!(
                    RoutePattern::new(pattern).matches(path),
                    glob_match(pattern.as_bytes(), path.as_bytes()),
                    "{pattern:?} vs {path:?}"
                );
            }
        }
    }

    fn control() -> AccessControl {
        AccessControl::with_defaults(JwtAuth::from_secret(&[7; 32]))
    }

    #[test]
    fn defaults_protect_peers_and_admin_only() {
        let ac = control();
        for path in [
            "/health",
            "/api/routes",
            "/api/openapi.json",
            "/api/core/v2/info",
            "/api/core/v2/tips",
            "/api/core/v2/blocks",
            "/api/core/v2/outputs/0x00",
            "/api/core/v2/transactions/0x00/included-block",
            "/api/core/v2/milestones/by-index/1",
            "/api/explorer/v2/ledger/richest-addresses",
        ] {
            assert_eq!(ac.classify(path), Access::Public, "{path}");
        }
        for path in [
            "/api/core/v2/peers",
            "/api/core/v2/control/milestone",
            "/api/core/v2/peers/x",
        ] {
            assert_eq!(ac.classify(path), Access::Protected, "{path}");
        }
        assert_eq!(ac.classify("/metrics"), Access::Denied);
    }

    #[test]
    fn protected_needs_valid_bearer_token() {
        let ac = control();
        let token = JwtAuth::from_secret(&[7; 32]).issue().expect("sign");
        let other = JwtAuth::from_secret(&[8; 32]).issue().expect("sign");
        let with = |value: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                header::AUTHORIZATION,
                HeaderValue::from_str(value).expect("header"),
            );
            h
        };
        let path = "/api/core/v2/peers";
        assert!(ac.check(path, &HeaderMap::new()).is_err());
        assert!(ac.check(path, &with(&format!("Bearer {other}"))).is_err());
        assert!(ac.check(path, &with(&token)).is_err(), "scheme is required");
        assert!(ac.check(path, &with("Bearer ")).is_err());
        assert!(ac.check(path, &with(&format!("Bearer {token}"))).is_ok());
        assert!(ac.check(path, &with(&format!("bearer {token}"))).is_ok());
        // Neither list: even a valid token does not help.
        assert!(ac
            .check("/metrics", &with(&format!("Bearer {token}")))
            .is_err());
    }
}
