//! MQTT 3.1 / 3.1.1 control packets: a pure decoder for what a client sends and encoders for
//! what the broker answers (OASIS MQTT 3.1.1 §2–3; the subset docs/events.md §5.1 lists).
//!
//! The decoder never allocates beyond the list of filters of one SUBSCRIBE, never reads past
//! the packet it is given, and refuses anything longer than its `max` before buffering it
//! (the caller sees [`PacketError::TooLarge`] from the fixed header alone).

use bytes::{BufMut, Bytes, BytesMut};

/// Largest remaining length the variable-length encoding can carry (§2.2.3).
pub const MAX_REMAINING_LENGTH: usize = 268_435_455;

/// Packet types (§2.2.1).
mod kind {
    pub(super) const CONNECT: u8 = 1;
    pub(super) const CONNACK: u8 = 2;
    pub(super) const PUBLISH: u8 = 3;
    pub(super) const PUBACK: u8 = 4;
    pub(super) const PUBREC: u8 = 5;
    pub(super) const PUBREL: u8 = 6;
    pub(super) const PUBCOMP: u8 = 7;
    pub(super) const SUBSCRIBE: u8 = 8;
    pub(super) const SUBACK: u8 = 9;
    pub(super) const UNSUBSCRIBE: u8 = 10;
    pub(super) const UNSUBACK: u8 = 11;
    pub(super) const PINGREQ: u8 = 12;
    pub(super) const PINGRESP: u8 = 13;
    pub(super) const DISCONNECT: u8 = 14;
}

/// Why bytes are not an acceptable client packet. Any of these closes the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PacketError {
    /// The remaining length uses more than four bytes or more bytes than needed.
    #[error("malformed remaining length")]
    RemainingLength,
    /// The packet is longer than the broker accepts.
    #[error("packet of {size} bytes exceeds the limit of {max}")]
    TooLarge {
        /// Remaining length announced.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// A packet type a client may not send, or a reserved one.
    #[error("packet type {0} is not accepted from a client")]
    UnexpectedType(u8),
    /// Fixed-header flags other than the ones the type requires.
    #[error("invalid flags {flags:#06b} for packet type {kind}")]
    Flags {
        /// Packet type.
        kind: u8,
        /// The flags sent.
        flags: u8,
    },
    /// The body does not follow its packet's layout.
    #[error("malformed {0}")]
    Malformed(&'static str),
}

/// The protocol a CONNECT asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `MQIsdp`, level 3.
    V31,
    /// `MQTT`, level 4.
    V311,
    /// Anything else (MQTT 5 is `MQTT` level 5): answered with CONNACK 0x01.
    Unsupported,
}

/// A CONNECT packet, as far as the broker reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connect<'a> {
    /// The protocol asked for. For [`Protocol::Unsupported`] nothing after the level is read
    /// (the other fields are empty or zero).
    pub protocol: Protocol,
    /// Clean session flag.
    pub clean_session: bool,
    /// Keep-alive in seconds (0: none).
    pub keep_alive: u16,
    /// The client identifier as sent (UTF-8 checked).
    pub client_id: &'a str,
}

/// One topic filter of a SUBSCRIBE: the raw bytes (checked later by
/// [`crate::topic::Filter::parse`], so a bad one gets 0x80 rather than a close) and the QoS
/// requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requested<'a> {
    /// Filter bytes.
    pub filter: &'a [u8],
    /// QoS 0–2.
    pub qos: u8,
}

/// A packet a client sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet<'a> {
    /// CONNECT.
    Connect(Connect<'a>),
    /// PUBLISH from a client: dropped by the broker (writes are not allowed); QoS 1 and 2
    /// carry the packet id to acknowledge.
    Publish {
        /// QoS of the publish.
        qos: u8,
        /// Packet id for QoS 1 and 2.
        packet_id: Option<u16>,
    },
    /// PUBACK, PUBREC or PUBCOMP for a message the broker never sent at that QoS: ignored.
    Ack,
    /// PUBREL: answered with PUBCOMP.
    PubRel(u16),
    /// SUBSCRIBE.
    Subscribe {
        /// Packet id.
        packet_id: u16,
        /// Filters in order.
        filters: Vec<Requested<'a>>,
    },
    /// UNSUBSCRIBE.
    Unsubscribe {
        /// Packet id.
        packet_id: u16,
        /// Filters in order.
        filters: Vec<&'a [u8]>,
    },
    /// PINGREQ.
    PingReq,
    /// DISCONNECT.
    Disconnect,
}

