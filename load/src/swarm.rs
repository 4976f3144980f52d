//! `mqtt-swarm`: many MQTT-over-WebSocket subscribers of a node's event API
//! (docs/events.md §2: `ws://ADDR/api/mqtt/v1`, subprotocol `mqtt`, binary frames, MQTT
//! 3.1.1) and the delivery latency of probe blocks to the `blocks` subscribers.
//!
//! [`connect_all`] opens the connections (CONNECT, CONNACK, SUBSCRIBE, SUBACK on each);
//! [`measure`] then reads on every one of them while [`crate::probe`] posts probes, and
//! reports, over all deliveries of a created probe to a `blocks` subscriber, the time from
//! the probe's 201 to the delivery (0 when the delivery came first: events leave when a block
//! is stored, the 201 after its fsync).

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use bytes::{Buf, BytesMut};
use futures::{SinkExt, StreamExt};
use tokio::{net::TcpStream, sync::watch};
use tokio_tungstenite::{
    client_async_with_config,
    tungstenite::{
        client::IntoClientRequest, http::HeaderValue, protocol::WebSocketConfig, Message,
    },
    WebSocketStream,
};

use crate::{
    mqtt_client::{self, for_each_publish, Incoming},
    parse_url,
    probe::{run_probes, Probes},
    resolve_loopback,
    swarm_report::{report, Seen, SwarmReport},
    BenchError, Plan, Scenario,
};

/// How long opening one connection (WebSocket, CONNACK, SUBACK) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections being opened at once.
const CONNECTING_AT_ONCE: usize = 32;

/// The checked target of a swarm run: `url` must be plain `http://host[:port][/path]` with a
/// host that resolves to loopback addresses only (as for `ledger-load`); `token` is sent with
/// the probes.
///
/// # Errors
/// [`BenchError::Usage`] for any other URL.
pub async fn plan_for(url: &str, token: Option<String>) -> Result<Plan, BenchError> {
    let (host, port, authority, base) = parse_url(url)?;
    let addr = resolve_loopback(&host, port).await?;
    Ok(Plan {
        addr,
        authority,
        base,
        connections: 1,
        duration: Duration::ZERO,
        requests: None,
        rate: None,
        scenario: Scenario::SubmitJson,
        token,
    })
}

/// What one subscriber listens to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// The `blocks` topic: every new block; probe deliveries are timed.
    Blocks,
    /// One `outputs/unlock/address/<bech32>` topic.
    Address(String),
}

impl Role {
    fn topic(&self) -> String {
        match self {
            Self::Blocks => "blocks".to_owned(),
            Self::Address(a) => format!("outputs/unlock/address/{a}"),
        }
    }
}

/// One open, subscribed connection.
pub struct Subscriber {
    ws: WebSocketStream<TcpStream>,
    role: Role,
    /// Bytes read after the SUBACK (the start of the next packet, if any).
    buf: BytesMut,
}

/// Opens one connection per role, `CONNECTING_AT_ONCE` at a time.
///
/// # Errors
/// The first connection that failed, with its index and why: a run with fewer subscribers
/// than asked for would measure something else.
pub async fn connect_all(
    plan: &Plan,
    roles: Vec<Role>,
    keep_alive: u16,
) -> Result<Vec<Subscriber>, String> {
    let plan = Arc::new(plan.clone());
    let gate = Arc::new(tokio::sync::Semaphore::new(CONNECTING_AT_ONCE));
    let tasks: Vec<_> = roles
        .into_iter()
        .enumerate()
        .map(|(i, role)| {
            let plan = Arc::clone(&plan);
            let gate = Arc::clone(&gate);
            tokio::spawn(async move {
                let _permit = gate.acquire().await.map_err(|e| e.to_string())?;
                let id = format!("mqtt-swarm-{i}");
                tokio::time::timeout(CONNECT_TIMEOUT, open(&plan, &id, role, keep_alive))
                    .await
                    .map_err(|_| format!("no SUBACK within {CONNECT_TIMEOUT:?}"))?
                    .map_err(|e| format!("client {i}: {e}"))
            })
        })
        .collect();
    let mut subscribers = Vec::with_capacity(tasks.len());
    for t in tasks {
        subscribers.push(t.await.map_err(|e| e.to_string())??);
    }
    Ok(subscribers)
}

/// The client's WebSocket settings: a 16 KiB read buffer instead of tungstenite's 128 KiB,
/// which it zero-fills up to its capacity before every socket read (tungstenite 0.29
/// `FrameCodec::read_in`); with a block of a few hundred bytes per read that memset would be
/// most of a subscriber's work. Larger frames still fit: the buffer grows for them.
fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default().read_buffer_size(READ_BUFFER)
}

/// See [`ws_config`].
const READ_BUFFER: usize = 16 * 1024;

