//! The Prometheus endpoint of the real binary: Hornet's families, values that follow the node,
//! the request counter, node PoW, and `--no-metrics`.

use crate::common;

use std::{
    net::{SocketAddr, TcpStream},
    time::{Duration, Instant},
};

use common::TestNode;
use serde_json::{json, Value};

/// Every family the endpoint must expose, with its OpenMetrics type (counters are named
/// without `_total` on their `# TYPE` line).
const FAMILIES: &[(&str, &str)] = &[
    ("iota_node_app_info", "gauge"),
    ("iota_node_health", "gauge"),
    ("iota_node_milestones", "gauge"),
    ("iota_node_blocks_per_second", "gauge"),
    ("iota_node_referenced_blocks_per_second", "gauge"),
    ("iota_node_referenced_rate", "gauge"),
    ("iota_node_tips", "gauge"),
    ("iota_database_tangle_size_bytes", "gauge"),
    ("iota_database_utxo_size_bytes", "gauge"),
    ("iota_restapi_requests", "counter"),
    ("iota_restapi_http_request_errors", "gauge"),
    ("iota_restapi_pow_requests", "gauge"),
    ("process_resident_memory_bytes", "gauge"),
    ("process_cpu_seconds", "counter"),
    ("process_open_fds", "gauge"),
    ("process_start_time_seconds", "gauge"),
    ("ledger_confirmation_duration_seconds", "histogram"),
    ("ledger_commit_duration_seconds", "histogram"),
];

const CONFIRMED: &str = r#"iota_node_milestones{type="confirmed"}"#;
const POSTS_201: &str = r#"iota_restapi_requests_total{code="201",method="POST"}"#;

/// One scrape of `node`'s metrics endpoint: asserts 200 and the OpenMetrics content type.
fn scrape(node: &TestNode) -> String {
    let addr = node
        .metrics_addr
        .expect("the node printed its metrics address");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let mut response = agent
        .get(&format!("http://{addr}/metrics"))
        .call()
        .expect("scrape");
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    let text = response.body_mut().read_to_string().expect("body");
    assert!(text.ends_with("# EOF\n"), "not OpenMetrics text:\n{text}");
    text
}