/// Reads the fixed header at the start of `buf`: `(type, flags, remaining length, header
/// length)`, or `None` while it is incomplete.
///
/// # Errors
/// [`PacketError::RemainingLength`] for a length in more than four bytes or not in the
/// fewest bytes; [`PacketError::TooLarge`] above `max`.
pub fn fixed_header(buf: &[u8], max: usize) -> Result<Option<(u8, u8, usize, usize)>, PacketError> {
    let Some(&first) = buf.first() else {
        return Ok(None);
    };
    let mut len = 0usize;
    for i in 0..4 {
        let Some(&b) = buf.get(1 + i) else {
            return Ok(None);
        };
        len |= usize::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            // The fewest bytes: a last byte of 0 after a continuation adds nothing.
            if i > 0 && b == 0 {
                return Err(PacketError::RemainingLength);
            }
            if len > max {
                return Err(PacketError::TooLarge { size: len, max });
            }
            return Ok(Some((first >> 4, first & 0x0f, len, 2 + i)));
        }
    }
    Err(PacketError::RemainingLength)
}

/// Decodes the first packet of `buf`: the packet and the bytes it took, or `None` while it
/// is incomplete. `max` bounds the remaining length.
///
/// # Errors
/// [`PacketError`] naming what is wrong; the connection is then closed.
pub fn decode(buf: &[u8], max: usize) -> Result<Option<(Packet<'_>, usize)>, PacketError> {
    let Some((kind, flags, len, header)) = fixed_header(buf, max)? else {
        return Ok(None);
    };
    let Some(body) = buf.get(header..header + len) else {
        return Ok(None);
    };
    let packet = decode_body(kind, flags, body)?;
    Ok(Some((packet, header + len)))
}

fn expect_flags(kind: u8, flags: u8, want: u8) -> Result<(), PacketError> {
    if flags == want {
        Ok(())
    } else {
        Err(PacketError::Flags { kind, flags })
    }
}

fn decode_body(kind: u8, flags: u8, body: &[u8]) -> Result<Packet<'_>, PacketError> {
    let mut r = Body(body);
    let packet = match kind {
        kind::CONNECT => {
            expect_flags(kind, flags, 0)?;
            return connect(r).map(Packet::Connect);
        }
        kind::PUBLISH => return publish(flags, r),
        kind::PUBACK | kind::PUBREC | kind::PUBCOMP => {
            expect_flags(kind, flags, 0)?;
            r.u16("acknowledgement")?;
            Packet::Ack
        }
        kind::PUBREL => {
            expect_flags(kind, flags, 0b0010)?;
            Packet::PubRel(r.u16("PUBREL")?)
        }
        kind::SUBSCRIBE => {
            expect_flags(kind, flags, 0b0010)?;
            let packet_id = r.packet_id("SUBSCRIBE")?;
            let mut filters = Vec::new();
            while !r.0.is_empty() {
                let filter = r.string("SUBSCRIBE filter")?;
                let qos = r.u8("SUBSCRIBE QoS")?;
                if qos > 2 {
                    return Err(PacketError::Malformed("SUBSCRIBE QoS"));
                }
                filters.push(Requested { filter, qos });
            }
            if filters.is_empty() {
                return Err(PacketError::Malformed("SUBSCRIBE without filters"));
            }
            return Ok(Packet::Subscribe { packet_id, filters });
        }
        kind::UNSUBSCRIBE => {
            expect_flags(kind, flags, 0b0010)?;
            let packet_id = r.packet_id("UNSUBSCRIBE")?;
            let mut filters = Vec::new();
            while !r.0.is_empty() {
                filters.push(r.string("UNSUBSCRIBE filter")?);
            }
            if filters.is_empty() {
                return Err(PacketError::Malformed("UNSUBSCRIBE without filters"));
            }
            return Ok(Packet::Unsubscribe { packet_id, filters });
        }
        kind::PINGREQ => {
            expect_flags(kind, flags, 0)?;
            Packet::PingReq
        }
        kind::DISCONNECT => {
            expect_flags(kind, flags, 0)?;
            Packet::Disconnect
        }
        other => return Err(PacketError::UnexpectedType(other)),
    };
    r.end(packet)
}

