//! The REST framework through the real binary: health, routes, peers and access control,
//! error envelope, 404/405/413/415.

use crate::common;

use std::{
    io::{Read, Write},
    net::TcpStream,
};

use common::{jwt_for, TestNode};
use serde_json::json;

const PEERS: &str = "/api/core/v2/peers";
const BLOCKS: &str = "/api/core/v2/blocks";

#[test]
fn dev_node_reports_healthy() {
    let node = TestNode::start();
    let reply = node.get("/health");
    assert_eq!(reply.status, 200, "{}", node.log());
    assert!(reply.body.is_empty());
}

#[test]
fn node_without_coordinator_or_peers_is_unhealthy() {
    let node = TestNode::start_with(&["--no-coordinator"], &[]);
    node.get("/health").assert_error(503);
}

#[test]
fn routes_lists_core_v2() {
    let node = TestNode::start();
    let reply = node.get("/api/routes");
    assert_eq!(reply.status, 200);
    let routes = reply.json();
    let list = routes["routes"].as_array().expect("routes array");
    assert!(list.contains(&json!("core/v2")), "{routes}");
}

#[test]
fn peers_needs_a_valid_token() {
    let node = TestNode::start();
    let message = node.get(PEERS).assert_error(403);
    assert_eq!(message, ledger_api::error::NOT_PUBLIC);
    assert!(message.contains("Authorization: Bearer"), "{message}");

    for bad in [
        "Bearer not-a-jwt".to_owned(),
        "Bearer ".to_owned(),
        "Basic dXNlcjpwYXNz".to_owned(),
        // A well-formed token signed with another node's secret.
        format!(
            "Bearer {}",
            jwt_for(&tempfile::tempdir().expect("dir").path().join("other"))
        ),
    ] {
        let reply = node.get_with(PEERS, &[("authorization", &bad)]);
        assert_eq!(
            reply.assert_error(403),
            ledger_api::error::NOT_PUBLIC,
            "Authorization: {bad}"
        );
    }

    let token = node.jwt();
    let reply = node.get_with(PEERS, &[("authorization", &format!("Bearer {token}"))]);
    assert_eq!(reply.assert_json(200), json!([]));
}

#[test]
fn token_made_before_first_start_is_accepted() {
    let dir = tempfile::tempdir().expect("dir");
    let token = jwt_for(&dir.path().join("data"));
    let node = TestNode::start_in(dir, &[], &[]);
    let reply = node.get_with(PEERS, &[("authorization", &format!("Bearer {token}"))]);
    assert_eq!(reply.status, 200);
}

#[test]
fn access_matches_the_path_not_the_query() {
    let node = TestNode::start();
    // A query that looks like a public route does not open a protected one.
    node.get(&format!("{PEERS}?x=/health")).assert_error(403);
    node.get(&format!("{PEERS}?/api/core/v2/blocks"))
        .assert_error(403);
    // A query on a public route keeps it public.
    assert_eq!(node.get("/health?pretty").status, 200);
    assert_eq!(node.get("/api/routes?x=/api/core/v2/peers").status, 200);
}

#[test]
fn configured_route_lists_decide_access() {
    // Only /health public: /api/routes falls under the default protected /api/*.
    let node = TestNode::start_with(&["--public-routes=/health"], &[]);
    assert_eq!(node.get("/health").status, 200);
    node.get("/api/routes").assert_error(403);
    let auth = format!("Bearer {}", node.jwt());
    assert_eq!(
        node.get_with("/api/routes", &[("authorization", &auth)])
            .status,
        200
    );
    drop(node);

    // A route on neither list is refused even with a valid token.
    let node = TestNode::start_with(&["--public-routes=/health", "--protected-routes="], &[]);
    let auth = format!("Bearer {}", node.jwt());
    let reply = node.get_with(PEERS, &[("authorization", &auth)]);
    assert_eq!(reply.assert_error(403), ledger_api::error::NOT_PUBLIC);
}

#[test]
fn route_lists_follow_cli_over_env_over_file() {
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("node.toml");
    std::fs::write(
        &config,
        "public-routes = [\"/health\", \"/api/routes\", \"/api/core/v2/peers\"]\n",
    )
    .expect("write config");
    let config_arg = format!("--config={}", config.display());

    // File only: peers made public.
    let node = TestNode::start_with(&[&config_arg], &[]);
    assert_eq!(node.get(PEERS).status, 200, "file setting");
    drop(node);

    // Environment over file: peers protected again.
    let env = [("LEDGER_NODE_PUBLIC_ROUTES", "/health,/api/routes")];
    let node = TestNode::start_with(&[&config_arg], &env);
    node.get(PEERS).assert_error(403);
    assert_eq!(
        node.get("/api/routes").status,
        200,
        "env list has two entries"
    );
    drop(node);

    // Command line over environment.
    let node = TestNode::start_with(&[&config_arg, "--public-routes=/api/core/v2/peers"], &env);
    assert_eq!(node.get(PEERS).status, 200, "command line setting");
    node.get("/api/routes").assert_error(403);
}

