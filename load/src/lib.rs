//! `ledger-load`: a load tool for a running node's REST API, kept out of the node's binary
//! and its dependencies.
//!
//! It opens `--connections` HTTP/1.1 keep-alive connections (hyper's connection-level
//! client, one task per connection, one request in flight per connection) and sends the
//! requests of one [`Scenario`] back to back until `--duration` has passed or `--requests`
//! answers have been counted. It reports throughput, latency percentiles (HdrHistogram,
//! measured from sending the request to having read the whole answer) and the status-code
//! counts. Only loopback targets are accepted: it is a tool for one's own node.
//!
//! With `--rate N` the requests are started on a fixed schedule of `N` a second in total
//! over all connections instead of back to back (see [`Pacer`]): one shared ticket
//! dispenser hands out start times `1/N` apart to whichever connection is free next. A
//! start time that no connection was free to take is dropped, not made up later: after a
//! stall (the node slow to answer on every connection) the schedule restarts from the
//! moment a connection is free again (tokio's `MissedTickBehavior::Delay`), so the load never
//! bursts above `N` to catch up. The report gives the rate achieved (`achievedRate`).
//!
//! The crate's second binary, `bare-axum` (`src/bin/bare-axum.rs`), serves the routes of the
//! scenarios with axum, tokio and hyper alone and fixed answers of the node's size and shape:
//! the ceiling a node's API is compared with (`scripts/api-ceiling.sh OLD_BIN NEW_BIN`).
//!
//! The third, `mqtt-swarm` (`src/bin/mqtt-swarm.rs`, [`swarm`]), is a swarm of MQTT
//! subscribers on the node's event API that times the delivery of probe blocks
//! (`scripts/bench-mqtt.py`).

#![forbid(unsafe_code)]
#![deny(missing_docs, unreachable_pub)]

pub mod mqtt_client;
pub mod probe;
pub mod swarm;
pub mod swarm_report;
pub mod tool_args;

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::{client::conn::http1, header, Method, Request, Uri};
use hyper_util::rt::TokioIo;
use ledger_codec::{
    stardust::{Block, Payload, TaggedData, PROTOCOL_VERSION},
    types::{parse_hex_array, Bytes as WireBytes},
    Codec,
};
use serde::Serialize;
use tokio::{net::TcpStream, sync::watch};

/// Longest run allowed by `--duration`, and the bound of a `--requests` run without one.
pub const MAX_DURATION: Duration = Duration::from_secs(600);
/// How often the tips for `submit-binary` are fetched again.
pub const TIPS_REFRESH: Duration = Duration::from_millis(200);
/// How long after the end of the run an answer may still arrive before it is an error.
const GRACE: Duration = Duration::from_secs(5);
/// Pause before reconnecting after a failed connect, so a dead target is not spun on.
const RECONNECT_PAUSE: Duration = Duration::from_millis(20);
/// Largest latency the histogram holds (larger ones are recorded as this).
const MAX_LATENCY_NS: u64 = 120_000_000_000;

/// The output whose id is 34 zero bytes: the dev genesis output.
pub const GENESIS_OUTPUT_PATH: &str =
    "/api/core/v2/outputs/0x00000000000000000000000000000000000000000000000000000000000000000000";
/// The richest-addresses route with `top=100`.
pub const RICHEST_PATH: &str = "/api/explorer/v2/ledger/richest-addresses?top=100";
/// Block submission.
pub const BLOCKS_PATH: &str = "/api/core/v2/blocks";
/// Tips for the parents of binary blocks.
pub const TIPS_PATH: &str = "/api/core/v2/tips";
/// Media type of v2 binary blocks.
pub const BINARY_MEDIA: &str = "application/vnd.iota.serializer-v1";

