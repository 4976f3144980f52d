//! MQTT 3.1.1 packets a client sends (OASIS MQTT 3.1.1 §2–3), for the event API's tests:
//! written from the specification apart from the node's own codec (`ledger-events`), which
//! they test.

#![expect(
    clippy::big_endian_bytes,
    reason = "MQTT integers are big-endian (§1.5.2)"
)]

/// A packet with fixed-header byte `first` and `body`, its remaining length in MQTT's
/// variable-length encoding (§2.2.3).
pub fn packet(first: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![first];
    let mut len = body.len();
    loop {
        let mut digit = (len % 128) as u8;
        len /= 128;
        if len > 0 {
            digit |= 0x80;
        }
        out.push(digit);
        if len == 0 {
            break;
        }
    }
    out.extend_from_slice(body);
    out
}

/// Appends `s` with its u16 length prefix (§1.5.3; `s` is at most 65 535 bytes).
pub fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u16).to_be_bytes());
    out.extend_from_slice(s);
}

/// CONNECT with protocol `name` at `level`, a clean session and a keep-alive of 60 s (§3.1);
/// level 5 gets MQTT 5's empty property list.
pub fn connect(name: &str, level: u8, client_id: &str) -> Vec<u8> {
    let mut body = Vec::new();
    put_string(&mut body, name.as_bytes());
    body.push(level);
    body.push(0x02);
    body.extend_from_slice(&60u16.to_be_bytes());
    if level == 5 {
        body.push(0);
    }
    put_string(&mut body, client_id.as_bytes());
    packet(0x10, &body)
}

/// SUBSCRIBE `filters`, each with its requested QoS (§3.8; the fixed-header flags 0b0010).
pub fn subscribe<F: AsRef<[u8]>>(packet_id: u16, filters: &[(F, u8)]) -> Vec<u8> {
    let mut body = packet_id.to_be_bytes().to_vec();
    for (filter, qos) in filters {
        put_string(&mut body, filter.as_ref());
        body.push(*qos);
    }
    packet(0x82, &body)
}
