//! The node never takes a damaged or shortened store for the truth: on the real binary, a
//! byte flipped in the middle of the active log segment stops the start and leaves every file
//! as it was; a torn tail (the last record cut short by a crash) is cut and the node starts with
//! every acknowledged block; a deleted segment is refused; a coordinator whose log is gone but
//! whose key is kept refuses to issue milestone indexes it already signed.

use crate::common;

use std::{
    collections::BTreeMap,
    fs,
    os::unix::fs::FileExt,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use common::{run_fails, TestNode};
use serde_json::json;

const BLOCKS: &str = "/api/core/v2/blocks";

/// A node that confirmed some milestones and acknowledged `n` tagged-data blocks, killed with
/// SIGKILL; returns its directory and the acknowledged ids.
fn stopped_node(n: usize) -> (tempfile::TempDir, Vec<String>) {
    let node = TestNode::start_with(&["--coordinator-interval", "0.2"], &[]);
    let ids: Vec<String> = (0..n)
        .map(|i| {
            let body = json!({"protocolVersion": 2, "payload": {
                "type": 5, "tag": "0x01", "data": format!("0x{:08x}", i)}});
            node.post_json(BLOCKS, &body).created_id()
        })
        .collect();
    let started = Instant::now();
    while node.get("/api/core/v2/info").json()["status"]["confirmedMilestone"]["index"]
        .as_u64()
        .unwrap_or(0)
        < 5
    {
        assert!(started.elapsed() < Duration::from_secs(60), "no milestones");
        std::thread::sleep(Duration::from_millis(50));
    }
    (node.kill_9(), ids)
}

fn segment(dir: &Path) -> PathBuf {
    dir.join("data/log/00000000.seg")
}

/// Every file under the data dir with its contents.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.join("data")];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(path.clone(), fs::read(&path).expect("read"));
            }
        }
    }
    out
}

/// One past the last non-zero byte of the segment: where its data ends.
fn data_end(path: &Path) -> usize {
    let bytes = fs::read(path).expect("segment");
    bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1)
}

/// The offset after the last record frame (`crc u32 ‖ len u32 ‖ kind u8 ‖ len bytes`, from
/// offset 32, until a zero header; engine/FORMAT.md).
fn frames_end(path: &Path) -> usize {
    let bytes = fs::read(path).expect("segment");
    let mut at = 32;
    while bytes[at..at + 9].iter().any(|&b| b != 0) {
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4 bytes"));
        at += 9 + len as usize;
    }
    at
}

#[test]
fn a_flipped_byte_in_the_middle_of_the_log_stops_the_start_and_changes_nothing() {
    let (dir, ids) = stopped_node(40);
    let path = segment(dir.path());
    let at = data_end(&path) / 2;
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .expect("open");
    let mut b = [0u8; 1];
    file.read_exact_at(&mut b, at as u64).expect("read");
    file.write_all_at(&[b[0] ^ 0x10], at as u64).expect("flip");
    drop(file);
    let before = snapshot(dir.path());
    let err = run_fails(&dir.path().join("data"), &[]);
    assert!(
        err.contains("00000000.seg") || err.contains("segment 0"),
        "{err}"
    );
    assert!(err.contains("not a torn tail"), "{err}");
    assert!(
        snapshot(dir.path()) == before,
        "files changed by a refused start"
    );

    // The operator's way out: salvage the intact records into a new data dir.
    let new = dir.path().join("salvaged");
    let (status, out, err) = common::run_cli(&[
        "tools",
        "salvage",
        "--data-dir",
        dir.path().join("data").to_str().expect("utf-8"),
        "--into",
        new.to_str().expect("utf-8"),
    ]);
    assert!(status.success(), "{err}");
    assert!(out.contains("skipped damaged bytes"), "{out}");
    assert!(
        snapshot(dir.path()) == before,
        "salvage changed the old data dir"
    );
    let moved = tempfile::tempdir().expect("dir");
    fs::rename(&new, moved.path().join("data")).expect("move");
    let node = TestNode::start_in(moved, &["--no-coordinator"], &[]);
    let readable = ids
        .iter()
        .filter(|id| node.get(&format!("{BLOCKS}/{id}")).status == 200)
        .count();
    assert!(
        readable + 1 >= ids.len(),
        "{readable} of {} blocks salvaged",
        ids.len()
    );
}

#[test]
fn a_torn_tail_is_cut_and_every_acknowledged_block_stays() {
    let (dir, ids) = stopped_node(20);
    let path = segment(dir.path());
    // The start of a record that a crash cut short: a frame header claiming 500 bytes and
    // only 100 of them.
    let end = frames_end(&path) as u64;
    let mut partial = vec![0xAB, 0xCD, 0xEF, 0x01];
    partial.extend_from_slice(&500u32.to_le_bytes());
    partial.push(1);
    partial.extend_from_slice(&[0x5A; 100]);
    let file = fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open");
    file.write_all_at(&partial, end).expect("write");
    drop(file);
    let node = TestNode::start_in(dir, &["--coordinator-interval", "0.2"], &[]);
    for id in &ids {
        assert_eq!(node.get(&format!("{BLOCKS}/{id}")).status, 200, "{id} lost");
    }
    assert!(
        node.log().contains("truncating torn tail"),
        "{}",
        node.log()
    );
    // And it keeps working.
    let body = json!({"protocolVersion": 2, "payload": {"type": 5, "tag": "0x02", "data": "0x"}});
    node.post_json(BLOCKS, &body).created_id();
}

#[test]
fn a_deleted_segment_is_refused() {
    let (dir, _) = stopped_node(5);
    fs::remove_file(segment(dir.path())).expect("delete the segment");
    let err = run_fails(&dir.path().join("data"), &[]);
    assert!(err.contains("blocks are missing"), "{err}");
}

#[test]
fn a_coordinator_whose_log_is_gone_does_not_issue_its_indexes_again() {
    let (dir, _) = stopped_node(5);
    let data = dir.path().join("data");
    fs::remove_dir_all(data.join("log")).expect("delete the log");
    fs::remove_file(data.join("confirmed-index")).expect("delete the confirmed index");
    assert!(data.join("coordinator.key").exists());
    let err = run_fails(&data, &[]);
    assert!(err.contains("already issued milestone"), "{err}");
}