/// What the load consists of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// POST tagged-data blocks as binary, parents from `GET /api/core/v2/tips`, nonce 0.
    SubmitBinary,
    /// POST tagged-data blocks as JSON without parents and nonce (the node fills them).
    SubmitJson,
    /// POST tagged-data blocks as binary on the latest `/tips` only (no chaining), nonce 0:
    /// every block stays a tip until a milestone, the widest tip pool a client can make.
    SubmitWide,
    /// GET the dev genesis output (`/api/core/v2/outputs/0x00…00`).
    GetOutput,
    /// GET `/api/explorer/v2/ledger/richest-addresses?top=100`.
    Richest,
    /// GET `/api/indexer/v1/outputs?unlockableByAddress=…`, cycling over the
    /// [`INDEXER_ADDRESSES`] addresses of [`indexer_address`] (the ones
    /// `scripts/bench-indexer-genesis.py` fills with outputs).
    IndexerAddress,
}

/// Addresses the `indexer-address` scenario asks for.
pub const INDEXER_ADDRESSES: u64 = 100_000;

/// Ed25519 address `i` of the indexer scenario: `pubKeyHash` = `i` as 8 bytes little-endian,
/// then zeros (the same formula as `scripts/bench-indexer-genesis.py`), in bech32 with `rms`.
pub fn indexer_address(i: u64) -> String {
    let mut key_hash = [0u8; 32];
    key_hash[..8].copy_from_slice(&i.to_le_bytes());
    ledger_codec::stardust::Address::Ed25519(ledger_codec::types::Hash32::owned(key_hash))
        .to_bech32("rms")
        .unwrap_or_default()
}

/// A checked run: where to, how much, what.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The (loopback) address connected to.
    pub addr: SocketAddr,
    /// `Host` header value.
    pub authority: String,
    /// Path prefix of the API (empty for a URL without path).
    pub base: String,
    /// Concurrent connections.
    pub connections: usize,
    /// Time limit of the run.
    pub duration: Duration,
    /// Answers to count before stopping, if bounded by count.
    pub requests: Option<u64>,
    /// Requests started per second over all connections; `None`: back to back.
    pub rate: Option<u32>,
    /// The load.
    pub scenario: Scenario,
    /// `Authorization: Bearer` token, if any.
    pub token: Option<String>,
}

/// Why the tool could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BenchError {
    /// Bad arguments, e.g. a non-loopback URL (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The target could not be used, e.g. no tips to build blocks on (exit code 1).
    #[error("{0}")]
    Target(String),
}

impl BenchError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => 2,
            Self::Target(_) => 1,
        }
    }
}

/// Splits and checks `url`: `http` scheme, a host, optional port (default 80) and path
/// prefix. Returns (host, port, authority, base path).
///
/// # Errors
/// A URL that is not plain `http://host[:port][/path]`.
pub fn parse_url(url: &str) -> Result<(String, u16, String, String), BenchError> {
    let usage = |m: &str| BenchError::Usage(format!("--url {url:?}: {m}"));
    let uri: Uri = url.parse().map_err(|e| usage(&format!("not a URL: {e}")))?;
    match uri.scheme_str() {
        Some("http") => {}
        Some(other) => return Err(usage(&format!("scheme {other} is not supported, use http"))),
        None => return Err(usage("no scheme, use http://host:port")),
    }
    let authority = uri
        .authority()
        .ok_or_else(|| usage("no host"))?
        .as_str()
        .to_owned();
    if authority.contains('@') {
        return Err(usage("user info is not supported"));
    }
    let host = uri
        .host()
        .ok_or_else(|| usage("no host"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = uri.port_u16().unwrap_or(80);
    if uri.query().is_some() {
        return Err(usage("a query is not supported"));
    }
    let base = uri.path().trim_end_matches('/').to_owned();
    Ok((host, port, authority, base))
}

/// Resolves `host` and accepts it only if every address it has is a loopback address.
///
/// # Errors
/// Resolution failure, or any non-loopback address.
pub async fn resolve_loopback(host: &str, port: u16) -> Result<SocketAddr, BenchError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| BenchError::Usage(format!("cannot resolve {host}: {e}")))?
        .collect();
    match addrs.iter().find(|a| !a.ip().is_loopback()) {
        Some(a) => Err(BenchError::Usage(format!(
            "refusing to load {host} ({}): bench-api only targets loopback addresses",
            a.ip()
        ))),
        None => addrs
            .first()
            .copied()
            .ok_or_else(|| BenchError::Usage(format!("{host} has no address"))),
    }
}

