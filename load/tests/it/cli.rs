//! `ledger-load` against a tiny in-test axum server that checks every request
//! it gets the way the real endpoints would and counts them.

use std::{
    net::SocketAddr,
    process::Command,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
};

use axum::{
    body::Bytes,
    extract::{Path, Query, State},
    http::{header, HeaderMap, StatusCode},
    routing::{get, post},
    Json, Router,
};
use ledger_codec::{
    stardust::{Block, Payload},
    Codec,
};
use ledger_test_support::process::Run as Out;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_ledger-load");
const TIPS: [[u8; 32]; 3] = [[3; 32], [1; 32], [2; 32]];
const GENESIS: &str = "0x00000000000000000000000000000000000000000000000000000000000000000000";

/// What the test server saw.
#[derive(Default)]
struct Seen {
    /// Well-formed requests of the scenario (answered 2xx).
    good: AtomicU64,
    /// Anything else (answered 400/404).
    bad: AtomicU64,
    /// Block ids of accepted blocks, to check they are all different.
    ids: std::sync::Mutex<std::collections::HashSet<[u8; 32]>>,
    /// Binary blocks that approve an earlier accepted block besides the tips.
    chained: AtomicU64,
    /// When each `GET` of an output arrived.
    output_arrivals: std::sync::Mutex<Vec<std::time::Instant>>,
}

type S = Arc<Seen>;

fn verdict(seen: &Seen, good: bool, status: StatusCode) -> (StatusCode, Json<Value>) {
    if good {
        seen.good.fetch_add(1, Ordering::Relaxed);
        (status, Json(json!({})))
    } else {
        seen.bad.fetch_add(1, Ordering::Relaxed);
        (StatusCode::BAD_REQUEST, Json(json!({"error": "bad"})))
    }
}

async fn tips() -> Json<Value> {
    let tips: Vec<String> = TIPS
        .iter()
        .map(|t| format!("0x{}", hex::encode(t)))
        .collect();
    Json(json!({ "tips": tips }))
}

async fn submit(
    State(seen): State<S>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, Json<Value>) {
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let good = match media {
        "application/vnd.iota.serializer-v1" => match Block::decode(&body) {
            Ok(b) => {
                // Parents: every tip, plus at most one block accepted before.
                let mut ids = seen.ids.lock().expect("a handler panicked holding the ids");
                let earlier = b.parents.iter().filter(|p| ids.contains(*p)).count();
                let tips = b.parents.iter().filter(|p| TIPS.contains(p)).count();
                seen.chained
                    .fetch_add(u64::from(earlier == 1), Ordering::Relaxed);
                let fresh = ids.insert(Block::id_of(&body));
                b.nonce == 0
                    && b.protocol_version == 2
                    && tips == TIPS.len()
                    && earlier <= 1
                    && b.parents.len() == tips + earlier
                    && matches!(b.payload, Some(Payload::TaggedData(_)))
                    && fresh
            }
            Err(_) => false,
        },
        "application/json" => match serde_json::from_slice::<Value>(&body) {
            Ok(v) => {
                // With parents and nonce filled in, the JSON must be a valid block.
                let mut full = v.clone();
                full["parents"] = json!([format!("0x{}", hex::encode([1u8; 32]))]);
                full["nonce"] = json!("0");
                let fresh = Block::from_json_value(full)
                    .and_then(|b| b.id())
                    .map(|id| {
                        seen.ids
                            .lock()
                            .expect("a handler panicked holding the ids")
                            .insert(id)
                    })
                    .unwrap_or(false);
                v.get("parents").is_none()
                    && v.get("nonce").is_none()
                    && v["payload"]["type"] == 5
                    && fresh
            }
            Err(_) => false,
        },
        _ => false,
    };
    verdict(&seen, good, StatusCode::CREATED)
}

async fn output(State(seen): State<S>, Path(id): Path<String>) -> (StatusCode, Json<Value>) {
    seen.output_arrivals
        .lock()
        .expect("a handler panicked holding the arrivals")
        .push(std::time::Instant::now());
    verdict(&seen, id == GENESIS, StatusCode::OK)
}

