//! `bare-axum`: the ceiling for the node's REST API. It serves the routes the `ledger-load`
//! scenarios hit with axum, tokio and hyper only: no layers, no state, no ledger, fixed
//! answers of the same size and shape as a dev node's. `ledger-load` against it measures what
//! axum and hyper alone give on this machine; a node's throughput divided by that is the
//! share its own work leaves (`scripts/api-ceiling.sh` prints these ratios).
//!
//! The server is set up as the node's (`server/src/serve.rs`): HTTP/1.1 with keep-alive and
//! hyper's tokio timer, `TCP_NODELAY`, one task per connection, the multi-threaded runtime
//! with a thread per core, and the node's allocator (mimalloc).

#![forbid(unsafe_code)]

use std::{net::SocketAddr, process::ExitCode};

use axum::{
    body::Bytes,
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Router,
};
use clap::Parser;
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    service::TowerToHyperService,
};
use tokio::net::TcpListener;

/// The node's allocator, so that the ceiling is not set by a slower one.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Serve fixed answers on the routes `ledger-load` uses: the API ceiling on this machine.
#[derive(Debug, Parser)]
#[command(name = "bare-axum", version)]
struct BareArgs {
    /// Address to listen on (`:0` picks a free port; the bound address is printed as
    /// `listening on http://ADDR`, as the node does).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:14265")]
    bind: SocketAddr,
}

/// A dev node's answer to `GET /api/core/v2/outputs/0x00…00` (the genesis output), 463 bytes.
const OUTPUT: &str = concat!(
    r#"{"metadata":{"blockId":"0x0000000000000000000000000000000000000000000000000000000000000000","#,
    r#""transactionId":"0x0000000000000000000000000000000000000000000000000000000000000000","#,
    r#""outputIndex":0,"isSpent":false,"milestoneIndexBooked":0,"milestoneTimestampBooked":0,"#,
    r#""ledgerIndex":3},"output":{"type":3,"amount":"1813620509061365","unlockConditions":"#,
    r#"[{"type":0,"address":{"type":0,"pubKeyHash":"#,
    r#""0xd18f653d669d2267974caac6ff6254effd5e6c0eeebe3e25944193fbfcafb9c0"}}]}}"#,
);

/// A dev node's answer to `GET /api/core/v2/tips`.
const TIPS: &str =
    r#"{"tips":["0xe712c5f830ad4125ed0102971f717d9bcf80eb1e7c52f08b95bc7a6965fdc9e4"]}"#;

/// The id every accepted block gets here (the answer's shape and size are what matter).
const BLOCK_ID: &str = "0x67bd1fec8dd51354ae90166d48757d2ac31d69a9acb8fd8c2f63557b9d20ad7a";

/// A dev node's `GET /api/core/v2/info`.
const INFO: &str = concat!(
    r#"{"name":"ledger-node","version":"0.1.0","status":{"isHealthy":true,"#,
    r#""latestMilestone":{"index":4,"timestamp":1795804167,"#,
    r#""milestoneId":"0x3b0922e79930c8e603aa1b39b591b02f9be6ff9be63b108f2f96f8f4e1e55bed"},"#,
    r#""confirmedMilestone":{"index":4,"timestamp":1795804167,"#,
    r#""milestoneId":"0x3b0922e79930c8e603aa1b39b591b02f9be6ff9be63b108f2f96f8f4e1e55bed"},"#,
    r#""pruningIndex":0},"supportedProtocolVersions":[2],"protocol":{"version":2,"#,
    r#""networkName":"ledger-dev","bech32Hrp":"rms","minPowScore":0,"belowMaxDepth":15,"#,
    r#""rentStructure":{"vByteCost":100,"vByteFactorData":1,"vByteFactorKey":10},"#,
    r#""tokenSupply":"1813620509061365"},"pendingProtocolParameters":[],"#,
    r#""baseToken":{"name":"IOTA","tickerSymbol":"IOTA","unit":"IOTA","subunit":"micro","#,
    r#""decimals":6,"useMetricPrefix":false},"metrics":{"blocksPerSecond":1.0000012890016614,"#,
    r#""referencedBlocksPerSecond":1.0000012890016614,"referencedRate":100.0},"#,
    r#""features":["pow"]}"#,
);

/// A dev node's answer to the richest addresses.
const RICHEST: &str = concat!(
    r#"{"top":[{"address":[{"type":0,"#,
    r#""pubKeyHash":"0xd18f653d669d2267974caac6ff6254effd5e6c0eeebe3e25944193fbfcafb9c0"}],"#,
    r#""balance":"1813620509061365"}],"ledgerIndex":4}"#,
);

/// An indexer answer with one output id.
const INDEXER: &str = concat!(
    r#"{"ledgerIndex":4,"pageSize":1000,"#,
    r#""items":["0x00000000000000000000000000000000000000000000000000000000000000000000"]}"#,
);

/// A fixed JSON `200`.
fn json(body: &'static str) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// `POST /api/core/v2/blocks`: reads the whole body, answers as the node does on success.
async fn submit(body: Bytes) -> Response {
    drop(body);
    (
        StatusCode::CREATED,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::LOCATION, HeaderValue::from_static(BLOCK_ID)),
        ],
        concat!(
            r#"{"blockId":""#,
            "0x67bd1fec8dd51354ae90166d48757d2ac31d69a9acb8fd8c2f63557b9d20ad7a",
            r#""}"#
        ),
    )
        .into_response()
}

/// The routes of the `ledger-load` scenarios, and those it reads at startup.
fn router() -> Router {
    Router::new()
        .route(
            "/api/core/v2/outputs/{output_id}",
            get(|| async { json(OUTPUT) }),
        )
        .route("/api/core/v2/blocks", post(submit))
        .route("/api/core/v2/tips", get(|| async { json(TIPS) }))
        .route("/api/core/v2/info", get(|| async { json(INFO) }))
        .route(
            "/api/explorer/v2/ledger/richest-addresses",
            get(|| async { json(RICHEST) }),
        )
        .route("/api/indexer/v1/outputs", get(|| async { json(INDEXER) }))
}

/// The accept loop of `server/src/serve.rs` without its limits and clocks.
async fn serve(listener: TcpListener) {
    let app = router();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).keep_alive(true);
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // E.g. no file descriptor left: pause instead of spinning.
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        tokio::spawn(async move {
            // A connection ends with an error for resets: nothing to report.
            let _ = connection.await;
        });
    }
}

fn main() -> ExitCode {
    let args = BareArgs::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("bare-axum: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let listener = match TcpListener::bind(args.bind).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("bare-axum: cannot listen on {}: {e}", args.bind);
                return ExitCode::FAILURE;
            }
        };
        match listener.local_addr() {
            Ok(addr) => println!("listening on http://{addr}"),
            Err(e) => {
                eprintln!("bare-axum: {e}");
                return ExitCode::FAILURE;
            }
        }
        serve(listener).await;
        ExitCode::SUCCESS
    })
}