/// The schedule of a run with `--rate`: start times `period` apart, handed out one at a time
/// to whichever connection asks next, as offsets in nanoseconds from the start of the run.
///
/// A connection asks when it is free to send; it gets the next start time of the schedule,
/// or now if that time has already passed without a taker. In the latter case the schedule
/// goes on from now (`MissedTickBehavior::Delay`): start times missed while every connection
/// was waiting for an answer are dropped, so no two start times are ever less than `period`
/// apart and the rate never exceeds the target, not even to catch up after a stall. While
/// some connection is free the schedule is kept exactly: free connections hold the next start
/// times ahead of time and sleep until them.
#[derive(Debug)]
pub struct Pacer {
    period_ns: u64,
    /// The next start time not handed out yet.
    next_ns: AtomicU64,
}

impl Pacer {
    /// A schedule of `rate` starts per second (at least 1), the first at offset 0.
    pub fn new(rate: u32) -> Self {
        Self {
            period_ns: 1_000_000_000 / u64::from(rate.max(1)),
            next_ns: AtomicU64::new(0),
        }
    }

    /// Time between two start times, in nanoseconds.
    pub fn period_ns(&self) -> u64 {
        self.period_ns
    }

    /// Takes the next start time for a connection that is free at offset `now_ns`: the next
    /// one of the schedule, or `now_ns` if that has passed (then the schedule goes on from
    /// `now_ns`).
    pub fn take(&self, now_ns: u64) -> u64 {
        let mut slot = 0;
        // The closure always returns `Some`, so this never fails; the slot is set by the
        // attempt that succeeded.
        let _ = self
            .next_ns
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |next| {
                slot = next.max(now_ns);
                Some(slot.saturating_add(self.period_ns))
            });
        slot
    }
}

/// Everything the workers share.
struct Shared {
    plan: Plan,
    start: Instant,
    deadline: Instant,
    /// Requests handed out so far (only counted when bounded by count).
    issued: AtomicU64,
    /// The schedule, with `--rate`.
    pacer: Option<Pacer>,
    tips: Option<watch::Receiver<Arc<Vec<[u8; 32]>>>>,
}

impl Shared {
    /// May another request be sent?
    fn ticket(&self) -> bool {
        if Instant::now() >= self.deadline {
            return false;
        }
        match self.plan.requests {
            Some(n) => self.issued.fetch_add(1, Ordering::Relaxed) < n,
            None => true,
        }
    }

    /// Has every request of a count-bounded run been handed out?
    fn all_issued(&self) -> bool {
        self.plan
            .requests
            .is_some_and(|n| self.issued.load(Ordering::Relaxed) >= n)
    }

    /// With `--rate`, waits for this connection's start time. Returns the start time (its
    /// scheduled time with a rate, else now), or `None` if it falls after the deadline.
    async fn wait_for_start(&self) -> Option<Instant> {
        let Some(pacer) = &self.pacer else {
            return Some(Instant::now());
        };
        let now_ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let at = self.start + Duration::from_nanos(pacer.take(now_ns));
        if at >= self.deadline {
            return None;
        }
        if at > Instant::now() {
            tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
        }
        Some(at)
    }

