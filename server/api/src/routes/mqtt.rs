//! `GET /api/mqtt/v1`: the event API (TIP-28), MQTT 3.1 / 3.1.1 over a WebSocket answering
//! `Sec-WebSocket-Protocol: mqtt` (docs/events.md §2). Binary frames only (a text frame
//! closes the connection); packets may be split across frames or share one, both ways: what
//! is queued for a client when it is written goes out in one frame.
//!
//! One task per connection reads frames into its [`Session`] and writes what its queue holds.
//! The tasks run on the event API's own threads ([`EventIo`](crate::event_io::EventIo)), below the node's priority; the
//! current values sent on a subscription are read on the REST threads, which hold the
//! engine's locks only as long as the node's own work does.
//! It closes the connection when CONNECT does not come in time, when nothing arrives for
//! 1.5 × the keep-alive, when one write takes longer than the backlog time, or when the queue
//! has been dropping messages for that long (a slow client, hornet #1687).

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use axum::{
    extract::{
        ws::{close_code, CloseFrame, Message, WebSocket, WebSocketUpgrade},
        State,
    },
    response::{IntoResponse, Response},
};
use ledger_events::{metrics::DropReason, packet::publish_qos0, session::Session, topic::Filter};
use tokio::{
    runtime::Handle,
    time::{interval, sleep_until, timeout, Instant, MissedTickBehavior},
};

use crate::{error::ApiError, events::EventService, state::AppState};

/// How often a connection checks its deadlines.
const TICK: Duration = Duration::from_millis(500);
/// Longest wait for the final writes (answers before a close, the close frame).
const FINAL_WRITE: Duration = Duration::from_secs(1);

/// Bytes read from a client's socket at a time.
const READ_BUFFER: usize = 4096;

/// `GET /api/mqtt/v1`: upgrades to the MQTT WebSocket; 404 when the event API is off, 400
/// naming what is missing when the request is not a WebSocket upgrade.
pub async fn upgrade(
    State(state): State<AppState>,
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let Some((events, io)) = state.events.clone() else {
        return Err(ApiError::not_found(
            "the event API is turned off on this node",
        ));
    };
    let ws = ws.map_err(|e| {
        ApiError::bad_request(format!("/api/mqtt/v1 needs a WebSocket upgrade: {e}"))
    })?;
    let max = events.broker().config().max_packet;
    Ok(ws
        .protocols(["mqtt", "mqttv3.1"])
        // A frame or message may carry one whole packet (with its 5-byte header) at most.
        .max_frame_size(max + 5)
        .max_message_size(max + 5)
        // Clients send small packets (CONNECT, SUBSCRIBE, PINGREQ); tungstenite zero-fills
        // its whole read buffer (128 KiB by default) before each read, a tenth of the node's
        // CPU with a thousand subscribers (BENCHMARKS.md, session 14). Larger messages still
        // arrive whole: the buffer is only the read chunk.
        .read_buffer_size(READ_BUFFER)
        .on_upgrade(move |socket| async move {
            let rest = Handle::current();
            io.spawn(serve(socket, events, rest));
        })
        .into_response())
}

/// Runs one connection to its end; `rest` runs the reads of current values.
async fn serve(mut socket: WebSocket, events: Arc<dyn EventService>, rest: Handle) {
    let broker = Arc::clone(events.broker());
    let config = broker.config().clone();
    let mut session = Session::new(Arc::clone(&broker));
    let outbox = Arc::clone(session.outbox());
    let connect_by = Instant::now() + config.connect_timeout;
    let mut last_read = Instant::now();
    let mut last_write: Option<Instant> = None;
    let mut tick = interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let close = loop {
        tokio::select! {
            frame = socket.recv() => {
                let data = match frame {
                    Some(Ok(Message::Binary(data))) => data,
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    Some(Ok(Message::Text(_))) => {
                        break Some((close_code::UNSUPPORTED, "binary frames only"));
                    }
                    Some(Ok(Message::Close(_)) | Err(_)) | None => break None,
                };
                last_read = Instant::now();
                match session.receive(&data) {
                    Ok(granted) => {
                        let exact: Vec<_> = granted.into_iter().filter(|f| !f.is_wildcard()).collect();
                        if !exact.is_empty() {
                            send_current_values(&rest, &events, &mut session, exact).await;
                        }
                    }
                    Err(e) => {
                        tracing::debug!("MQTT connection closed: {e}");
                        flush(&mut socket, &mut session).await;
                        break Some((close_code::POLICY, "MQTT protocol error"));
                    }
                }
            }
            () = session.delivery().ready() => {
                // Wait for more to queue behind it if the last write was just now.
                if let Some(due) = last_write.map(paced_after).filter(|d| *d > Instant::now()) {
                    sleep_until(due).await;
                }
                let Some(frame) = session.delivery().next_frame(FRAME_BYTES) else { continue };
                // A full frame may leave more behind it: the next one goes without a pause.
                let full = frame.len() >= FRAME_BYTES;
                let written = timeout(config.backlog_timeout, socket.send(Message::Binary(frame))).await;
                last_write = (!full).then(Instant::now);
                match written {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => break None,
                    Err(_) => break Some((close_code::AGAIN, "client does not read")),
                }
            }
            () = outbox.stopped() => break Some((close_code::NORMAL, "client id connected again")),
            _ = tick.tick() => {
                if !session.connected() && Instant::now() >= connect_by {
                    break Some((close_code::POLICY, "no CONNECT"));
                }
                if session.keep_alive().is_some_and(|k| last_read.elapsed() > k) {
                    break Some((close_code::POLICY, "keep-alive expired"));
                }
                if session.delivery().backlogged_for().is_some_and(|t| t > config.backlog_timeout) {
                    break Some((close_code::AGAIN, "client does not read"));
                }
            }
        }
    };
    broker
        .metrics()
        .dropped_n(DropReason::Disconnected, session.delivery().pending());
    drop(session);
    if let Some((code, reason)) = close {
        let frame = CloseFrame {
            code,
            reason: reason.into(),
        };
        let _ = timeout(FINAL_WRITE, socket.send(Message::Close(Some(frame)))).await;
    }
}

