//! `mqtt-swarm`'s arguments and its errors before any subscriber exists (its measuring is
//! tested against the real node in server/tests/it/mqtt.rs).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mqtt-swarm");

fn swarm(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(BIN)
        .args(["--threads", "1"])
        .args(args)
        .output()
        .expect("run mqtt-swarm");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn non_loopback_urls_and_more_blocks_subscribers_than_subscribers_are_refused_with_exit_2() {
    let (code, stdout, stderr) = swarm(&["--url", "http://192.0.2.1:14265"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("loopback"), "{stderr}");
    let (code, _, stderr) = swarm(&["--subscribers", "5", "--blocks-subscribers", "6"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--blocks-subscribers 6"), "{stderr}");
    for bad in [
        &["--duration", "0"][..],
        &["--probe-rate", "0"],
        &["--keep-alive", "1"],
    ] {
        let (code, _, stderr) = swarm(bad);
        assert_eq!(code, Some(2), "{bad:?}: {stderr}");
    }
}

#[test]
fn a_node_that_is_not_there_ends_the_run_with_exit_1_before_probing() {
    // A loopback port nobody listens on any more.
    let port = ledger_test_support::process::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let (code, stdout, stderr) = swarm(&[
        "--url",
        &url,
        "--subscribers",
        "2",
        "--blocks-subscribers",
        "1",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("cannot connect"), "{stderr}");
    assert!(!stderr.contains("probing"), "{stderr}");
}