    /// The next request of `worker`; for `submit-binary` also the id of the block sent.
    /// `last` is the worker's last accepted block, which a binary block approves too.
    fn request(
        &self,
        worker: u64,
        seq: u64,
        last: Option<[u8; 32]>,
    ) -> (Request<Full<Bytes>>, Option<[u8; 32]>) {
        let plan = &self.plan;
        let mut sent_id = None;
        let indexer_path;
        let (method, path, media, body) = match plan.scenario {
            Scenario::GetOutput => (Method::GET, GENESIS_OUTPUT_PATH, None, Bytes::new()),
            Scenario::Richest => (Method::GET, RICHEST_PATH, None, Bytes::new()),
            Scenario::IndexerAddress => {
                // Spread over the addresses without two workers walking the same sequence.
                let i = worker
                    .wrapping_mul(7_919)
                    .wrapping_add(seq.wrapping_mul(104_729))
                    % INDEXER_ADDRESSES;
                indexer_path = format!(
                    "/api/indexer/v1/outputs?unlockableByAddress={}",
                    indexer_address(i)
                );
                (Method::GET, indexer_path.as_str(), None, Bytes::new())
            }
            Scenario::SubmitJson => (
                Method::POST,
                BLOCKS_PATH,
                Some("application/json"),
                Bytes::from(json_block(worker, seq)),
            ),
            Scenario::SubmitBinary | Scenario::SubmitWide => {
                let tips = self
                    .tips
                    .as_ref()
                    .map(|rx| Arc::clone(&*rx.borrow()))
                    .unwrap_or_default();
                let chain = last.filter(|_| plan.scenario == Scenario::SubmitBinary);
                // At most 8 parents and a short tag always have a wire form; were it not so,
                // the empty body would be refused by the node and counted as refused.
                let bytes = binary_block(&parents(&tips, chain), worker, seq).unwrap_or_default();
                sent_id = Some(Block::id_of(&bytes));
                (
                    Method::POST,
                    BLOCKS_PATH,
                    Some(BINARY_MEDIA),
                    Bytes::from(bytes),
                )
            }
        };
        let mut b = Request::builder()
            .method(method)
            .uri(format!("{}{path}", plan.base))
            .header(header::HOST, plan.authority.as_str());
        if let Some(media) = media {
            b = b.header(header::CONTENT_TYPE, media);
        }
        if let Some(token) = &plan.token {
            b = b.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        // The parts above are all valid header values and paths (checked URL, fixed strings).
        (b.body(Full::new(body)).unwrap_or_default(), sent_id)
    }
}

/// Parents of a binary load block: the tips (at most 7) and the worker's last accepted
/// block, sorted and unique. Approving its own last block keeps each connection's blocks a
/// chain, so the node's tip pool stays about as large as the number of connections instead
/// of growing by every block sent on the same tips.
pub fn parents(tips: &[[u8; 32]], last: Option<[u8; 32]>) -> Vec<[u8; 32]> {
    let mut p: Vec<[u8; 32]> = tips.iter().take(7).copied().collect();
    p.extend(last);
    p.sort_unstable();
    p.dedup();
    p
}

/// The tag of a load block: unique per worker and sequence number, so no two blocks of a
/// run are the same.
pub fn tag(worker: u64, seq: u64) -> Vec<u8> {
    let mut t = b"bench-api:".to_vec();
    t.extend_from_slice(&worker.to_le_bytes());
    t.extend_from_slice(&seq.to_le_bytes());
    t
}

const DATA: &[u8] = b"ledger-load";

/// A tagged-data block on `tips` (sorted, at most 8) with nonce 0, as bytes.
///
/// # Errors
/// More tips than a block's parent count can hold.
pub fn binary_block(
    tips: &[[u8; 32]],
    worker: u64,
    seq: u64,
) -> Result<Vec<u8>, ledger_codec::Error> {
    Block {
        protocol_version: PROTOCOL_VERSION,
        parents: tips.to_vec().into(),
        payload: Some(Payload::TaggedData(TaggedData {
            tag: WireBytes(tag(worker, seq).into()),
            data: WireBytes(DATA.into()),
        })),
        nonce: 0,
    }
    .to_bytes()
}

/// A tagged-data block as JSON without parents and nonce.
pub fn json_block(worker: u64, seq: u64) -> String {
    serde_json::json!({
        "protocolVersion": PROTOCOL_VERSION,
        "payload": {
            "type": TaggedData::KIND,
            "tag": ledger_codec::types::to_hex(&tag(worker, seq)),
            "data": ledger_codec::types::to_hex(DATA),
        }
    })
    .to_string()
}

/// Parses a tips answer `{"tips": ["0x…", …]}` into sorted, unique parents (at most 8).
///
/// # Errors
/// Not that shape, or no tips.
pub fn parse_tips(body: &[u8]) -> Result<Vec<[u8; 32]>, String> {
    #[derive(serde::Deserialize)]
    struct Tips {
        tips: Vec<String>,
    }
    let t: Tips = serde_json::from_slice(body).map_err(|e| format!("bad tips answer: {e}"))?;
    let mut tips = t
        .tips
        .iter()
        .map(|s| parse_hex_array::<32>(s).map_err(|e| format!("bad tip: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    tips.sort_unstable();
    tips.dedup();
    tips.truncate(8);
    if tips.is_empty() {
        return Err("the node has no tips".into());
    }
    Ok(tips)
}

/// One GET over a fresh connection: (status, body).
async fn get_once(plan: &Plan, path: &str) -> Result<(u16, Bytes), String> {
    let stream = TcpStream::connect(plan.addr)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", plan.addr))?;
    let (mut sender, conn) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    let driver = tokio::spawn(conn);
    let mut b = Request::builder()
        .uri(format!("{}{path}", plan.base))
        .header(header::HOST, plan.authority.as_str());
    if let Some(token) = &plan.token {
        b = b.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let req = b.body(Full::new(Bytes::new())).map_err(|e| e.to_string())?;
    let answer = async {
        let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok((status, body))
    };
    let out = tokio::time::timeout(GRACE, answer)
        .await
        .map_err(|_| format!("GET {path}: no answer within {GRACE:?}"))?;
    driver.abort();
    out
}

async fn fetch_tips(plan: &Plan) -> Result<Vec<[u8; 32]>, String> {
    let (status, body) = get_once(plan, TIPS_PATH).await?;
    if status != 200 {
        return Err(format!(
            "GET {TIPS_PATH} answered {status}: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    parse_tips(&body)
}

/// What one connection task measured.
struct WorkerStats {
    latency: Histogram<u64>,
    status: BTreeMap<u16, u64>,
    /// The start of the first answer body of each status other than 2xx.
    samples: BTreeMap<u16, String>,
    errors: u64,
    /// Requests sent.
    started: u64,
    /// When the last one was started (its scheduled time with `--rate`).
    last_start: Option<Instant>,
}

/// How much of an error answer is kept as its sample.
const SAMPLE_LEN: usize = 300;

impl WorkerStats {
    fn new() -> Self {
        Self {
            // Constant, valid bounds (1 ns ..= 120 s, 3 significant digits).
            latency: Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
                .expect("valid histogram bounds"),
            status: BTreeMap::new(),
            samples: BTreeMap::new(),
            errors: 0,
            started: 0,
            last_start: None,
        }
    }
}

async fn worker(id: u64, shared: Arc<Shared>) -> WorkerStats {
    let mut stats = WorkerStats::new();
    let mut seq = 0u64;
    let mut last = None;
    let end = tokio::time::Instant::from_std(shared.deadline + GRACE);
    'connect: while Instant::now() < shared.deadline {
        let stream = match TcpStream::connect(shared.plan.addr).await {
            Ok(s) => s,
            Err(_) => {
                stats.errors += 1;
                tokio::time::sleep(RECONNECT_PAUSE).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (mut sender, conn) = match http1::handshake(TokioIo::new(stream)).await {
            Ok(x) => x,
            Err(_) => {
                stats.errors += 1;
                continue;
            }
        };
        let driver = tokio::spawn(conn);
        loop {
            if sender.ready().await.is_err() {
                driver.abort();
                continue 'connect;
            }
            if !shared.ticket() {
                driver.abort();
                break 'connect;
            }
            let Some(scheduled) = shared.wait_for_start().await else {
                driver.abort();
                break 'connect;
            };
            let (req, sent_id) = shared.request(id, seq, last);
            seq += 1;
            stats.started += 1;
            stats.last_start = stats.last_start.max(Some(scheduled));
            // Latency is measured from the actual send, not from the scheduled time: a start
            // time nobody was free to take is dropped rather than queued (see `Pacer`).
            let start = Instant::now();
            let exchange = async {
                let resp = sender.send_request(req).await?;
                let status = resp.status().as_u16();
                let body = resp.into_body().collect().await?.to_bytes();
                Ok::<_, hyper::Error>((status, body))
            };
            match tokio::time::timeout_at(end, exchange).await {
                Ok(Ok((status, body))) => {
                    let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    stats.latency.saturating_record(ns.max(1));
                    *stats.status.entry(status).or_default() += 1;
                    if (200..300).contains(&status) {
                        if sent_id.is_some() {
                            last = sent_id;
                        }
                    } else {
                        stats.samples.entry(status).or_insert_with(|| {
                            let end = body.len().min(SAMPLE_LEN);
                            String::from_utf8_lossy(body.get(..end).unwrap_or_default())
                                .into_owned()
                        });
                    }
                }
                Ok(Err(_)) | Err(_) => {
                    stats.errors += 1;
                    driver.abort();
                    continue 'connect;
                }
            }
        }
    }
    stats
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl Latency {
    /// The percentiles of `h`, whose values count `per_ms` units a millisecond.
    pub fn of(h: &Histogram<u64>, per_ms: f64) -> Self {
        let ms = |v: u64| v as f64 / per_ms;
        Self {
            mean: h.mean() / per_ms,
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
        }
    }
}

impl std::fmt::Display for Latency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "mean {:.3} ms  p50 {:.3} ms  p90 {:.3} ms  p99 {:.3} ms  max {:.3} ms",
            self.mean, self.p50, self.p90, self.p99, self.max
        )
    }
}

/// The result of a run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The scenario run.
    pub scenario: Scenario,
    /// The target URL.
    pub url: String,
    /// Concurrent connections.
    pub connections: usize,
    /// The target rate (`--rate`, requests started per second); `None`: back to back.
    pub rate: Option<u32>,
    /// Wall time of the run in seconds.
    pub seconds: f64,
    /// Requests sent (answered, failed, or cut off by the end of the run).
    pub started: u64,
    /// Requests started per second while sending: `started` over the run's duration, or, for a
    /// run that ended by `--requests`, over the time up to the last start (plus one period of
    /// `--rate`). With `--rate` it is at most the target.
    pub achieved_rate: f64,
    /// Answers received (any status).
    pub requests: u64,
    /// Connections or exchanges that failed without an answer.
    pub errors: u64,
    /// Answers per second.
    pub throughput: f64,
    /// Latency of the answers, in milliseconds.
    pub latency_ms: Latency,
    /// Answers per status code.
    pub status: BTreeMap<u16, u64>,
    /// For each status other than 2xx, the start of one answer's body.
    pub samples: BTreeMap<u16, String>,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scenario = serde_json::to_value(self.scenario)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        writeln!(
            f,
            "scenario {scenario} against {}: {} connections, {:.2} s",
            self.url, self.connections, self.seconds
        )?;
        writeln!(
            f,
            "requests   {} answered, {} failed without answer",
            self.requests, self.errors
        )?;
        writeln!(f, "throughput {:.0} req/s", self.throughput)?;
        let target = match self.rate {
            Some(r) => format!("target {r} req/s"),
            None => "target unlimited".to_owned(),
        };
        writeln!(
            f,
            "rate       {target}, achieved {:.1} req/s ({} started)",
            self.achieved_rate, self.started
        )?;
        writeln!(f, "latency    {}", self.latency_ms)?;
        let codes: Vec<String> = self
            .status
            .iter()
            .map(|(code, n)| format!("{code}: {n}"))
            .collect();
        write!(f, "status     {}", codes.join(", "))?;
        for (code, body) in &self.samples {
            write!(f, "\n  {code} e.g. {}", body.trim())?;
        }
        Ok(())
    }
}

/// Checks the target and runs the load.
///
/// # Errors
/// A non-loopback or malformed URL ([`BenchError::Usage`]), or no tips for
/// `submit-binary` ([`BenchError::Target`]).
pub async fn run(
    url: &str,
    connections: usize,
    duration: Option<Duration>,
    requests: Option<u64>,
    scenario: Scenario,
    token: Option<String>,
) -> Result<Report, BenchError> {
    run_at_rate(url, connections, duration, requests, None, scenario, token).await
}

/// [`run`] with `--rate`: `rate` requests started per second in total over all connections
/// (see [`Pacer`]), or back to back for `None`.
///
/// # Errors
/// As [`run`]; also a rate of 0 ([`BenchError::Usage`]).
pub async fn run_at_rate(
    url: &str,
    connections: usize,
    duration: Option<Duration>,
    requests: Option<u64>,
    rate: Option<u32>,
    scenario: Scenario,
    token: Option<String>,
) -> Result<Report, BenchError> {
    if connections == 0 {
        return Err(BenchError::Usage("--connections must be at least 1".into()));
    }
    if rate == Some(0) {
        return Err(BenchError::Usage("--rate must be at least 1".into()));
    }
    let duration = match (duration, requests) {
        (Some(d), _) if d > MAX_DURATION || d.is_zero() => {
            return Err(BenchError::Usage(format!(
                "--duration must be 1..={} seconds",
                MAX_DURATION.as_secs()
            )))
        }
        (Some(d), _) => d,
        (None, Some(_)) => MAX_DURATION,
        (None, None) => Duration::from_secs(10),
    };
    let (host, port, authority, base) = parse_url(url)?;
    let addr = resolve_loopback(&host, port).await?;
    let plan = Plan {
        addr,
        authority,
        base,
        connections,
        duration,
        requests,
        rate,
        scenario,
        token,
    };
    let (tips, refresher) = if matches!(scenario, Scenario::SubmitBinary | Scenario::SubmitWide) {
        let first = fetch_tips(&plan).await.map_err(BenchError::Target)?;
        let (tx, rx) = watch::channel(Arc::new(first));
        let p = plan.clone();
        let refresher = tokio::spawn(async move {
            loop {
                tokio::time::sleep(TIPS_REFRESH).await;
                // A failed refresh keeps the previous tips.
                if let Ok(t) = fetch_tips(&p).await {
                    if tx.send(Arc::new(t)).is_err() {
                        break;
                    }
                }
            }
        });
        (Some(rx), Some(refresher))
    } else {
        (None, None)
    };
    let start = Instant::now();
    let shared = Arc::new(Shared {
        plan,
        start,
        deadline: start + duration,
        issued: AtomicU64::new(0),
        pacer: rate.map(Pacer::new),
        tips,
    });
    let tasks: Vec<_> = (0..connections as u64)
        .map(|i| tokio::spawn(worker(i, Arc::clone(&shared))))
        .collect();
    let mut total = WorkerStats::new();
    for t in tasks {
        // A worker does not panic; a join error is counted like a failed exchange.
        match t.await {
            Ok(s) => {
                let _ = total.latency.add(&s.latency);
                for (code, n) in s.status {
                    *total.status.entry(code).or_default() += n;
                }
                for (code, body) in s.samples {
                    total.samples.entry(code).or_insert(body);
                }
                total.errors += s.errors;
                total.started += s.started;
                total.last_start = total.last_start.max(s.last_start);
            }
            Err(_) => total.errors += 1,
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    if let Some(r) = refresher {
        r.abort();
    }
    // The time spent sending: the whole duration, unless the run ended by its count.
    let sending = match total.last_start {
        Some(last) if shared.all_issued() => {
            let period = shared
                .pacer
                .as_ref()
                .map_or(Duration::ZERO, |p| Duration::from_nanos(p.period_ns()));
            (last - start + period).min(duration)
        }
        _ => duration,
    }
    .as_secs_f64();
    let h = &total.latency;
    let answered = h.len();
    Ok(Report {
        scenario,
        url: url.to_owned(),
        connections,
        rate,
        seconds,
        started: total.started,
        achieved_rate: if sending > 0.0 {
            total.started as f64 / sending
        } else {
            0.0
        },
        requests: answered,
        errors: total.errors,
        throughput: if seconds > 0.0 {
            answered as f64 / seconds
        } else {
            0.0
        },
        latency_ms: Latency::of(h, 1e6),
        status: total.status,
        samples: total.samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked() {
        let (host, port, authority, base) = parse_url("http://127.0.0.1:14265").unwrap();
        assert_eq!(
            (host.as_str(), port, authority.as_str(), base.as_str()),
            ("127.0.0.1", 14265, "127.0.0.1:14265", "")
        );
        let (host, port, _, base) = parse_url("http://[::1]/node/").unwrap();
        assert_eq!((host.as_str(), port, base.as_str()), ("::1", 80, "/node"));
        for bad in [
            "https://127.0.0.1",
            "127.0.0.1:14265",
            "http://u:p@127.0.0.1",
            "http://127.0.0.1/?x=1",
            "not a url",
        ] {
            assert!(
                matches!(parse_url(bad), Err(BenchError::Usage(_))),
                "{bad} accepted"
            );
        }
    }

    #[tokio::test]
    async fn only_loopback_resolves() {
        assert!(resolve_loopback("127.0.0.1", 1).await.is_ok());
        assert!(resolve_loopback("::1", 1).await.is_ok());
        let e = resolve_loopback("192.0.2.1", 1).await.unwrap_err();
        assert!(e.to_string().contains("loopback"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn the_pacer_keeps_its_schedule_and_never_catches_up() {
        let ms = 1_000_000;
        let p = Pacer::new(1000);
        assert_eq!(p.period_ns(), ms);
        // Free connections asking early get the schedule's times, one period apart.
        assert_eq!(p.take(0), 0);
        assert_eq!(p.take(0), ms);
        assert_eq!(p.take(ms / 2), 2 * ms);
        // Asked late (nobody was free at 3 ms..10 ms): now, and the missed times are gone.
        assert_eq!(p.take(10 * ms + 7), 10 * ms + 7);
        assert_eq!(p.take(10 * ms + 8), 11 * ms + 7);
        assert_eq!(p.take(10 * ms + 9), 12 * ms + 7);
        // Any run of starts is at most one per period: n starts span at least n - 1 periods.
        let p = Pacer::new(2000);
        let mut now = 0;
        let mut starts = Vec::new();
        for i in 0..1000u64 {
            // Connections free at irregular moments, with stalls now and then.
            now += if i % 97 == 0 { 5 * ms } else { i % 3 * 100_000 };
            starts.push(p.take(now));
        }
        assert!(starts.windows(2).all(|w| w[1] >= w[0] + p.period_ns()));
        assert_eq!(Pacer::new(0).period_ns(), 1_000_000_000);
    }

    #[test]
    fn load_blocks_are_valid_and_unique() {
        let tips = parse_tips(br#"{"tips":["0x0202020202020202020202020202020202020202020202020202020202020202","0x0101010101010101010101010101010101010101010101010101010101010101","0x0101010101010101010101010101010101010101010101010101010101010101"]}"#).unwrap();
        assert_eq!(tips, vec![[1; 32], [2; 32]]);
        assert_eq!(parents(&[[5; 32]; 0], Some([4; 32])), vec![[4; 32]]);
        let many: Vec<[u8; 32]> = (1..=8).map(|i| [i; 32]).collect();
        let p = parents(&many, Some([0; 32]));
        assert_eq!(p.len(), 8);
        assert_eq!(p.first(), Some(&[0; 32]));
        assert_eq!(parents(&tips, Some([1; 32])), tips);
        let a = binary_block(&tips, 0, 0).unwrap();
        let b = binary_block(&tips, 0, 1).unwrap();
        assert_ne!(a, b);
        let block = Block::decode(&a).unwrap();
        assert_eq!(block.nonce, 0);
        assert_eq!(block.parents.as_ref(), &tips[..]);
        let json: serde_json::Value = serde_json::from_str(&json_block(3, 4)).unwrap();
        assert!(json.get("parents").is_none() && json.get("nonce").is_none());
        assert_eq!(json["payload"]["type"], 5);
        assert!(parse_tips(br#"{"tips":[]}"#).is_err());
        assert!(parse_tips(b"nonsense").is_err());
    }
}
