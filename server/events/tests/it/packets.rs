//! The decoder over arbitrary and generated packets; the encoder's PUBLISH read back.

#![expect(
    clippy::big_endian_bytes,
    reason = "MQTT integers are big-endian (§1.5.2)"
)]

use ledger_events::{
    fuzzing::fuzz_mqtt_stream,
    packet::{decode, fixed_header, publish_qos0, Packet, PacketError},
};
use ledger_test_support::mqtt::{packet as with_header, subscribe};
use proptest::prelude::*;

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_and_agree_when_chunked(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        fuzz_mqtt_stream(&data);
    }

    #[test]
    fn subscribe_round_trips(
        packet_id in 1u16..,
        filters in proptest::collection::vec((proptest::collection::vec(any::<u8>(), 0..40), 0u8..3), 1..8),
    ) {
        let bytes = subscribe(packet_id, &filters);
        let (p, used) = decode(&bytes, 1 << 16).expect("valid").expect("complete");
        prop_assert_eq!(used, bytes.len());
        let Packet::Subscribe { packet_id: id, filters: got } = p else {
            return Err(TestCaseError::fail("not a SUBSCRIBE"));
        };
        prop_assert_eq!(id, packet_id);
        let got: Vec<(Vec<u8>, u8)> = got.iter().map(|r| (r.filter.to_vec(), r.qos)).collect();
        prop_assert_eq!(got, filters);
        // Every strict prefix is incomplete, never an error.
        for cut in 0..bytes.len() {
            prop_assert_eq!(decode(&bytes[..cut], 1 << 16), Ok(None));
        }
    }

    #[test]
    fn a_packet_above_the_limit_is_refused_from_its_header(len in 1usize..100_000, max in 0usize..50_000) {
        let body = vec![0u8; len];
        let bytes = with_header(0x30, &body);
        let got = decode(&bytes[..bytes.len().min(5)], max);
        if len > max {
            prop_assert_eq!(got, Err(PacketError::TooLarge { size: len, max }));
        } else {
            prop_assert!(got.is_ok());
        }
    }

    #[test]
    fn publish_reads_back(topic in "[a-z0-9/+#]{0,120}", payload in proptest::collection::vec(any::<u8>(), 0..40_000)) {
        let bytes = publish_qos0(&topic, &payload).expect("fits");
        let (kind, flags, len, head) = fixed_header(&bytes, usize::MAX).expect("valid").expect("complete");
        prop_assert_eq!((kind, flags), (3, 0));
        prop_assert_eq!(head + len, bytes.len());
        let n = usize::from(u16::from_be_bytes([bytes[head], bytes[head + 1]]));
        prop_assert_eq!(&bytes[head + 2..head + 2 + n], topic.as_bytes());
        prop_assert_eq!(&bytes[head + 2 + n..], &payload[..]);
    }
}

/// Every input the fuzzer found (fuzz/regressions/mqtt_packets/) passes the oracle.
#[test]
fn fuzz_regressions_replay() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions/mqtt_packets");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("regressions dir") {
        let bytes = std::fs::read(entry.expect("entry").path()).expect("input");
        fuzz_mqtt_stream(&bytes);
        n += 1;
    }
    assert!(n >= 1, "no regressions in {}", dir.display());
}
