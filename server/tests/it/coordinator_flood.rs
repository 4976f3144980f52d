//! The coordinator keeps its cadence under a submit flood: while the load tool (`ledger-load`,
//! run in-process) floods
//! `POST /blocks` for 20 s (`submit-wide`: binary blocks on the latest `/tips`, so the tip
//! pool grows by one tip per block and every milestone needs many checkpoint blocks), milestones at a 1 s
//! interval keep coming with no gap over 3 s, and an on-demand milestone answers promptly.

use crate::common;

use std::time::{Duration, Instant};

use common::TestNode;
use ledger_load::Scenario;

/// Longest allowed time between two confirmed milestones (3× the interval).
const MAX_GAP: Duration = Duration::from_secs(3);
const FLOOD: Duration = Duration::from_secs(20);

fn confirmed_index(node: &TestNode) -> Option<u64> {
    let reply = node.get("/api/core/v2/info");
    (reply.status == 200).then_some(())?;
    reply.json()["status"]["confirmedMilestone"]["index"].as_u64()
}

#[test]
fn milestones_keep_their_cadence_under_a_submit_flood() {
    let node = TestNode::start_with(&["--coordinator-interval", "1"], &[]);
    let url = node.url("");
    let flood = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(ledger_load::run(
            &url,
            32,
            Some(FLOOD),
            None,
            Scenario::SubmitWide,
            None,
        ))
    });
    let started = Instant::now();
    let mut last_index = confirmed_index(&node).expect("info");
    let mut last_change = Instant::now();
    let mut worst = Duration::ZERO;
    let mut milestones = 0;
    while started.elapsed() < FLOOD {
        std::thread::sleep(Duration::from_millis(100));
        let Some(index) = confirmed_index(&node) else {
            continue;
        };
        if index != last_index {
            milestones += index - last_index;
            last_index = index;
            last_change = Instant::now();
        }
        worst = worst.max(last_change.elapsed());
    }
    let report = flood.join().expect("load thread").expect("load run");
    let report = serde_json::to_value(&report).expect("report JSON");
    let created = report["status"]["201"].as_u64().unwrap_or(0);
    assert!(created > 1000, "the flood did not flood: {report}");
    assert!(
        worst <= MAX_GAP,
        "milestone gap {worst:?} during a flood of {created} blocks ({milestones} milestones)"
    );
    // On demand, after the flood: answers within the client's patience.
    let asked = Instant::now();
    eprintln!("flood: {created} blocks, {milestones} milestones, worst gap {worst:?}");
    let m = node.issue_milestone();
    assert!(m["index"].as_u64() > Some(last_index), "{m}");
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
}
