//! The client side of MQTT 3.1.1 that `mqtt-swarm` needs (OASIS MQTT 3.1.1 §2–3): CONNECT,
//! SUBSCRIBE and PINGREQ to send, and the broker's packets to read.
//!
//! The node's codec (`ledger_events::packet`) decodes what a *client* sends and encodes what
//! the *broker* answers; it has no CONNECT or SUBSCRIBE builder and drops a PUBLISH's
//! payload unread, so the few client-side builders live here. Framing (the fixed header and
//! its remaining length, §2.2) is the node's: [`ledger_events::packet::fixed_header`] and
//! [`ledger_events::packet::put_remaining_length`].

use std::ops::Range;

use bytes::{Buf, Bytes, BytesMut};
use ledger_events::packet::{fixed_header, put_remaining_length, PacketError};

/// Largest packet from the broker a client accepts: a block is at most 32 KiB
/// (docs/events.md §3.1), an output's JSON below 64 KiB (§5.2).
pub const MAX_INCOMING: usize = 1 << 20;

/// A UTF-8 string with its u16 length prefix (§1.5.3), or `None` above 65 535 bytes.
fn put_string(out: &mut Vec<u8>, s: &str) -> Option<()> {
    let len = u16::try_from(s.len()).ok()?;
    out.extend_from_slice(&u16_bytes(len));
    out.extend_from_slice(s.as_bytes());
    Some(())
}

/// The big-endian bytes of `v`.
#[expect(
    clippy::big_endian_bytes,
    reason = "MQTT integers are big-endian (§1.5.2)"
)]
fn u16_bytes(v: u16) -> [u8; 2] {
    v.to_be_bytes()
}

fn packet(first: u8, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + body.len());
    out.push(first);
    put_remaining_length(&mut out, body.len());
    out.extend_from_slice(body);
    out
}

/// CONNECT for protocol `MQTT` level 4 with a clean session (§3.1), or `None` for a client
/// id longer than a string can be.
pub fn connect(client_id: &str, keep_alive_secs: u16) -> Option<Vec<u8>> {
    let mut body = Vec::with_capacity(12 + client_id.len());
    put_string(&mut body, "MQTT")?;
    body.push(4); // protocol level 3.1.1
    body.push(0x02); // clean session
    body.extend_from_slice(&u16_bytes(keep_alive_secs));
    put_string(&mut body, client_id)?;
    Some(packet(0x10, &body))
}

/// SUBSCRIBE to one `filter` at QoS 0 (§3.8; the fixed-header flags are 0b0010), or `None`
/// for a filter longer than a string can be.
pub fn subscribe(packet_id: u16, filter: &str) -> Option<Vec<u8>> {
    let mut body = Vec::with_capacity(5 + filter.len());
    body.extend_from_slice(&u16_bytes(packet_id));
    put_string(&mut body, filter)?;
    body.push(0);
    Some(packet(0x82, &body))
}

/// PINGREQ (§3.12).
pub fn pingreq() -> Vec<u8> {
    packet(0xc0, &[])
}

/// A packet the broker sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// CONNACK with its return code.
    ConnAck(u8),
    /// SUBACK with its codes.
    SubAck(Vec<u8>),
    /// PUBLISH: topic and payload.
    Publish {
        /// Topic name (not validated: the node sends names with a literal `+`,
        /// docs/events.md §1.3).
        topic: Bytes,
        /// Payload.
        payload: Bytes,
    },
    /// PINGRESP.
    PingResp,
    /// Any other packet type.
    Other(u8),
}

