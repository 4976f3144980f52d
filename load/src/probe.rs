//! Probe blocks for `mqtt-swarm`: JSON tagged-data blocks posted at a fixed rate, each with a
//! unique tag, and the moment each one's `201 Created` arrived.
//!
//! The probe runs on its own thread and single-threaded runtime, so the time of a 201 is
//! taken as soon as its headers are read and is not held back by the subscriber tasks.

use std::{
    collections::HashMap,
    sync::LazyLock,
    time::{Duration, Instant},
};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{client::conn::http1, header, Method, Request};
use hyper_util::rt::TokioIo;
use ledger_codec::{
    stardust::{Block, Payload, TaggedData, PROTOCOL_VERSION},
    types::to_hex,
    Codec,
};
use memchr::memmem;
use tokio::net::TcpStream;

use crate::{Plan, BLOCKS_PATH};

/// The start of every probe's tag; the probe's sequence number follows as 8 bytes
/// little-endian.
pub const PROBE_TAG: &[u8] = b"mqtt-swarm:probe:";

/// How long one probe may take before it counts as failed.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The tag of probe `seq`.
pub fn probe_tag(seq: u64) -> Vec<u8> {
    let mut t = PROBE_TAG.to_vec();
    t.extend_from_slice(&seq.to_le_bytes());
    t
}

/// The sequence number of a probe block given as its wire bytes (a `blocks` payload), or
/// `None` for any other block. Only a block holding the tag's bytes is decoded: a `blocks`
/// subscriber of the swarm reads every block the node stores, and decoding each one would
/// make the swarm, which shares the machine with the node, the larger consumer of CPU.
pub fn probe_seq(block: &[u8]) -> Option<u64> {
    static TAG: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(PROBE_TAG));
    TAG.find(block)?;
    let block = Block::decode(block).ok()?;
    let Some(Payload::TaggedData(data)) = block.payload else {
        return None;
    };
    let seq = data.tag.0.strip_prefix(PROBE_TAG)?;
    Some(u64::from_le_bytes(seq.try_into().ok()?))
}

/// The JSON body of probe `seq` (the node fills in parents and nonce).
pub fn probe_block(seq: u64) -> String {
    serde_json::json!({
        "protocolVersion": PROTOCOL_VERSION,
        "payload": {
            "type": TaggedData::KIND,
            "tag": to_hex(&probe_tag(seq)),
            "data": to_hex(b"probe"),
        }
    })
    .to_string()
}

/// What the probe saw.
#[derive(Debug, Default)]
pub struct Probes {
    /// When each created probe's 201 arrived, by sequence number.
    pub created: HashMap<u64, Instant>,
    /// Probes posted.
    pub sent: u64,
    /// Probes answered with anything but 201, or not answered.
    pub failed: u64,
}

/// Posts `rate` probes a second until `until`, one at a time over a keep-alive connection
/// (a probe that takes longer than `1/rate` delays the next one, never doubles up).
pub async fn run_probes(plan: &Plan, rate: u32, until: Instant) -> Probes {
    let mut probes = Probes::default();
    let mut tick = tokio::time::interval(Duration::from_secs(1) / rate.max(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut conn = None;
    while Instant::now() < until {
        tick.tick().await;
        let seq = probes.sent;
        probes.sent += 1;
        let sender = match conn.take() {
            Some(s) => Some(s),
            None => connect(plan).await,
        };
        let Some(mut sender) = sender else {
            probes.failed += 1;
            continue;
        };
        match tokio::time::timeout(PROBE_TIMEOUT, post(plan, &mut sender, seq)).await {
            Ok(Some(at)) => {
                probes.created.insert(seq, at);
                conn = Some(sender);
            }
            Ok(None) | Err(_) => probes.failed += 1,
        }
    }
    probes
}

async fn connect(plan: &Plan) -> Option<http1::SendRequest<Full<Bytes>>> {
    let stream = TcpStream::connect(plan.addr).await.ok()?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = http1::handshake(TokioIo::new(stream)).await.ok()?;
    tokio::spawn(conn);
    Some(sender)
}

/// Posts probe `seq`; the time its 201's headers arrived, or `None` for any other outcome.
async fn post(
    plan: &Plan,
    sender: &mut http1::SendRequest<Full<Bytes>>,
    seq: u64,
) -> Option<Instant> {
    sender.ready().await.ok()?;
    let mut req = Request::builder()
        .method(Method::POST)
        .uri(format!("{}{BLOCKS_PATH}", plan.base))
        .header(header::HOST, plan.authority.as_str())
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(token) = &plan.token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let req = req.body(Full::new(Bytes::from(probe_block(seq)))).ok()?;
    let resp = sender.send_request(req).await.ok()?;
    let at = Instant::now();
    let status = resp.status().as_u16();
    resp.into_body().collect().await.ok()?;
    (status == 201).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_is_recognised_by_its_tag_and_a_load_block_is_not() {
        let json = probe_block(42);
        let block = Block::from_json(&json.replace(
            "\"protocolVersion\"",
            "\"parents\":[\"0x0000000000000000000000000000000000000000000000000000000000000000\"],\"nonce\":\"0\",\"protocolVersion\"",
        ))
        .expect("probe block with parents");
        assert_eq!(probe_seq(&block.to_bytes().expect("bytes")), Some(42));
        let load = crate::binary_block(&[[0u8; 32]], 1, 42).expect("load block");
        assert_eq!(probe_seq(&load), None);
        assert_eq!(probe_seq(b"not a block"), None);
    }
}