fn connect(mut r: Body<'_>) -> Result<Connect<'_>, PacketError> {
    let name = r.string("CONNECT protocol name")?;
    let level = r.u8("CONNECT protocol level")?;
    let protocol = match (name, level) {
        (b"MQTT", 4) => Protocol::V311,
        (b"MQIsdp", 3) => Protocol::V31,
        _ => {
            return Ok(Connect {
                protocol: Protocol::Unsupported,
                clean_session: false,
                keep_alive: 0,
                client_id: "",
            })
        }
    };
    let flags = r.u8("CONNECT flags")?;
    let keep_alive = r.u16("CONNECT keep-alive")?;
    // §3.1.2.3: the reserved bit is zero; a will QoS above 2, or will QoS / retain without
    // the will flag, are malformed; a password needs a user name.
    let will = flags & 0x04 != 0;
    let will_qos = (flags >> 3) & 0x03;
    let will_retain = flags & 0x20 != 0;
    let password = flags & 0x40 != 0;
    let user = flags & 0x80 != 0;
    if flags & 0x01 != 0
        || will_qos > 2
        || (!will && (will_qos != 0 || will_retain))
        || (password && !user)
    {
        return Err(PacketError::Malformed("CONNECT flags"));
    }
    let client_id = std::str::from_utf8(r.string("CONNECT client id")?)
        .map_err(|_| PacketError::Malformed("CONNECT client id"))?;
    if will {
        r.string("CONNECT will topic")?;
        r.string("CONNECT will message")?;
    }
    if user {
        r.string("CONNECT user name")?;
    }
    if password {
        r.string("CONNECT password")?;
    }
    r.end(Connect {
        protocol,
        clean_session: flags & 0x02 != 0,
        keep_alive,
        client_id,
    })
}

fn publish(flags: u8, mut r: Body<'_>) -> Result<Packet<'_>, PacketError> {
    let qos = (flags >> 1) & 0x03;
    if qos == 3 {
        return Err(PacketError::Flags {
            kind: kind::PUBLISH,
            flags,
        });
    }
    r.string("PUBLISH topic")?;
    let packet_id = match qos {
        0 => None,
        _ => Some(r.packet_id("PUBLISH")?),
    };
    // The payload is the rest: dropped unread.
    Ok(Packet::Publish { qos, packet_id })
}

/// A cursor over a packet body.
struct Body<'a>(&'a [u8]);

impl<'a> Body<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], PacketError> {
        if self.0.len() < n {
            return Err(PacketError::Malformed(what));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, PacketError> {
        Ok(self.take(1, what)?[0])
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, PacketError> {
        let b = self.take(2, what)?;
        Ok(u16_of([b[0], b[1]]))
    }

    /// A packet id, which is never zero (§2.3.1).
    fn packet_id(&mut self, what: &'static str) -> Result<u16, PacketError> {
        match self.u16(what)? {
            0 => Err(PacketError::Malformed(what)),
            id => Ok(id),
        }
    }

    /// A u16-prefixed string's bytes (§1.5.3).
    fn string(&mut self, what: &'static str) -> Result<&'a [u8], PacketError> {
        let n = self.u16(what)?;
        self.take(usize::from(n), what)
    }

    /// `value` if the body is used up, else malformed.
    fn end<T>(self, value: T) -> Result<T, PacketError> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(PacketError::Malformed("trailing bytes"))
        }
    }
}

// ---- encoders ----------------------------------------------------------------------------

/// CONNACK return codes (§3.2.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ConnectCode {
    /// 0x00.
    Accepted = 0,
    /// 0x01: unacceptable protocol version (MQTT 5 among them).
    UnacceptableProtocol = 1,
    /// 0x02: identifier rejected.
    IdentifierRejected = 2,
    /// 0x03: server unavailable (the client cap is reached).
    ServerUnavailable = 3,
}

/// SUBACK code for a refused filter (§3.9.3).
pub const SUBACK_FAILURE: u8 = 0x80;

/// A big-endian u16 (MQTT's integers are in network byte order, §1.5.2).
#[expect(
    clippy::big_endian_bytes,
    reason = "MQTT integers are big-endian (§1.5.2)"
)]
fn u16_of(bytes: [u8; 2]) -> u16 {
    u16::from_be_bytes(bytes)
}

/// The big-endian bytes of `v` (see [`u16_of`]).
#[expect(
    clippy::big_endian_bytes,
    reason = "MQTT integers are big-endian (§1.5.2)"
)]
fn u16_bytes(v: u16) -> [u8; 2] {
    v.to_be_bytes()
}

