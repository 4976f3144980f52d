//! A minimal MQTT 3.1.1 client over a WebSocket (tungstenite) for the event API's tests; its
//! packets come from `ledger_test_support::mqtt`, written independently of the node's codec.

#![expect(
    clippy::big_endian_bytes,
    reason = "MQTT integers are big-endian (§1.5.2)"
)]

use std::{
    net::TcpStream,
    time::{Duration, Instant},
};

use tungstenite::{
    client::IntoClientRequest,
    http::HeaderValue,
    protocol::{frame::coding::CloseCode, WebSocket},
    Message,
};

use crate::common::TestNode;

/// A packet the broker sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// CONNACK return code.
    ConnAck(u8),
    /// SUBACK codes.
    SubAck(Vec<u8>),
    /// PUBLISH: retain flag, topic, payload.
    Publish {
        retain: bool,
        topic: String,
        payload: Vec<u8>,
    },
    /// Anything else: the first byte.
    Other(u8),
}

/// How a read ended when no packet came.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Nothing within the wait.
    Timeout,
    /// The server closed the WebSocket (with this close code, if any) or the TCP stream.
    Closed(Option<CloseCode>),
}

/// An MQTT connection over a WebSocket.
pub struct Client {
    pub ws: WebSocket<TcpStream>,
    buf: Vec<u8>,
    /// The subprotocol the server answered with.
    pub protocol: Option<String>,
}

pub use ledger_test_support::mqtt::packet;

/// CONNECT with protocol `name`/`level`, clean session, keep-alive 60 s.
pub fn connect_packet(name: &str, level: u8, client_id: &str) -> Vec<u8> {
    ledger_test_support::mqtt::connect(name, level, client_id)
}

/// SUBSCRIBE `filters` at QoS 1 (as the SDK does).
pub fn subscribe_packet(packet_id: u16, filters: &[&str]) -> Vec<u8> {
    let filters: Vec<(&str, u8)> = filters.iter().map(|f| (*f, 1)).collect();
    ledger_test_support::mqtt::subscribe(packet_id, &filters)
}

impl Client {
    /// Opens the WebSocket to `/api/mqtt/v1` offering subprotocol `mqtt`.
    pub fn open(node: &TestNode) -> Self {
        let stream = TcpStream::connect(node.addr).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let url = format!("ws://{}/api/mqtt/v1", node.addr);
        let mut request = url.into_client_request().expect("request");
        request
            .headers_mut()
            .insert("Sec-WebSocket-Protocol", HeaderValue::from_static("mqtt"));
        let (ws, response) = tungstenite::client(request, stream).expect("WebSocket handshake");
        let protocol = response
            .headers()
            .get("sec-websocket-protocol")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        Self {
            ws,
            buf: Vec::new(),
            protocol,
        }
    }

    /// Opens, sends CONNECT (3.1.1) and asserts CONNACK 0.
    pub fn connected(node: &TestNode, client_id: &str) -> Self {
        let mut c = Self::open(node);
        c.send(&connect_packet("MQTT", 4, client_id));
        assert_eq!(
            c.next(Duration::from_secs(10)),
            Ok(Incoming::ConnAck(0)),
            "CONNACK"
        );
        c
    }

    /// Sends `bytes` in one binary frame.
    pub fn send(&mut self, bytes: &[u8]) {
        self.ws
            .send(Message::Binary(bytes.to_vec().into()))
            .expect("send");
    }

    /// Subscribes and returns the SUBACK codes.
    pub fn subscribe(&mut self, packet_id: u16, filters: &[&str]) -> Vec<u8> {
        self.send(&subscribe_packet(packet_id, filters));
        match self.next(Duration::from_secs(10)) {
            Ok(Incoming::SubAck(codes)) => codes,
            other => panic!("no SUBACK first (snapshots come after it): {other:?}"),
        }
    }

    /// The next packet within `wait`.
    pub fn next(&mut self, wait: Duration) -> Result<Incoming, Ended> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(p) = self.parse() {
                return Ok(p);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Ended::Timeout);
            }
            self.ws
                .get_mut()
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .expect("timeout");
            match self.ws.read() {
                Ok(Message::Binary(b)) => self.buf.extend_from_slice(&b),
                Ok(Message::Close(frame)) => return Err(Ended::Closed(frame.map(|f| f.code))),
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(Ended::Timeout)
                }
                Err(_) => return Err(Ended::Closed(None)),
            }
        }
    }

    /// The next PUBLISH within `wait`, skipping other packets.
    pub fn next_publish(&mut self, wait: Duration) -> Option<(String, Vec<u8>)> {
        let deadline = Instant::now() + wait;
        loop {
            match self.next(deadline.saturating_duration_since(Instant::now())) {
                Ok(Incoming::Publish {
                    retain,
                    topic,
                    payload,
                }) => {
                    assert!(!retain, "{topic} sent with RETAIN");
                    return Some((topic, payload));
                }
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }

    /// PUBLISHes until one on `topic` whose payload satisfies `want` (within `wait`); the
    /// topics seen on the way, in order, and the payload found.
    pub fn until(
        &mut self,
        topic: &str,
        want: impl Fn(&[u8]) -> bool,
        wait: Duration,
    ) -> (Vec<(String, Vec<u8>)>, Vec<u8>) {
        let deadline = Instant::now() + wait;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some((t, p)) = self.next_publish(left) else {
                panic!("no {topic} within {wait:?}; saw {:?}", names(&seen));
            };
            if t == topic && want(&p) {
                return (seen, p);
            }
            seen.push((t, p));
        }
    }

    /// Waits until the server closes the connection (within `wait`), skipping packets.
    pub fn closed_within(&mut self, wait: Duration) -> Option<Option<CloseCode>> {
        let deadline = Instant::now() + wait;
        loop {
            match self.next(deadline.saturating_duration_since(Instant::now())) {
                Ok(_) => {}
                Err(Ended::Closed(code)) => return Some(code),
                Err(Ended::Timeout) => {
                    if Instant::now() >= deadline {
                        return None;
                    }
                }
            }
        }
    }

    fn parse(&mut self) -> Option<Incoming> {
        let first = *self.buf.first()?;
        let mut len = 0usize;
        let mut at = 1;
        loop {
            let b = *self.buf.get(at)?;
            len |= usize::from(b & 0x7f) << (7 * (at - 1));
            at += 1;
            if b & 0x80 == 0 {
                break;
            }
        }
        let body = self.buf.get(at..at + len)?.to_vec();
        self.buf.drain(..at + len);
        Some(match first >> 4 {
            2 => Incoming::ConnAck(body[1]),
            9 => Incoming::SubAck(body[2..].to_vec()),
            3 => {
                let n = usize::from(u16::from_be_bytes([body[0], body[1]]));
                let qos = (first >> 1) & 3;
                let start = 2 + n + if qos > 0 { 2 } else { 0 };
                Incoming::Publish {
                    retain: first & 1 == 1,
                    topic: String::from_utf8(body[2..2 + n].to_vec()).expect("UTF-8 topic"),
                    payload: body[start..].to_vec(),
                }
            }
            _ => Incoming::Other(first),
        })
    }
}

/// The topics of `seen`.
pub fn names(seen: &[(String, Vec<u8>)]) -> Vec<&str> {
    seen.iter().map(|(t, _)| t.as_str()).collect()
}

/// A payload as JSON.
pub fn json(payload: &[u8]) -> serde_json::Value {
    serde_json::from_slice(payload).expect("JSON payload")
}