#[test]
fn unknown_route_is_a_json_404() {
    let node = TestNode::start();
    // (`/` is the dashboard's page; with `--no-dashboard` it is a 404 too: `dashboard.rs`.)
    for path in ["/nope", "/api/core/v2/nope", "/api/core/v2/peers/x/y"] {
        let message = node.get(path).assert_error(404);
        assert!(message.contains(path), "{path}: {message}");
    }
}

#[test]
fn wrong_method_is_a_json_405() {
    let node = TestNode::start();
    let reply = node.request("DELETE", "/health");
    reply.assert_error(405);
    assert!(
        reply.header("allow").is_some_and(|a| a.contains("GET")),
        "{:?}",
        reply.headers
    );
    node.request("GET", BLOCKS).assert_error(405);
}

#[test]
fn submit_accepts_json_and_both_binary_names() {
    let node = TestNode::start();
    for content_type in [
        None,
        Some("application/json"),
        Some("application/json; charset=utf-8"),
        Some("application/vnd.ledger.serializer-v1"),
        Some("application/vnd.iota.serializer-v1"),
    ] {
        let headers: Vec<(&str, &str)> = content_type
            .map(|c| ("content-type", c))
            .into_iter()
            .collect();
        // Accepted media type: the body is judged as a block (never 415).
        let message = node.post(BLOCKS, &headers, b"{}").assert_error(400);
        assert!(
            message.starts_with("invalid block"),
            "{content_type:?}: {message}"
        );
    }
    // Other media types, v3 binary among them, get 415: v2_submit.rs, media_types_and_body_limits.
}

#[test]
fn body_at_the_limit_is_read_and_over_it_is_a_json_413() {
    let node = TestNode::start();
    let at_limit = vec![b' '; 1 << 20];
    node.post(BLOCKS, &[("content-type", "application/json")], &at_limit)
        .assert_error(400);
    let over = vec![b' '; (1 << 20) + 1];
    let message = node
        .post(BLOCKS, &[("content-type", "application/json")], &over)
        .assert_error(413);
    assert!(message.contains("1048576"), "{message}");
    // The same without Content-Length: the limit holds while reading.
    node.post_chunked(BLOCKS, &[], &at_limit).assert_error(400);
    let message = node.post_chunked(BLOCKS, &[], &over).assert_error(413);
    assert!(message.contains("1048576"), "{message}");
    // The connection stays usable for the next request.
    assert_eq!(node.get("/health").status, 200);
}

#[test]
fn declared_length_over_the_limit_is_refused_before_reading() {
    let node = TestNode::start();
    // Headers only: the node must answer from Content-Length without waiting for the body.
    let mut stream = TcpStream::connect(node.addr).expect("connect");
    write!(
        stream,
        "POST {BLOCKS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        64 << 20
    )
    .expect("send");
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).expect("read status line");
    assert_eq!(&head, b"HTTP/1.1 413", "{}", String::from_utf8_lossy(&head));
}

#[test]
fn configured_body_limit_applies() {
    let node = TestNode::start_with(&["--api-body-limit=100"], &[]);
    node.post(BLOCKS, &[], &[b' '; 100]).assert_error(400);
    let message = node.post(BLOCKS, &[], &[b' '; 101]).assert_error(413);
    assert!(message.contains("100 bytes"), "{message}");
}

#[test]
fn media_types_match_exactly() {
    let node = TestNode::start();
    let body = br#"{"protocolVersion":2,"payload":{"type":5,"tag":"0x01","data":"0x"}}"#;
    for wrong in [
        "application/jsonx",
        "application/json-seq",
        "application/vnd.iota.serializer-v1x",
    ] {
        let reply = node.post("/api/core/v2/blocks", &[("content-type", wrong)], body);
        let message = reply.assert_error(415);
        assert!(message.contains(wrong), "{wrong}: {message}");
    }
    let ok = node.post(
        "/api/core/v2/blocks",
        &[("content-type", "Application/JSON; charset=utf-8")],
        body,
    );
    assert_eq!(ok.status, 201, "{}", String::from_utf8_lossy(&ok.body));
}
