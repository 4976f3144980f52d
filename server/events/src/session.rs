//! One client connection's protocol, without I/O: bytes in (from WebSocket frames, split or
//! joined anyhow), answers out through the client's [`Outbox`], messages through its
//! [`Delivery`], and the filters granted so the caller can send their current values
//! (docs/events.md §2).

use std::{sync::Arc, time::Duration};

use crate::{
    broker::{Broker, ClientKey, Subscribed},
    delivery::Delivery,
    outbox::{queue, Outbox},
    packet::{self, ConnectCode, Packet, PacketError, Protocol, SUBACK_FAILURE},
    topic::Filter,
};

/// Why a connection is closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Close {
    /// Bytes that are not an acceptable packet.
    #[error("{0}")]
    Malformed(#[from] PacketError),
    /// A valid packet out of order: anything before CONNECT, or a second CONNECT.
    #[error("protocol violation: {0}")]
    Protocol(&'static str),
    /// CONNECT refused with this code (sent before the close).
    #[error("connection refused with CONNACK {0:?}")]
    Refused(ConnectCode),
    /// The client sent DISCONNECT.
    #[error("client disconnected")]
    Disconnect,
    /// The client does not read its answers.
    #[error("answers not read")]
    Overflow,
}

/// A connection's state.
#[derive(Debug)]
pub struct Session {
    broker: Arc<Broker>,
    outbox: Arc<Outbox>,
    delivery: Delivery,
    buf: Vec<u8>,
    client: Option<ClientKey>,
    keep_alive: Option<Duration>,
}

impl Session {
    /// A new connection on `broker`.
    pub fn new(broker: Arc<Broker>) -> Self {
        let bound = broker.config().client_queue_bytes;
        let (outbox, inbox) = queue();
        let delivery = Delivery::new(inbox, bound, Arc::clone(broker.metrics()));
        Self {
            broker,
            outbox,
            delivery,
            buf: Vec::new(),
            client: None,
            keep_alive: None,
        }
    }

    /// What the connection's writer sends.
    pub fn delivery(&mut self) -> &mut Delivery {
        &mut self.delivery
    }

    /// True once CONNECT was accepted.
    pub fn connected(&self) -> bool {
        self.client.is_some()
    }

    /// The longest silence allowed: 1.5 × the keep-alive, once connected with one.
    pub fn keep_alive(&self) -> Option<Duration> {
        self.keep_alive
    }

    /// The client's queue.
    pub fn outbox(&self) -> &Arc<Outbox> {
        &self.outbox
    }

    /// Reads `bytes` from the client and handles every packet completed by them. Returns the
    /// filters newly granted by SUBSCRIBE (in order), for their current values.
    ///
    /// # Errors
    /// [`Close`]: the connection is to be closed (after writing what is queued).
    pub fn receive(&mut self, bytes: &[u8]) -> Result<Vec<Filter>, Close> {
        self.buf.extend_from_slice(bytes);
        let mut granted = Vec::new();
        let mut used = 0;
        let result = loop {
            let rest = self.buf.get(used..).unwrap_or_default();
            match packet::decode(rest, self.broker.config().max_packet) {
                Ok(Some((p, n))) => {
                    used += n;
                    let p = own(p);
                    if let Err(close) = self.handle(p, &mut granted) {
                        break Err(close);
                    }
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(Close::Malformed(e)),
            }
        };
        self.buf.drain(..used);
        result.map(|()| granted)
    }

    fn answer(&self, p: bytes::Bytes) -> Result<(), Close> {
        if self.outbox.control(p) {
            Ok(())
        } else {
            Err(Close::Overflow)
        }
    }

    fn handle(&mut self, p: Owned, granted: &mut Vec<Filter>) -> Result<(), Close> {
        let Some(key) = self.client else {
            let Owned::Connect {
                protocol,
                keep_alive,
                client_id,
            } = p
            else {
                return Err(Close::Protocol("a packet before CONNECT"));
            };
            if protocol == Protocol::Unsupported {
                return self.refuse(ConnectCode::UnacceptableProtocol);
            }
            match self.broker.connect(&client_id, Arc::clone(&self.outbox)) {
                Ok(key) => {
                    self.client = Some(key);
                    self.keep_alive = (keep_alive > 0)
                        .then(|| Duration::from_millis(u64::from(keep_alive) * 1500));
                    return self.answer(packet::connack(ConnectCode::Accepted));
                }
                Err(code) => return self.refuse(code),
            }
        };
        match p {
            Owned::Connect { .. } => Err(Close::Protocol("a second CONNECT")),
            Owned::Subscribe { packet_id, filters } => {
                let max = self.broker.config().max_filters_per_subscribe;
                // The filters that parse, within the per-SUBSCRIBE limit, go to the broker at
                // once (one move to the new set's audience); the others get 0x80.
                let parsed: Vec<Option<Filter>> = filters
                    .iter()
                    .enumerate()
                    .map(|(i, (raw, _))| Filter::parse(raw).ok().filter(|_| i < max))
                    .collect();
                let valid: Vec<Filter> = parsed.iter().flatten().cloned().collect();
                let (outcomes, switch) = self.broker.subscribe(key, &valid);
                self.delivery.switch(switch);
                let mut outcomes = outcomes.into_iter();
                let mut codes = Vec::with_capacity(filters.len());
                for (f, (_, qos)) in parsed.into_iter().zip(&filters) {
                    let code = match f {
                        Some(f) => match outcomes.next() {
                            Some(Subscribed::Granted) => {
                                granted.push(f);
                                *qos
                            }
                            _ => SUBACK_FAILURE,
                        },
                        None => SUBACK_FAILURE,
                    };
                    codes.push(code);
                }
                self.answer(packet::suback(packet_id, &codes))
            }
            Owned::Unsubscribe { packet_id, filters } => {
                let parsed: Vec<Filter> = filters
                    .iter()
                    .filter_map(|raw| Filter::parse(raw).ok())
                    .collect();
                let switch = self.broker.unsubscribe(key, &parsed);
                self.delivery.switch(switch);
                self.answer(packet::unsuback(packet_id))
            }
            // Clients may not publish (inx-mqtt's ACL): dropped, acknowledged as asked.
            Owned::Publish { packet_id } => match packet_id {
                Some((1, id)) => self.answer(packet::puback(id)),
                Some((_, id)) => self.answer(packet::pubrec(id)),
                None => Ok(()),
            },
            Owned::PubRel(id) => self.answer(packet::pubcomp(id)),
            Owned::Ack => Ok(()),
            Owned::PingReq => self.answer(packet::pingresp()),
            Owned::Disconnect => Err(Close::Disconnect),
        }
    }

    fn refuse(&self, code: ConnectCode) -> Result<(), Close> {
        self.answer(packet::connack(code))?;
        Err(Close::Refused(code))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(key) = self.client.take() {
            self.broker.disconnect(key);
        }
    }
}

/// A decoded packet copied out of the read buffer (so the buffer can be compacted).
enum Owned {
    Connect {
        protocol: Protocol,
        keep_alive: u16,
        client_id: String,
    },
    Publish {
        packet_id: Option<(u8, u16)>,
    },
    PubRel(u16),
    Ack,
    Subscribe {
        packet_id: u16,
        filters: Vec<(Vec<u8>, u8)>,
    },
    Unsubscribe {
        packet_id: u16,
        filters: Vec<Vec<u8>>,
    },
    PingReq,
    Disconnect,
}

fn own(p: Packet<'_>) -> Owned {
    match p {
        Packet::Connect(c) => Owned::Connect {
            protocol: c.protocol,
            keep_alive: c.keep_alive,
            client_id: c.client_id.to_owned(),
        },
        Packet::Publish { qos, packet_id } => Owned::Publish {
            packet_id: packet_id.map(|id| (qos, id)),
        },
        Packet::Ack => Owned::Ack,
        Packet::PubRel(id) => Owned::PubRel(id),
        Packet::Subscribe { packet_id, filters } => Owned::Subscribe {
            packet_id,
            filters: filters
                .into_iter()
                .map(|r| (r.filter.to_vec(), r.qos))
                .collect(),
        },
        Packet::Unsubscribe { packet_id, filters } => Owned::Unsubscribe {
            packet_id,
            filters: filters.into_iter().map(<[u8]>::to_vec).collect(),
        },
        Packet::PingReq => Owned::PingReq,
        Packet::Disconnect => Owned::Disconnect,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broker::BrokerConfig;

    const CONNECT_311: &[u8] = &[
        0x10, 14, 0, 4, b'M', b'Q', b'T', b'T', 4, 2, 0, 60, 0, 2, b'i', b'd',
    ];
    const CONNECT_5: &[u8] = &[
        0x10, 15, 0, 4, b'M', b'Q', b'T', b'T', 5, 2, 0, 60, 0, 0, 2, b'i', b'd',
    ];

    fn session(config: BrokerConfig) -> (Session, Arc<Broker>) {
        let broker = Arc::new(Broker::new(config, Arc::default()));
        let s = Session::new(Arc::clone(&broker));
        (s, broker)
    }

    fn drain(s: &mut Session) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| s.delivery().try_answer().map(|b| b.to_vec())).collect()
    }

    #[test]
    fn connect_subscribe_ping_in_split_and_joined_frames() {
        let (mut s, broker) = session(BrokerConfig::default());
        let mut stream = CONNECT_311.to_vec();
        stream.extend_from_slice(&[0x82, 14, 0, 1, 0, 6, b'b', b'l', b'o', b'c', b'k', b's', 1]);
        stream.extend_from_slice(&[0, 0, 0]); // an empty filter: 0x80
        stream.extend_from_slice(&[0xc0, 0]);
        let mut granted = Vec::new();
        for chunk in stream.chunks(3) {
            granted.extend(s.receive(chunk).expect("accepted"));
        }
        assert_eq!(granted, vec![Filter::parse(b"blocks").expect("valid")]);
        assert_eq!(
            drain(&mut s),
            vec![
                vec![0x20, 2, 0, 0],
                vec![0x90, 4, 0, 1, 1, 0x80],
                vec![0xd0, 0]
            ]
        );
        assert_eq!(s.keep_alive(), Some(Duration::from_secs(90)));
        assert!(broker.has_subscribers("blocks"));
        drop(s);
        assert!(!broker.has_subscribers("blocks"), "forgotten on close");
    }

    #[test]
    fn hostile_inputs_close_the_connection() {
        let cases: &[(&[u8], &str)] = &[
            (CONNECT_5, "CONNACK 0x01 then close"),
            (&[0xc0, 0], "a packet before CONNECT"),
            (&[0x10, 0xff, 0xff, 0xff, 0xff, 0x01], "malformed length"),
            (&[0x10, 0x80, 0x80, 0x10], "oversized"),
            (&[0x20, 2, 0, 0], "a server packet"),
        ];
        for (bytes, why) in cases {
            let (mut s, _) = session(BrokerConfig::default());
            let got = s.receive(bytes);
            assert!(got.is_err(), "{why}: {got:?}");
            if *why == "CONNACK 0x01 then close" {
                assert_eq!(got, Err(Close::Refused(ConnectCode::UnacceptableProtocol)));
                assert_eq!(drain(&mut s), vec![vec![0x20, 2, 0, 1]]);
            }
        }
        let (mut s, _) = session(BrokerConfig::default());
        s.receive(CONNECT_311).expect("accepted");
        assert_eq!(
            s.receive(CONNECT_311),
            Err(Close::Protocol("a second CONNECT"))
        );
    }

    #[test]
    fn too_many_subscriptions_get_0x80() {
        let (mut s, _) = session(BrokerConfig {
            max_subscriptions: 1,
            ..BrokerConfig::default()
        });
        s.receive(CONNECT_311).expect("accepted");
        let sub = [0x82, 10, 0, 2, 0, 1, b'a', 0, 0, 1, b'b', 2];
        let granted = s.receive(&sub).expect("answered");
        assert_eq!(granted.len(), 1);
        assert_eq!(drain(&mut s)[1], vec![0x90, 4, 0, 2, 0, 0x80]);
    }

    #[test]
    fn client_publishes_are_dropped_and_acknowledged() {
        let (mut s, broker) = session(BrokerConfig::default());
        s.receive(CONNECT_311).expect("accepted");
        s.receive(&[0x82, 6, 0, 1, 0, 1, b't', 0]).expect("sub");
        s.receive(&[0x30, 4, 0, 1, b't', b'x']).expect("qos 0");
        s.receive(&[0x32, 5, 0, 1, b't', 0, 7]).expect("qos 1");
        s.receive(&[0x34, 5, 0, 1, b't', 0, 8]).expect("qos 2");
        s.receive(&[0x62, 2, 0, 8]).expect("pubrel");
        s.receive(&[0x40, 2, 0, 8]).expect("stray ack");
        let out = drain(&mut s);
        assert_eq!(
            &out[2..],
            &[
                vec![0x40, 2, 0, 7],
                vec![0x50, 2, 0, 8],
                vec![0x70, 2, 0, 8]
            ]
        );
        assert_eq!(
            broker
                .metrics()
                .dropped_count(crate::metrics::DropReason::QueueFull),
            0
        );
        assert_eq!(s.receive(&[0xe0, 0]), Err(Close::Disconnect));
    }
}
