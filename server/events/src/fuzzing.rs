//! The oracle the `mqtt_packets` fuzz target (fuzz/fuzz_targets/mqtt_packets.rs) and the
//! property tests drive: any bytes, fed to a connection in chunks, end in packets or a close,
//! never a panic, and the decoder's answer agrees with itself.

use std::sync::Arc;

use crate::{
    broker::{Broker, BrokerConfig},
    packet::{decode, fixed_header, publish_qos0},
    session::Session,
};

/// Largest packet the oracle allows (small, so the fuzzer reaches the limit).
const MAX: usize = 4096;

/// Decodes `data` packet by packet, checking that each packet's length is the one its fixed
/// header announces; then feeds `data` to a connection in chunks whose sizes come from the
/// first byte, checking the connection answers the same as for the whole (and grants the
/// same filters, unless it closes).
pub fn fuzz_mqtt_stream(data: &[u8]) {
    let mut at = 0;
    while let Some(rest) = data.get(at..) {
        match decode(rest, MAX) {
            Ok(Some((_, used))) => {
                let header = fixed_header(rest, MAX).ok().flatten();
                let announced = header.map(|(_, _, len, head)| len + head);
                assert_eq!(announced, Some(used), "length disagrees with the header");
                assert!(used >= 2 && used <= rest.len());
                at += used;
            }
            Ok(None) | Err(_) => break,
        }
    }
    let whole = run(data, data.len().max(1));
    let chunk = usize::from(data.first().copied().unwrap_or(1)).max(1);
    let split = run(data, chunk);
    // The answers queued and whether the connection closes never depend on the chunking. The
    // filters granted do only when it closes: `receive` reports no grants with a close (the
    // connection ends, its filters with it), and a chunk boundary before the closing packet
    // reports the grants before it.
    assert_eq!(
        (&whole.0, whole.2),
        (&split.0, split.2),
        "chunking changed the answers"
    );
    if !whole.2 {
        assert_eq!(whole.1, split.1, "chunking changed the grants");
    }
}

/// Feeds `data` to a fresh connection `chunk` bytes at a time: what it answered, the filters
/// granted (then which probe topics reached it) and whether it closed.
fn run(data: &[u8], chunk: usize) -> (Vec<Vec<u8>>, Vec<String>, bool) {
    let config = BrokerConfig {
        max_packet: MAX,
        max_subscriptions: 4,
        ..BrokerConfig::default()
    };
    let broker = Arc::new(Broker::new(config, Arc::default()));
    let mut session = Session::new(Arc::clone(&broker));
    let mut granted = Vec::new();
    let mut closed = false;
    for part in data.chunks(chunk) {
        match session.receive(part) {
            Ok(g) => granted.extend(g.into_iter().map(|f| f.as_str().to_owned())),
            Err(_) => {
                closed = true;
                break;
            }
        }
    }
    let answers =
        std::iter::from_fn(|| session.delivery().try_answer().map(|b| b.to_vec())).collect();
    let mut reached = Vec::new();
    if !closed {
        // A message on each probe topic reaches the connection once if one of its filters
        // matches, and then it is exactly the packet its writer sends next.
        for topic in PROBE_TOPICS {
            let n = broker.publish(topic, b"p");
            assert!(n <= 1, "one connection, {n} deliveries");
            let sent = session.delivery().next_frame(usize::MAX);
            let expected = (n == 1).then(|| publish_qos0(topic, b"p")).flatten();
            assert_eq!(sent, expected, "what the writer sends for {topic}");
            if n == 1 {
                reached.push(topic.to_owned());
            }
        }
    }
    granted.extend(reached.into_iter().map(|t| format!("reached {t}")));
    (answers, granted, closed)
}

/// Topics published after the input, to check what the connection's filters deliver.
const PROBE_TOPICS: [&str; 4] = ["a", "a/b", "blocks", "+"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oracle_checks_what_the_filters_deliver() {
        let mut stream = vec![
            0x10, 14, 0, 4, b'M', b'Q', b'T', b'T', 4, 2, 0, 60, 0, 2, b'i', b'd',
        ];
        // SUBSCRIBE 1: `a/#` and `blocks`; UNSUBSCRIBE 2: `blocks`.
        stream.extend_from_slice(&[
            0x82, 17, 0, 1, 0, 3, b'a', b'/', b'#', 0, 0, 6, b'b', b'l', b'o', b'c', b'k', b's', 0,
        ]);
        stream.extend_from_slice(&[0xa2, 10, 0, 2, 0, 6, b'b', b'l', b'o', b'c', b'k', b's']);
        let (_, granted, closed) = run(&stream, 5);
        assert!(!closed);
        assert_eq!(granted, ["a/#", "blocks", "reached a", "reached a/b"]);
        fuzz_mqtt_stream(&stream);
    }
}