/// Appends the remaining length `len` (at most [`MAX_REMAINING_LENGTH`]) in MQTT's
/// variable-length encoding (§2.2.3).
pub fn put_remaining_length(out: &mut impl BufMut, mut len: usize) {
    loop {
        let mut b = (len % 128) as u8;
        len /= 128;
        if len > 0 {
            b |= 0x80;
        }
        out.put_u8(b);
        if len == 0 {
            break;
        }
    }
}

fn simple(first: u8, body: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(2 + body.len());
    out.put_u8(first);
    put_remaining_length(&mut out, body.len());
    out.put_slice(body);
    out.freeze()
}

/// CONNACK with session-present 0.
pub fn connack(code: ConnectCode) -> Bytes {
    simple(kind::CONNACK << 4, &[0, code as u8])
}

/// SUBACK with one code per filter.
pub fn suback(packet_id: u16, codes: &[u8]) -> Bytes {
    let mut body = u16_bytes(packet_id).to_vec();
    body.extend_from_slice(codes);
    simple(kind::SUBACK << 4, &body)
}

/// UNSUBACK.
pub fn unsuback(packet_id: u16) -> Bytes {
    simple(kind::UNSUBACK << 4, &u16_bytes(packet_id))
}

/// PINGRESP.
pub fn pingresp() -> Bytes {
    simple(kind::PINGRESP << 4, &[])
}

/// PUBACK (for a client's QoS 1 PUBLISH, which is dropped).
pub fn puback(packet_id: u16) -> Bytes {
    simple(kind::PUBACK << 4, &u16_bytes(packet_id))
}

/// PUBREC (for a client's QoS 2 PUBLISH, which is dropped).
pub fn pubrec(packet_id: u16) -> Bytes {
    simple(kind::PUBREC << 4, &u16_bytes(packet_id))
}

/// PUBCOMP (for a client's PUBREL).
pub fn pubcomp(packet_id: u16) -> Bytes {
    simple(kind::PUBCOMP << 4, &u16_bytes(packet_id))
}

/// A PUBLISH at QoS 0, never retained, DUP 0. The topic name is not validated: inx-mqtt
/// publishes names with a literal `+` (docs/events.md §1.3). `None` when the topic or the
/// packet is too long for MQTT.
pub fn publish_qos0(topic: &str, payload: &[u8]) -> Option<Bytes> {
    let topic_len = u16::try_from(topic.len()).ok()?;
    let len = 2 + topic.len() + payload.len();
    if len > MAX_REMAINING_LENGTH {
        return None;
    }
    let mut out = BytesMut::with_capacity(5 + len);
    out.put_u8(kind::PUBLISH << 4);
    put_remaining_length(&mut out, len);
    out.put_u16(topic_len);
    out.put_slice(topic.as_bytes());
    out.put_slice(payload);
    Some(out.freeze())
}

#[cfg(test)]
#[expect(
    clippy::big_endian_bytes,
    reason = "MQTT integers are big-endian (§1.5.2)"
)]
mod tests {
    use super::*;

    const MAX: usize = 65_536;