async fn open(plan: &Plan, id: &str, role: Role, keep_alive: u16) -> Result<Subscriber, String> {
    let stream = TcpStream::connect(plan.addr)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", plan.addr))?;
    let _ = stream.set_nodelay(true);
    let url = format!("ws://{}{}/api/mqtt/v1", plan.authority, plan.base);
    let mut request = url.into_client_request().map_err(|e| e.to_string())?;
    request
        .headers_mut()
        .insert("Sec-WebSocket-Protocol", HeaderValue::from_static("mqtt"));
    let (ws, _) = client_async_with_config(request, stream, Some(ws_config()))
        .await
        .map_err(|e| format!("WebSocket handshake: {e}"))?;
    let mut sub = Subscriber {
        ws,
        role,
        buf: BytesMut::new(),
    };
    let connect = mqtt_client::connect(id, keep_alive).ok_or("client id too long")?;
    sub.send(connect).await?;
    match sub.next_packet().await? {
        Incoming::ConnAck(0) => {}
        other => return Err(format!("CONNACK 0 expected, got {other:?}")),
    }
    let subscribe = mqtt_client::subscribe(1, &sub.role.topic()).ok_or("topic too long")?;
    sub.send(subscribe).await?;
    match sub.next_packet().await? {
        Incoming::SubAck(codes) if codes == [0] => Ok(sub),
        other => Err(format!("SUBACK [0] expected, got {other:?}")),
    }
}

impl Subscriber {
    async fn send(&mut self, packet: Vec<u8>) -> Result<(), String> {
        self.ws
            .send(Message::Binary(packet.into()))
            .await
            .map_err(|e| format!("send: {e}"))
    }

    /// The next packet, reading frames as needed.
    async fn next_packet(&mut self) -> Result<Incoming, String> {
        loop {
            if let Some(p) = mqtt_client::next_packet(&mut self.buf).map_err(|e| e.to_string())? {
                return Ok(p);
            }
            match self.ws.next().await {
                Some(Ok(Message::Binary(b))) => self.buf.extend_from_slice(&b),
                Some(Ok(Message::Close(_))) | None => return Err("closed by the node".into()),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.to_string()),
            }
        }
    }
}

/// Reads until `stop`, sending PINGREQ every half keep-alive (MQTT 3.1.1 §3.1.2.10).
async fn listen(mut sub: Subscriber, keep_alive: u16, mut stop: watch::Receiver<bool>) -> Seen {
    let mut seen = Seen::default();
    let timed = sub.role == Role::Blocks;
    let every = Duration::from_secs(u64::from(keep_alive.max(2)) / 2);
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            _ = stop.changed() => return seen,
            _ = ping.tick() => {
                if let Err(e) = sub.send(mqtt_client::pingreq()).await {
                    seen.lost = Some(e);
                    return seen;
                }
            }
            frame = sub.ws.next() => match frame {
                Some(Ok(Message::Binary(b))) => {
                    // The node's frames hold whole packets: they are read where they arrived,
                    // and only an incomplete tail waits in the buffer for the next frame.
                    let read = if sub.buf.is_empty() {
                        for_each_publish(&b, |p| seen.saw(timed, p))
                            .map(|used| sub.buf.extend_from_slice(&b[used..]))
                    } else {
                        sub.buf.extend_from_slice(&b);
                        for_each_publish(&sub.buf, |p| seen.saw(timed, p))
                            .map(|used| sub.buf.advance(used))
                    };
                    if let Err(e) = read {
                        seen.lost = Some(e.to_string());
                        return seen;
                    }
                }
                Some(Ok(Message::Close(_))) | None => {
                    seen.lost = Some("closed by the node".into());
                    return seen;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    seen.lost = Some(e.to_string());
                    return seen;
                }
            },
        }
    }
}

/// Listens on every subscriber while probes are posted at `probe_rate` a second for
/// `duration`, then for `drain` more for late deliveries.
pub async fn measure(
    plan: &Plan,
    subscribers: Vec<Subscriber>,
    keep_alive: u16,
    probe_rate: u32,
    duration: Duration,
    drain: Duration,
) -> SwarmReport {
    let total = subscribers.len();
    let blocks_subscribers = subscribers
        .iter()
        .filter(|s| s.role == Role::Blocks)
        .count();
    let (stop_tx, stop_rx) = watch::channel(false);
    let listeners: Vec<_> = subscribers
        .into_iter()
        .map(|s| {
            let timed = s.role == Role::Blocks;
            (timed, tokio::spawn(listen(s, keep_alive, stop_rx.clone())))
        })
        .collect();
    let start = Instant::now();
    let probes = probe_thread(plan.clone(), probe_rate, start + duration).await;
    let seconds = start.elapsed().as_secs_f64();
    tokio::time::sleep(drain).await;
    let _ = stop_tx.send(true);
    let mut seen = Vec::with_capacity(listeners.len());
    for (timed, l) in listeners {
        let s = l.await.unwrap_or_else(|e| Seen {
            lost: Some(format!("listener failed: {e}")),
            ..Seen::default()
        });
        seen.push((timed, s));
    }
    report(total, blocks_subscribers, seconds, &probes, &seen)
}

/// Runs the probes on their own thread and runtime (see [`crate::probe`]).
async fn probe_thread(plan: Plan, rate: u32, until: Instant) -> Probes {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let probes = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt.block_on(run_probes(&plan, rate, until)),
            Err(_) => Probes::default(),
        };
        let _ = tx.send(probes);
    });
    rx.await.unwrap_or_default()
}
