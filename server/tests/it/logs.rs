//! What a running node tells its operator at the default level: one line per confirmed
//! milestone (index, blocks referenced, time taken, tip pool) and a periodic summary of
//! refused submissions; `--log-format json` writes the same as one JSON object per line.

use crate::common;

use std::time::{Duration, Instant};

use common::TestNode;
use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(60);

fn wait_for(node: &TestNode, what: &str, found: impl Fn(&str) -> bool) -> String {
    let started = Instant::now();
    loop {
        let log = node.log();
        if found(&log) {
            return log;
        }
        assert!(started.elapsed() < TIMEOUT, "no {what} in the log:\n{log}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn milestones_and_refusals_are_logged_at_info() {
    let node = TestNode::start_with(&["--coordinator-interval", "0.2"], &[]);
    // Refused: a block whose parent is unknown.
    let body = json!({
        "protocolVersion": 2,
        "parents": [format!("0x{}", "ab".repeat(32))],
        "payload": {"type": 5, "tag": "0x01", "data": "0x02"},
    });
    for _ in 0..3 {
        node.post_json("/api/core/v2/blocks", &body)
            .assert_error(400);
    }
    let log = wait_for(&node, "milestone line", |l| {
        l.lines()
            .filter(|l| l.contains("milestone confirmed"))
            .count()
            >= 3
    });
    let line = log
        .lines()
        .find(|l| l.contains("milestone confirmed"))
        .unwrap_or_default();
    for field in ["INFO", "index=", "referenced=", "took_ms=", "tips="] {
        assert!(line.contains(field), "{field} missing: {line}");
    }
    let log = wait_for(&node, "refusal summary", |l| {
        l.contains("refused block submissions")
    });
    let summary = log
        .lines()
        .find(|l| l.contains("refused block submissions"))
        .unwrap_or_default();
    assert!(summary.contains("3 × 400 block is not solid"), "{summary}");
}

#[test]
fn json_log_format_writes_one_object_per_line() {
    let node = TestNode::start_with(
        &["--coordinator-interval", "0.2", "--log-format", "json"],
        &[],
    );
    let log = wait_for(&node, "milestone line", |l| {
        l.contains("milestone confirmed")
    });
    let mut milestone = None;
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let value: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
        if value["fields"]["message"] == "milestone confirmed" {
            milestone = Some(value);
        }
    }
    let milestone = milestone.expect("a milestone line");
    assert_eq!(milestone["level"], "INFO", "{milestone}");
    assert!(
        milestone["fields"]["index"].as_u64().is_some(),
        "{milestone}"
    );
}