async fn richest(
    State(seen): State<S>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> (StatusCode, Json<Value>) {
    verdict(
        &seen,
        q.get("top").map(String::as_str) == Some("100"),
        StatusCode::OK,
    )
}

/// The indexer scenario asks for one of the benchmark addresses: a bech32 `rms` Ed25519
/// address whose key hash is a number below 100 000, then zeros.
async fn indexer(
    State(seen): State<S>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> (StatusCode, Json<Value>) {
    let good = q
        .get("unlockableByAddress")
        .and_then(|a| ledger_codec::stardust::Address::from_bech32(a).ok())
        .is_some_and(|(hrp, a)| {
            let bytes = a.to_array();
            let mut n = [0u8; 8];
            n.copy_from_slice(&bytes[1..9]);
            hrp == "rms"
                && bytes[0] == 0
                && bytes[9..].iter().all(|b| *b == 0)
                && u64::from_le_bytes(n) < 100_000
        });
    verdict(&seen, good, StatusCode::OK)
}

/// Starts the test server on a thread of its own; returns its address and counters.
fn server(with_tips: bool) -> (SocketAddr, S) {
    let seen = S::default();
    let state = Arc::clone(&seen);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let mut app = Router::new()
                .route("/api/core/v2/blocks", post(submit))
                .route("/api/core/v2/outputs/{id}", get(output))
                .route("/api/explorer/v2/ledger/richest-addresses", get(richest))
                .route("/api/indexer/v1/outputs", get(indexer));
            if with_tips {
                app = app.route("/api/core/v2/tips", get(tips));
            }
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            tx.send(listener.local_addr().expect("addr")).expect("send");
            axum::serve(listener, app.with_state(state))
                .await
                .expect("serve");
        });
    });
    (rx.recv().expect("server address"), seen)
}

fn bench(args: &[&str]) -> Out {
    Command::new(BIN)
        .args(["--threads", "1"])
        .args(args)
        .output()
        .expect("run ledger-load")
        .into()
}

/// Runs `scenario` against the server at `addr` with the further `args`.
fn bench_against(addr: SocketAddr, scenario: &str, args: &[&str]) -> Out {
    let url = format!("http://{addr}");
    bench(&[&["--url", url.as_str(), "--scenario", scenario][..], args].concat())
}

fn report(out: &Out) -> Value {
    out.json("ledger-load")
}

#[test]
fn every_scenario_sends_well_formed_requests_and_counts_them() {
    for (scenario, status) in [
        ("submit-binary", "201"),
        ("submit-json", "201"),
        ("get-output", "200"),
        ("richest", "200"),
        ("indexer-address", "200"),
    ] {
        let (addr, seen) = server(true);
        let r = report(&bench_against(
            addr,
            scenario,
            &["--connections", "8", "--requests", "300", "--json"],
        ));
        assert_eq!(r["requests"], 300, "{scenario}: {r}");
        assert_eq!(r["errors"], 0, "{scenario}: {r}");
        assert_eq!(r["status"], json!({ status: 300 }), "{scenario}: {r}");
        assert_eq!(r["scenario"], scenario, "{scenario}: {r}");
        assert_eq!(
            seen.good.load(Ordering::Relaxed),
            300,
            "{scenario}: server count"
        );
        assert_eq!(
            seen.bad.load(Ordering::Relaxed),
            0,
            "{scenario}: malformed requests"
        );
        if scenario == "submit-binary" {
            // Each connection's blocks form a chain: all but its first approve the previous.
            assert!(
                seen.chained.load(Ordering::Relaxed) >= 300 - 8,
                "chained blocks"
            );
        }
        let l = &r["latencyMs"];
        for q in ["p50", "p90", "p99", "max"] {
            assert!(
                l[q].as_f64().is_some_and(|v| v > 0.0),
                "{scenario}: {q} in {r}"
            );
        }
        assert!(l["p50"].as_f64() <= l["p99"].as_f64() && l["p99"].as_f64() <= l["max"].as_f64());
        assert!(r["throughput"].as_f64().is_some_and(|t| t > 0.0), "{r}");
    }
}

#[test]
fn duration_bounds_the_run_and_other_statuses_are_counted() {
    let (addr, seen) = server(true);
    // Under a path prefix nothing exists: every answer is the router's 404.
    let url = format!("http://localhost:{}/nothing/", addr.port());
    let out = bench(&[
        "--url",
        &url,
        "--scenario",
        "get-output",
        "--connections",
        "4",
        "--duration",
        "1",
        "--json",
    ]);
    let r = report(&out);
    let n = r["requests"].as_u64().expect("requests");
    assert!(n > 0, "{r}");
    assert_eq!(r["status"], json!({ "404": n }), "{r}");
    assert!(
        r["samples"]["404"].as_str().is_some(),
        "a 404 answer is kept: {r}"
    );
    assert_eq!(
        seen.good.load(Ordering::Relaxed) + seen.bad.load(Ordering::Relaxed),
        0
    );
}