/// Why the broker's bytes are not a packet a client accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IncomingError {
    /// The fixed header is malformed or announces more than [`MAX_INCOMING`].
    #[error(transparent)]
    Header(#[from] PacketError),
    /// The body does not follow its packet's layout.
    #[error("malformed {0} from the broker")]
    Malformed(&'static str),
}

/// Takes the first complete packet off `buf`, or `None` while it is incomplete.
///
/// # Errors
/// [`IncomingError`] for bytes that are no broker packet; the connection is then unusable.
pub fn next_packet(buf: &mut BytesMut) -> Result<Option<Incoming>, IncomingError> {
    let Some((kind, flags, len, header)) = fixed_header(buf, MAX_INCOMING)? else {
        return Ok(None);
    };
    if buf.len() < header + len {
        return Ok(None);
    }
    buf.advance(header);
    let body = buf.split_to(len).freeze();
    Ok(Some(match kind {
        2 => {
            let code = *body.get(1).ok_or(IncomingError::Malformed("CONNACK"))?;
            Incoming::ConnAck(code)
        }
        3 => {
            let (topic, payload) = publish_parts(flags, &body)?;
            Incoming::Publish {
                topic: body.slice(topic),
                payload: body.slice(payload),
            }
        }
        9 => {
            if body.len() < 2 {
                return Err(IncomingError::Malformed("SUBACK"));
            }
            Incoming::SubAck(body.slice(2..).to_vec())
        }
        13 => Incoming::PingResp,
        other => Incoming::Other(other),
    }))
}

/// Where a PUBLISH body (§3.3.2, §3.3.3) holds its topic name and its payload.
fn publish_parts(flags: u8, body: &[u8]) -> Result<(Range<usize>, Range<usize>), IncomingError> {
    let malformed = IncomingError::Malformed("PUBLISH");
    let mut rest = body;
    if rest.len() < 2 {
        return Err(malformed);
    }
    let topic_len = usize::from(rest.get_u16());
    let topic = 2..2 + topic_len;
    if body.len() < topic.end {
        return Err(malformed);
    }
    // QoS 1 and 2 carry a packet id (§3.3.2.2); the node sends QoS 0 (§2 of docs/events.md),
    // but a client reads either.
    let id_len = if (flags >> 1) & 0x03 > 0 { 2 } else { 0 };
    if body.len() < topic.end + id_len {
        return Err(malformed);
    }
    Ok((topic.clone(), topic.end + id_len..body.len()))
}

/// Calls `on_payload` with the payload of each complete PUBLISH at the start of `buf`, in
/// order, skipping the other packets; returns the bytes used (up to the first incomplete
/// packet). Borrows what it reads: the swarm's listeners take every block the node stores this
/// way, without a copy or a reference count per message.
///
/// # Errors
/// [`IncomingError`] for bytes that are no broker packet.
pub fn for_each_publish(
    buf: &[u8],
    mut on_payload: impl FnMut(&[u8]),
) -> Result<usize, IncomingError> {
    let mut used = 0;
    while let Some(rest) = buf.get(used..) {
        let Some((kind, flags, len, header)) = fixed_header(rest, MAX_INCOMING)? else {
            break;
        };
        let Some(body) = rest.get(header..header + len) else {
            break;
        };
        if kind == 3 {
            let (_, payload) = publish_parts(flags, body)?;
            on_payload(body.get(payload).unwrap_or_default());
        }
        used += header + len;
    }
    Ok(used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_match_the_spec_bytes() {
        assert_eq!(
            connect("c1", 60),
            Some(vec![
                0x10, 14, 0, 4, b'M', b'Q', b'T', b'T', 4, 0x02, 0, 60, 0, 2, b'c', b'1'
            ])
        );
        assert_eq!(
            subscribe(7, "blocks"),
            Some(vec![
                0x82, 11, 0, 7, 0, 6, b'b', b'l', b'o', b'c', b'k', b's', 0
            ])
        );
        assert_eq!(pingreq(), vec![0xc0, 0]);
        assert_eq!(connect(&"x".repeat(70_000), 60), None);
    }

    #[test]
    fn publishes_are_read_in_place_up_to_the_first_incomplete_packet() {
        let first = ledger_events::packet::publish_qos0("blocks", b"one").expect("publish");
        let second = ledger_events::packet::publish_qos0("x/+/y", &[2; 200]).expect("publish");
        let mut all = first.to_vec();
        all.extend_from_slice(&[0xd0, 0]);
        all.extend_from_slice(&second);
        let whole = all.len();
        all.extend_from_slice(&second[..10]);
        let mut payloads = Vec::new();
        let used = for_each_publish(&all, |p| payloads.push(p.to_vec())).expect("packets");
        assert_eq!(used, whole, "the incomplete tail is left");
        assert_eq!(payloads, vec![b"one".to_vec(), vec![2; 200]]);
        // A QoS 1 PUBLISH carries a packet id before its payload.
        let qos1 = [0x32, 7, 0, 1, b't', 0, 9, b'p', b'q'];
        let mut got = Vec::new();
        assert_eq!(
            for_each_publish(&qos1, |p| got = p.to_vec()),
            Ok(qos1.len())
        );
        assert_eq!(got, b"pq");
        assert!(
            for_each_publish(&[0x30, 1, 0], |_| {}).is_err(),
            "no topic length"
        );
    }

    #[test]
    fn packets_are_taken_one_at_a_time_and_only_when_complete() {
        let publish = ledger_events::packet::publish_qos0("blocks", &[1u8; 300]).expect("publish");
        let mut all = BytesMut::new();
        all.extend_from_slice(&[0x20, 2, 0, 0]);
        all.extend_from_slice(&publish);
        all.extend_from_slice(&[0x90, 3, 0, 1, 0, 0xd0, 0]);
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        // Byte by byte: nothing is returned before a packet is whole.
        for b in all.iter() {
            buf.extend_from_slice(&[*b]);
            while let Some(p) = next_packet(&mut buf).expect("valid") {
                got.push(p);
            }
        }
        assert_eq!(
            got,
            vec![
                Incoming::ConnAck(0),
                Incoming::Publish {
                    topic: Bytes::from_static(b"blocks"),
                    payload: Bytes::from(vec![1u8; 300]),
                },
                Incoming::SubAck(vec![0]),
                Incoming::PingResp,
            ]
        );
        assert!(buf.is_empty());
    }

    #[test]
    fn malformed_broker_packets_are_errors() {
        let mut short_publish = BytesMut::from(&[0x30, 3, 0, 9, b'x'][..]);
        assert_eq!(
            next_packet(&mut short_publish),
            Err(IncomingError::Malformed("PUBLISH"))
        );
        let mut huge = BytesMut::from(&[0x30, 0xff, 0xff, 0xff, 0x7f][..]);
        assert!(matches!(
            next_packet(&mut huge),
            Err(IncomingError::Header(PacketError::TooLarge { .. }))
        ));
    }
}
