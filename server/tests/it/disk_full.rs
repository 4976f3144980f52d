//! A full disk: submits get 503 `storage full` (never 500, never a 201 for a block not
//! stored), the node logs the change of state once, accepts blocks again on its own when space
//! returns, and loses nothing it acknowledged across a kill.
//!
//! Runs the real binary on a 24 MiB tmpfs; mounting needs root (CI and this workplace run as
//! root). Without the privilege the test says so and checks nothing.

use crate::common;

use std::{path::Path, process::Command};

use common::TestNode;
use serde_json::json;

const BLOCKS: &str = "/api/core/v2/blocks";

/// A tmpfs mounted for the test, unmounted on drop.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(size: &str) -> Option<Self> {
        let dir = tempfile::tempdir().expect("dir");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Self(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.0.path()).status();
    }
}

/// Posts ~30 KB tagged-data blocks until `stop` of them in a row are refused; returns the
/// acknowledged ids. Every answer must be 201 or 503 `storage full`.
fn fill(node: &TestNode, round: &str, stop: usize) -> Vec<String> {
    let mut acked = Vec::new();
    let mut refused = 0;
    for i in 0..5000 {
        let data = format!("0x{}{:08x}", "ab".repeat(30_000), i);
        let body = json!({"protocolVersion": 2, "payload": {
            "type": 5, "tag": format!("0x{}", hex::encode(round)), "data": data}});
        let reply = node.post_json(BLOCKS, &body);
        match reply.status {
            201 => {
                acked.push(reply.created_id());
                refused = 0;
            }
            503 => {
                let message = reply.assert_error(503);
                assert!(message.starts_with("storage full"), "{message}");
                refused += 1;
                if refused == stop {
                    return acked;
                }
            }
            other => panic!("{other}: {}", String::from_utf8_lossy(&reply.body)),
        }
    }
    panic!("the disk never filled");
}

fn filler(dir: &Path, name: &str, mib: usize) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, vec![1u8; mib << 20]).expect("filler");
    path
}

#[test]
fn a_full_disk_gives_503_resumes_by_itself_and_keeps_what_it_acknowledged() {
    let Some(fs) = Tmpfs::mount("24m") else {
        eprintln!("disk_full: cannot mount a tmpfs here (not root?); nothing checked");
        return;
    };
    let dir = tempfile::TempDir::new_in(fs.0.path()).expect("dir in tmpfs");
    // The node's log (`node.log`, its stderr) is a link to a file outside the tmpfs: a line
    // logged while the disk is full would otherwise be lost whenever the log's last page has no
    // room left for it (the test then failed now and then, more often on a busy machine).
    let log_home = tempfile::tempdir().expect("log dir");
    let log_file = log_home.path().join("node.log");
    std::fs::File::create(&log_file).expect("log file");
    std::os::unix::fs::symlink(&log_file, dir.path().join("node.log")).expect("link the log");
    let room = filler(fs.0.path(), "room", 6);
    // Freed before the restart, so that the restarted node has room to open its files.
    let spare = filler(fs.0.path(), "spare", 2);
    let node = TestNode::start_in(dir, &["--coordinator-interval", "0.5"], &[]);
    let mut acked = fill(&node, "first", 3);
    assert!(!acked.is_empty());
    let log = node.log();
    assert_eq!(
        log.matches("storage full: refusing blocks").count(),
        1,
        "{log}"
    );
    assert!(!log.contains("internal error"), "{log}");

    // Space returns: blocks are accepted again without a restart.
    std::fs::remove_file(&room).expect("free space");
    let body = json!({"protocolVersion": 2, "payload": {"type": 5, "tag": "0x02", "data": "0x"}});
    acked.push(node.post_json(BLOCKS, &body).created_id());
    assert!(
        node.log().contains("storage available again"),
        "{}",
        node.log()
    );

    // Full again, then killed: every acknowledged block is there after a restart.
    acked.extend(fill(&node, "second", 2));
    let dir = node.kill_9();
    std::fs::remove_file(&spare).expect("free space for the restart");
    let node = TestNode::start_in(dir, &["--no-coordinator"], &[]);
    for id in &acked {
        assert_eq!(node.get(&format!("{BLOCKS}/{id}")).status, 200, "{id} lost");
    }
    drop(node);
    drop(fs);
    drop(log_home);
}