#[test]
fn text_report_names_throughput_percentiles_and_statuses() {
    let (addr, _) = server(true);
    let out = bench_against(addr, "richest", &["--requests", "50", "--connections", "2"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    for word in ["req/s", "p50", "p90", "p99", "max", "200: 50"] {
        assert!(
            out.stdout.contains(word),
            "{word} missing in\n{}",
            out.stdout
        );
    }
}

#[test]
fn non_loopback_and_malformed_urls_are_refused_with_exit_2() {
    for url in [
        "http://192.0.2.1:14265",
        "http://[2001:db8::1]:14265",
        "https://127.0.0.1:14265",
        "127.0.0.1:14265",
    ] {
        let out = bench(&["--url", url, "--scenario", "get-output", "--requests", "1"]);
        assert_eq!(out.code, Some(2), "{url}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{url}: {}", out.stdout);
        assert!(!out.stderr.trim().is_empty(), "{url}");
    }
    let out = bench(&["--url", "http://192.0.2.1", "--scenario", "richest"]);
    assert!(out.stderr.contains("loopback"), "{}", out.stderr);
}

#[test]
fn bounds_on_the_flags_are_enforced() {
    for args in [
        &["--connections", "0"][..],
        &["--connections", "5000"],
        &["--duration", "0"],
        &["--duration", "601"],
        &["--requests", "0"],
        &["--rate", "0"],
    ] {
        let out = bench(&[&["--scenario", "get-output"][..], args].concat());
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
    }
}

#[test]
fn submit_binary_without_tips_fails_with_exit_1() {
    let (addr, seen) = server(false);
    let out = bench_against(addr, "submit-binary", &["--requests", "5"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("tips"), "{}", out.stderr);
    assert_eq!(
        seen.good.load(Ordering::Relaxed) + seen.bad.load(Ordering::Relaxed),
        0
    );
}

/// The JSON report of a `get-output` run on 4 connections at `rate` requests a second, ended
/// by `bound` (`--duration SECS` or `--requests N`).
fn paced_get_output(addr: SocketAddr, rate: &str, bound: [&str; 2]) -> Value {
    report(&bench_against(
        addr,
        "get-output",
        &[
            "--connections",
            "4",
            "--rate",
            rate,
            bound[0],
            bound[1],
            "--json",
        ],
    ))
}

#[test]
fn rate_paces_the_run_and_never_exceeds_it() {
    const RATE: u64 = 400;
    const SECS: u64 = 3;
    let (addr, seen) = server(true);
    let rate = RATE.to_string();
    let secs = SECS.to_string();
    let r = paced_get_output(addr, &rate, ["--duration", &secs]);
    let slots = RATE * SECS;
    let served = seen.good.load(Ordering::Relaxed);
    assert_eq!(seen.bad.load(Ordering::Relaxed), 0, "{r}");
    assert_eq!(r["rate"], RATE, "{r}");
    assert_eq!(r["requests"], served, "{r}");
    assert_eq!(r["started"], served, "{r}");
    // The schedule has RATE * SECS start times before the deadline; nearly all are taken by a
    // server this fast, and none is added.
    assert!(
        served <= slots,
        "{served} requests in {SECS} s at {RATE}/s: {r}"
    );
    assert!(
        served * 100 >= slots * 95,
        "{served} requests in {SECS} s at {RATE}/s: {r}"
    );
    let achieved = r["achievedRate"].as_f64().expect("achievedRate");
    assert!(
        achieved <= RATE as f64 && achieved >= RATE as f64 * 0.95,
        "{r}"
    );
    // No burst anywhere: every half second of arrivals holds about RATE / 2 requests (a little
    // slack for the timer's millisecond steps and the server's scheduling), not more.
    let arrivals = seen.output_arrivals.lock().unwrap().clone();
    let half = std::time::Duration::from_millis(500);
    let most = arrivals
        .iter()
        .enumerate()
        .map(|(i, t)| arrivals[i..].iter().take_while(|u| **u - *t < half).count() as u64)
        .max()
        .unwrap_or(0);
    assert!(
        most <= RATE / 2 + RATE / 50 + 2,
        "{most} requests within 500 ms at {RATE}/s"
    );

    // Bounded by count, the rate holds too: 200 requests at 400/s take half a second.
    let (addr, seen) = server(true);
    let r = paced_get_output(addr, &rate, ["--requests", "200"]);
    assert_eq!(r["requests"], 200, "{r}");
    assert_eq!(seen.good.load(Ordering::Relaxed), 200);
    assert!(r["seconds"].as_f64().is_some_and(|s| s >= 0.49), "{r}");
    let achieved = r["achievedRate"].as_f64().expect("achievedRate");
    assert!(
        achieved <= RATE as f64 * 1.001 && achieved >= RATE as f64 * 0.95,
        "{r}"
    );
}