/// Sends the current value of each exact filter just granted, read on the REST threads: a
/// read holds the engine's locks, and a thread of low priority could be kept off the CPU while
/// holding them (priority inversion against the submit path). Each value goes out after the
/// messages the client's feeds hold when it is queued (as from one queue per client).
async fn send_current_values(
    rest: &Handle,
    events: &Arc<dyn EventService>,
    session: &mut Session,
    filters: Vec<Filter>,
) {
    let service = Arc::clone(events);
    let read = rest.spawn(async move {
        filters
            .into_iter()
            .filter_map(|f| service.snapshot(f.as_str()).map(|payload| (f, payload)))
            .collect::<Vec<_>>()
    });
    // A failed read (the node shutting down) sends nothing.
    for (filter, payload) in read.await.unwrap_or_default() {
        let Some(packet) = publish_qos0(filter.as_str(), &payload) else {
            continue;
        };
        if session.delivery().queue_current(packet) {
            events.broker().metrics().published(filter.as_str(), 1);
        }
    }
}

/// Shortest time between two writes to one client: what is published meanwhile goes out in
/// the next frame. A lone message goes out at once; under a stream of them this turns one
/// wake-up, frame and system call per message into one per 5 ms per client, for at most that
/// much delivery latency (docs/decisions.md, "Events").
const WRITE_PACING: Duration = Duration::from_millis(5);

/// When a connection that wrote at `last` may write again: the first tick of a grid of
/// [`WRITE_PACING`] shared by all connections at least that long after `last`. Connections
/// under a stream of messages then wake together, one wake-up of the event API's threads per
/// tick instead of one per connection spread across it.
fn paced_after(last: Instant) -> Instant {
    static GRID: OnceLock<Instant> = OnceLock::new();
    let origin = *GRID.get_or_init(Instant::now);
    let earliest = last + WRITE_PACING;
    let step = WRITE_PACING.as_nanos();
    let since = earliest.saturating_duration_since(origin).as_nanos();
    let ticks = since.div_ceil(step);
    origin + Duration::from_nanos(u64::try_from(ticks * step).unwrap_or(u64::MAX))
}

/// Bytes of queued packets gathered into one frame (a frame may end up to one packet above;
/// MQTT 3.1.1 §6: a frame may carry several packets, clients read the frames as one byte
/// stream).
const FRAME_BYTES: usize = 256 * 1024;

/// Writes the answers queued (to the packet that ends the connection), for at most
/// [`FINAL_WRITE`].
async fn flush(socket: &mut WebSocket, session: &mut Session) {
    let until = Instant::now() + FINAL_WRITE;
    while let Some(packet) = session.delivery().try_answer() {
        tokio::select! {
            sent = socket.send(Message::Binary(packet)) => if sent.is_err() { return },
            () = sleep_until(until) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_paced_to_a_shared_grid() {
        let start = Instant::now();
        let first = paced_after(start);
        assert!(first >= start + WRITE_PACING && first < start + 2 * WRITE_PACING);
        // Connections that wrote at different moments of one tick wake at the same moment.
        for offset_ms in [1, 3, 4] {
            let last = first + Duration::from_millis(offset_ms);
            assert_eq!(paced_after(last), first + 2 * WRITE_PACING, "{offset_ms}");
        }
        // On a tick exactly: the next one.
        assert_eq!(paced_after(first), first + WRITE_PACING);
    }
}
