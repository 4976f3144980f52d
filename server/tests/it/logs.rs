//! What a running node tells its operator at the default level: one line per confirmed
//! milestone (index, blocks referenced, time taken, tip pool) and a periodic summary of
//! refused submissions; `--log-format json` writes the same as one JSON object per line. A log
//! that cannot be written (its disk full) costs the lines, never an answer.

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

/// The node with its stderr on `/dev/full` (every write fails with ENOSPC, as a log file on a
/// full disk does): it starts, answers reads and submits (each logged), confirms milestones
/// (each logged) and keeps running. Before, tracing-subscriber reported each failed write with
/// `eprintln!`, which panicked: at start, or in a request's task, dropping its connection.
#[test]
fn a_log_that_cannot_be_written_loses_lines_not_answers() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("logs: no /dev/full here; nothing checked");
        return;
    };
    let mut node = TestNode::start_with_stderr(&["--coordinator-interval", "0.2"], full);
    let confirmed = |node: &TestNode| {
        let info: Value = node.get("/api/core/v2/info").json();
        info["status"]["confirmedMilestone"]["index"]
            .as_u64()
            .unwrap_or(0)
    };
    let first = confirmed(&node);
    for i in 0..20u32 {
        let body = json!({"protocolVersion": 2, "payload": {
            "type": 5, "tag": "0x6c6f67", "data": format!("0x{i:08x}")}});
        node.post_json("/api/core/v2/blocks", &body).created_id();
        let unknown = format!("/api/core/v2/blocks/0x{}", "00".repeat(32));
        assert_eq!(node.get(&unknown).status, 404);
    }
    let started = Instant::now();
    while confirmed(&node) < first + 5 {
        assert!(started.elapsed() < TIMEOUT, "milestones stopped");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(node.is_running(), "the node exited");
}