    #[test]
    fn remaining_length_boundaries_round_trip() {
        for len in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            2_097_151,
            2_097_152,
            MAX_REMAINING_LENGTH,
        ] {
            let mut out = BytesMut::new();
            out.put_u8(0xc0);
            put_remaining_length(&mut out, len);
            let want_bytes = match len {
                0..=127 => 1,
                128..=16_383 => 2,
                16_384..=2_097_151 => 3,
                _ => 4,
            };
            assert_eq!(out.len(), 1 + want_bytes, "{len}");
            let got = fixed_header(&out, MAX_REMAINING_LENGTH).expect("valid");
            assert_eq!(got, Some((12, 0, len, 1 + want_bytes)), "{len}");
        }
    }

    #[test]
    fn remaining_length_rules() {
        type Header = Option<(u8, u8, usize, usize)>;
        let cases: &[(&[u8], Result<Header, PacketError>)] = &[
            (&[], Ok(None)),
            (&[0xc0], Ok(None)),
            (&[0xc0, 0x80], Ok(None)),
            (&[0xc0, 0x80, 0x80, 0x80], Ok(None)),
            (
                &[0xc0, 0x80, 0x80, 0x80, 0x80],
                Err(PacketError::RemainingLength),
            ),
            (
                &[0xc0, 0xff, 0xff, 0xff, 0xff],
                Err(PacketError::RemainingLength),
            ),
            // Not in the fewest bytes.
            (&[0xc0, 0x80, 0x00], Err(PacketError::RemainingLength)),
            (&[0xc0, 0x81, 0x00], Err(PacketError::RemainingLength)),
            (&[0xc0, 0x00], Ok(Some((12, 0, 0, 2)))),
            (&[0x30, 0x80, 0x01], Ok(Some((3, 0, 128, 3)))),
            (
                &[0x30, 0x81, 0x80, 0x04],
                Err(PacketError::TooLarge {
                    size: 65_537,
                    max: MAX,
                }),
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(&fixed_header(bytes, MAX), want, "{bytes:02x?}");
        }
    }

    fn connect_bytes(name: &[u8], level: u8, flags: u8, id: &[u8], rest: &[u8]) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&(name.len() as u16).to_be_bytes());
        body.extend_from_slice(name);
        body.push(level);
        body.push(flags);
        body.extend_from_slice(&60u16.to_be_bytes());
        body.extend_from_slice(&(id.len() as u16).to_be_bytes());
        body.extend_from_slice(id);
        body.extend_from_slice(rest);
        let mut out = BytesMut::new();
        out.put_u8(0x10);
        put_remaining_length(&mut out, body.len());
        out.put_slice(&body);
        out.to_vec()
    }

    #[test]
    fn connect_protocols() {
        let cases: &[(&[u8], u8, Protocol)] = &[
            (b"MQTT", 4, Protocol::V311),
            (b"MQIsdp", 3, Protocol::V31),
            (b"MQTT", 5, Protocol::Unsupported),
            (b"MQTT", 3, Protocol::Unsupported),
            (b"MQIsdp", 4, Protocol::Unsupported),
            (b"mqtt", 4, Protocol::Unsupported),
        ];
        for (name, level, want) in cases {
            let bytes = connect_bytes(name, *level, 0x02, b"iotasdk0x1", &[]);
            let (p, used) = decode(&bytes, MAX).expect("decodes").expect("complete");
            assert_eq!(used, bytes.len());
            let Packet::Connect(c) = p else {
                panic!("not a CONNECT: {p:?}")
            };
            assert_eq!(c.protocol, *want, "{name:?} {level}");
            if *want != Protocol::Unsupported {
                assert_eq!(c.client_id, "iotasdk0x1");
                assert!(c.clean_session);
                assert_eq!(c.keep_alive, 60);
            }
        }
    }

    #[test]
    fn connect_flags_and_optional_fields() {
        let will = [&[0, 1, b't'][..], &[0, 2, b'h', b'i']].concat();
        let user_pass = [&[0, 1, b'u'][..], &[0, 1, b'p']].concat();
        let cases: &[(u8, Vec<u8>, bool)] = &[
            (0x00, vec![], true),
            (0x04, will.clone(), true),
            (0x2c, will.clone(), true),
            (0xc0, user_pass.clone(), true),
            (0x80, vec![0, 1, b'u'], true),
            (0x01, vec![], false),
            (0x40, vec![0, 1, b'p'], false),
            (0x08, vec![], false),
            (0x20, vec![], false),
            (0x1c, will.clone(), false),
            (0x04, vec![0, 1, b't'], false),
            (0x00, vec![0], false),
        ];
        for (flags, rest, ok) in cases {
            let bytes = connect_bytes(b"MQTT", 4, *flags, b"c", rest);
            let got = decode(&bytes, MAX);
            assert_eq!(got.is_ok(), *ok, "flags {flags:#04x}: {got:?}");
        }
        let bad_utf8 = connect_bytes(b"MQTT", 4, 0, &[0xff, 0xfe], &[]);
        assert_eq!(
            decode(&bad_utf8, MAX),
            Err(PacketError::Malformed("CONNECT client id"))
        );
    }

    #[test]
    fn subscribe_and_unsubscribe() {
        let sub = [0x82, 10, 0, 7, 0, 1, b'a', 1, 0, 1, b'#', 2];
        assert_eq!(
            decode(&sub, MAX),
            Ok(Some((
                Packet::Subscribe {
                    packet_id: 7,
                    filters: vec![
                        Requested {
                            filter: b"a",
                            qos: 1
                        },
                        Requested {
                            filter: b"#",
                            qos: 2
                        }
                    ],
                },
                12
            )))
        );
        let cases: &[(&[u8], PacketError)] = &[
            (
                &[0x80, 6, 0, 7, 0, 1, b'a', 0],
                PacketError::Flags { kind: 8, flags: 0 },
            ),
            (
                &[0x82, 2, 0, 7],
                PacketError::Malformed("SUBSCRIBE without filters"),
            ),
            (
                &[0x82, 6, 0, 0, 0, 1, b'a', 0],
                PacketError::Malformed("SUBSCRIBE"),
            ),
            (
                &[0x82, 6, 0, 7, 0, 1, b'a', 3],
                PacketError::Malformed("SUBSCRIBE QoS"),
            ),
            (
                &[0x82, 5, 0, 7, 0, 1, b'a'],
                PacketError::Malformed("SUBSCRIBE QoS"),
            ),
            (
                &[0x82, 5, 0, 7, 0, 2, b'a'],
                PacketError::Malformed("SUBSCRIBE filter"),
            ),
            (
                &[0xa2, 2, 0, 7],
                PacketError::Malformed("UNSUBSCRIBE without filters"),
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(decode(bytes, MAX), Err(want.clone()), "{bytes:02x?}");
        }
        assert_eq!(
            decode(&[0xa2, 5, 0, 9, 0, 1, b'x'], MAX),
            Ok(Some((
                Packet::Unsubscribe {
                    packet_id: 9,
                    filters: vec![b"x"]
                },
                7
            )))
        );
    }

    #[test]
    fn small_packets_and_types_a_client_may_not_send() {
        let cases: &[(&[u8], Result<Packet<'static>, PacketError>)] = &[
            (&[0xc0, 0], Ok(Packet::PingReq)),
            (&[0xe0, 0], Ok(Packet::Disconnect)),
            (&[0xc0, 1, 0], Err(PacketError::Malformed("trailing bytes"))),
            (&[0xc1, 0], Err(PacketError::Flags { kind: 12, flags: 1 })),
            (&[0x40, 2, 0, 1], Ok(Packet::Ack)),
            (&[0x62, 2, 0, 1], Ok(Packet::PubRel(1))),
            (
                &[0x60, 2, 0, 1],
                Err(PacketError::Flags { kind: 6, flags: 0 }),
            ),
            (
                &[0x30, 3, 0, 1, b't'],
                Ok(Packet::Publish {
                    qos: 0,
                    packet_id: None,
                }),
            ),
            (
                &[0x32, 5, 0, 1, b't', 0, 9],
                Ok(Packet::Publish {
                    qos: 1,
                    packet_id: Some(9),
                }),
            ),
            (
                &[0x36, 3, 0, 1, b't'],
                Err(PacketError::Flags { kind: 3, flags: 6 }),
            ),
            (&[0x20, 2, 0, 0], Err(PacketError::UnexpectedType(2))),
            (&[0x90, 3, 0, 1, 0], Err(PacketError::UnexpectedType(9))),
            (&[0xd0, 0], Err(PacketError::UnexpectedType(13))),
            (&[0x00, 0], Err(PacketError::UnexpectedType(0))),
            (&[0xf0, 0], Err(PacketError::UnexpectedType(15))),
        ];
        for (bytes, want) in cases {
            let got = decode(bytes, MAX).map(|p| p.map(|(p, _)| p));
            match want {
                Ok(p) => assert_eq!(got, Ok(Some(p.clone())), "{bytes:02x?}"),
                Err(e) => assert_eq!(got, Err(e.clone()), "{bytes:02x?}"),
            }
        }
    }

    #[test]
    fn answers_have_their_fixed_bytes() {
        assert_eq!(&connack(ConnectCode::Accepted)[..], &[0x20, 2, 0, 0]);
        assert_eq!(
            &connack(ConnectCode::UnacceptableProtocol)[..],
            &[0x20, 2, 0, 1]
        );
        assert_eq!(&suback(5, &[1, 0x80])[..], &[0x90, 4, 0, 5, 1, 0x80]);
        assert_eq!(&unsuback(5)[..], &[0xb0, 2, 0, 5]);
        assert_eq!(&pingresp()[..], &[0xd0, 0]);
        assert_eq!(&puback(3)[..], &[0x40, 2, 0, 3]);
        assert_eq!(&pubrec(3)[..], &[0x50, 2, 0, 3]);
        assert_eq!(&pubcomp(3)[..], &[0x70, 2, 0, 3]);
        let p = publish_qos0("outputs/unlock/+/x", b"{}").expect("fits");
        assert_eq!(p[0], 0x30, "QoS 0, no retain, no DUP");
        assert_eq!(&p[2..4], &[0, 18]);
        assert_eq!(&p[4..22], b"outputs/unlock/+/x");
        assert_eq!(&p[22..], b"{}");
        assert!(publish_qos0(&"a".repeat(65_536), b"").is_none());
    }
}
