//! `GET /api/openapi.json`: the OpenAPI 3 document of every route, checked in beside the code
//! (`openapi.json`) and tested against the router's table ([`crate::router::endpoints`]).

use axum::{http::header, response::IntoResponse};

/// The document, as checked in.
pub const OPENAPI_JSON: &str = include_str!("../openapi.json");

/// `GET /api/openapi.json`.
pub async fn document() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI_JSON)
}

#[cfg(test)]
mod tests {
    use std::{collections::BTreeSet, sync::Arc};

    use axum::{
        body::Body,
        http::{Method, Request, StatusCode},
    };
    use serde_json::Value;

    use super::*;
    use crate::{
        access::AccessControl,
        jwt::JwtAuth,
        node::StubNode,
        router::{app, endpoints, tests::send},
        state::AppState,
    };

    const METHODS: [&str; 5] = ["get", "post", "put", "delete", "patch"];

    fn document() -> Value {
        serde_json::from_str(OPENAPI_JSON).expect("openapi.json is JSON")
    }

    /// `path` with every `{param}` as `{}`: the document may name parameters as the TIPs do.
    fn shape(path: &str) -> String {
        let mut out = String::new();
        let mut in_param = false;
        for c in path.chars() {
            match c {
                '{' => {
                    in_param = true;
                    out.push_str("{}");
                }
                '}' => in_param = false,
                _ if in_param => {}
                _ => out.push(c),
            }
        }
        out
    }

    /// `(METHOD, path)` of every operation in the document.
    fn documented() -> BTreeSet<(String, String)> {
        let doc = document();
        let paths = doc["paths"].as_object().expect("paths");
        paths
            .iter()
            .flat_map(|(path, item)| {
                METHODS
                    .iter()
                    .filter(|m| item.get(**m).is_some())
                    .map(move |m| (m.to_uppercase(), path.clone()))
            })
            .collect()
    }

    #[test]
    fn the_document_describes_exactly_the_routers_endpoints() {
        let routed: BTreeSet<(String, String)> = endpoints()
            .iter()
            .map(|e| (e.method.to_string(), shape(e.path)))
            .collect();
        let documented: BTreeSet<(String, String)> = documented()
            .into_iter()
            .map(|(m, p)| (m, shape(&p)))
            .collect();
        let undocumented: Vec<_> = routed.difference(&documented).collect();
        let unrouted: Vec<_> = documented.difference(&routed).collect();
        assert!(
            undocumented.is_empty(),
            "routes missing in openapi.json: {undocumented:?}"
        );
        assert!(
            unrouted.is_empty(),
            "openapi.json documents routes the router lacks: {unrouted:?}"
        );
    }

    #[test]
    fn every_operation_has_responses_and_every_reference_resolves() {
        let doc = document();
        assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")));
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for method in METHODS.iter().filter(|m| item.get(**m).is_some()) {
                let responses = &item[*method]["responses"];
                assert!(
                    responses.as_object().is_some_and(|r| !r.is_empty()),
                    "{method} {path} has no responses"
                );
                // Each path parameter is declared.
                let params = path.matches('{').count();
                let declared = item[*method]["parameters"].as_array().map_or(0, |list| {
                    list.iter()
                        .filter(|p| {
                            let p = resolve(&doc, p);
                            p["in"] == "path"
                        })
                        .count()
                });
                assert_eq!(params, declared, "{method} {path}: path parameters");
            }
        }
        let mut refs = Vec::new();
        collect_refs(&doc, &mut refs);
        assert!(refs.len() > 20, "{refs:?}");
        for reference in refs {
            let target = reference
                .strip_prefix("#/")
                .map(|p| p.split('/').fold(&doc, |v, key| &v[key]));
            assert!(
                target.is_some_and(|t| !t.is_null()),
                "{reference} does not resolve"
            );
        }
        let envelope = &doc["components"]["schemas"]["Error"]["properties"]["error"];
        assert_eq!(envelope["properties"]["code"]["type"], "integer");
        assert_eq!(envelope["properties"]["message"]["type"], "string");
    }

    /// `value`, or the component its `$ref` names.
    fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
        match value["$ref"].as_str().and_then(|r| r.strip_prefix("#/")) {
            Some(path) => path.split('/').fold(doc, |v, key| &v[key]),
            None => value,
        }
    }

    fn collect_refs(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    match (key.as_str(), v.as_str()) {
                        ("$ref", Some(r)) => out.push(r.to_owned()),
                        _ => collect_refs(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
            _ => {}
        }
    }

    async fn call(method: &str, path: &str) -> (StatusCode, Vec<u8>) {
        let state = AppState::new(
            Arc::new(StubNode { coordinator: true }),
            AccessControl::with_defaults(JwtAuth::from_secret(&[3; 32])),
        );
        let request = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).expect("method"))
            .uri(path)
            .body(Body::empty())
            .expect("request");
        let (status, _, body) = send(app(state), request).await;
        (status, body.to_vec())
    }

    #[tokio::test]
    async fn every_documented_operation_reaches_a_route() {
        for (method, path) in documented() {
            // Any value stands in for a parameter: a route, not a valid id, is what's looked for.
            let concrete = shape(&path).replace("{}", "1");
            let (status, body) = call(&method, &concrete).await;
            let text = String::from_utf8_lossy(&body);
            assert!(
                !text.contains("no route for"),
                "{method} {path}: fell through to the 404 fallback"
            );
            assert_ne!(
                status,
                StatusCode::METHOD_NOT_ALLOWED,
                "{method} {path}: no such method on the route"
            );
        }
    }

    #[tokio::test]
    async fn the_document_is_served_publicly_as_json() {
        let (status, body) = call("GET", "/api/openapi.json").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, OPENAPI_JSON.as_bytes());
    }
}