/// The value of the sample `series` (name with its labels exactly as exposed), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// Scrapes until `done` holds for a scrape (at most 60 s); returns that scrape.
fn scrape_until(node: &TestNode, what: &str, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = scrape(node);
        if done(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{what} never held; last scrape:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn hornets_families_are_exposed_and_follow_the_node() {
    let node = TestNode::start_with(&["--coordinator-interval", "0.2"], &[]);
    // The request counter has series (and so a family) once a request was answered.
    assert_eq!(node.get("/health").status, 200);
    let first = scrape(&node);
    for (family, kind) in FAMILIES {
        assert!(
            first.contains(&format!("\n# TYPE {family} {kind}\n")),
            "# TYPE {family} {kind} missing in\n{first}"
        );
    }
    let version = env!("CARGO_PKG_VERSION");
    let app_info = format!(r#"iota_node_app_info{{name="ledger-node",version="{version}"}}"#);
    assert_eq!(sample(&first, &app_info), Some(1.0), "{first}");
    assert_eq!(sample(&first, "iota_node_health"), Some(1.0), "{first}");
    assert!(sample(&first, r#"iota_node_tips{type="nonlazy"}"#).is_some());
    assert!(sample(&first, r#"iota_node_tips{type="semilazy"}"#).is_some());
    assert!(sample(&first, "process_resident_memory_bytes").is_some_and(|v| v > 1e6));
    assert!(sample(&first, "process_open_fds").is_some_and(|v| v >= 3.0));

    // Milestones confirm every 0.2 s: the gauge and the confirmation histogram follow.
    let before = sample(&first, CONFIRMED).expect("confirmed milestone gauge");
    // The gauge moves when the state does, the histogram a moment later (once the
    // milestone's events are out): wait for both.
    let later = scrape_until(&node, "3 more confirmed milestones, each timed", |t| {
        sample(t, CONFIRMED).is_some_and(|c| c >= before + 3.0)
            && sample(t, "ledger_confirmation_duration_seconds_count").is_some_and(|n| n >= 3.0)
    });
    let latest = sample(&later, r#"iota_node_milestones{type="latest"}"#).expect("latest");
    assert!(latest >= before + 3.0, "{later}");
    assert!(
        sample(&later, "ledger_commit_duration_seconds_count").is_some_and(|n| n >= 1.0),
        "{later}"
    );
    assert!(sample(&later, "iota_database_tangle_size_bytes").is_some_and(|b| b > 0.0));
    assert!(sample(&later, "iota_database_utxo_size_bytes").is_some_and(|b| b > 0.0));

    // A posted block is counted under its status and method, an unknown route as an error.
    let posts = sample(&later, POSTS_201).unwrap_or(0.0);
    let errors = sample(&later, "iota_restapi_http_request_errors").expect("errors");
    let block = json!({"protocolVersion": 2, "payload": {"type": 5, "tag": "0x01", "data": "0x"}});
    node.post_json("/api/core/v2/blocks", &block).created_id();
    assert_eq!(node.get("/api/no-such-route").status, 404);
    let after = scrape(&node);
    assert_eq!(sample(&after, POSTS_201), Some(posts + 1.0), "{after}");
    let not_found = r#"iota_restapi_requests_total{code="404",method="GET"}"#;
    assert_eq!(sample(&after, not_found), Some(1.0), "{after}");
    assert_eq!(
        sample(&after, "iota_restapi_http_request_errors"),
        Some(errors + 1.0),
        "{after}"
    );
}

#[test]
fn node_pow_is_counted() {
    let dir = tempfile::tempdir().expect("dir");
    let mut genesis: Value =
        serde_json::from_str(ledger_engine::DEV_GENESIS_JSON).expect("genesis JSON");
    genesis["protocolParameters"]["minPowScore"] = json!(100);
    let path = dir.path().join("genesis.json");
    std::fs::write(&path, genesis.to_string()).expect("write genesis");
    let node = TestNode::start_with(&["--genesis", path.to_str().expect("utf-8")], &[]);
    assert_eq!(
        sample(&scrape(&node), "iota_restapi_pow_requests"),
        Some(0.0)
    );
    let block = json!({"protocolVersion": 2, "payload": {"type": 5, "tag": "0x02", "data": "0x"}});
    node.post_json("/api/core/v2/blocks", &block).created_id();
    assert_eq!(
        sample(&scrape(&node), "iota_restapi_pow_requests"),
        Some(1.0)
    );
}

#[test]
fn no_metrics_opens_no_listener() {
    // Find a free port, then ask the node to use it while metrics are off.
    let port = ledger_test_support::process::free_port();
    let bind = format!("127.0.0.1:{port}");
    let node = TestNode::start_with(&["--metrics-bind", &bind, "--no-metrics"], &[]);
    assert_eq!(node.metrics_addr, None, "a metrics address was printed");
    assert_eq!(node.get("/health").status, 200);
    let addr: SocketAddr = bind.parse().expect("addr");
    assert!(
        TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_err(),
        "something listens on {addr}"
    );
    assert!(
        !node.log().contains("metrics endpoint up"),
        "{}",
        node.log()
    );

    let env_off = TestNode::start_with(&[], &[("LEDGER_NODE_NO_METRICS", "1")]);
    assert_eq!(env_off.metrics_addr, None);
}

#[test]
fn a_taken_metrics_port_stops_the_start_and_names_the_flag() {
    let node = TestNode::start();
    let taken = node.metrics_addr.expect("metrics address").to_string();
    let dir = tempfile::tempdir().expect("dir");
    let err = common::run_fails(&dir.path().join("data"), &["--metrics-bind", &taken]);
    assert!(err.contains("--metrics-bind"), "{err}");
    assert!(
        !dir.path().join("data").exists(),
        "a refused start created the data dir"
    );
}
