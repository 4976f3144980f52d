//! The gossip framing (`ledger_codec::gossip`): byte vectors, the protocol id,
//! every protocol violation, and round trips through the incremental reader
//! under arbitrary chunking.

use std::borrow::Cow;

use ledger_codec::fuzzing::fuzz_gossip_frames;
use ledger_codec::gossip::{
    decode_frame, protocol_id, protocol_id_for_network_id, FrameError, FrameReader, Heartbeat,
    Message, MessageType, LATEST_MILESTONE, MAX_BLOCK_LEN, MAX_FRAME_LEN,
};
use proptest::prelude::*;

const HEARTBEAT_VECTOR: &str = "040e000700000000000000070000000101";
const MILESTONE_REQUEST_VECTOR: &str = "01040000000000";

fn heartbeat_7() -> Message<'static> {
    Message::Heartbeat(Heartbeat {
        solid_milestone_index: 7,
        pruned_milestone_index: 0,
        latest_milestone_index: 7,
        connected_peers: 1,
        synced_peers: 1,
    })
}

/// Reads all of `bytes` in one chunk; the messages, or the first error.
fn read_all(bytes: &[u8]) -> Result<Vec<Message<'static>>, FrameError> {
    FrameReader::new().push(bytes).collect()
}

// ---------------------------------------------------------------- vectors

/// `msg` encodes to the vector `hex` of `len` bytes, and the vector decodes, as one frame
/// and through the incremental reader, to `msg` with nothing left.
fn assert_frame_vector(msg: Message<'static>, hex: &str, len: usize) {
    let bytes = hex::decode(hex).unwrap();
    assert_eq!(msg.to_bytes().unwrap(), bytes);
    assert_eq!(msg.encoded_len().unwrap(), len);
    let (decoded, rest) = decode_frame(&bytes).unwrap().unwrap();
    assert_eq!(decoded, msg);
    assert!(rest.is_empty());
    assert_eq!(read_all(&bytes).unwrap(), vec![msg]);
}

#[test]
fn heartbeat_vector() {
    assert_frame_vector(heartbeat_7(), HEARTBEAT_VECTOR, 17);
}

#[test]
fn milestone_request_vector() {
    let msg = Message::MilestoneRequest {
        index: LATEST_MILESTONE,
    };
    assert_frame_vector(msg, MILESTONE_REQUEST_VECTOR, 7);
}

#[test]
fn fixed_frame_sizes_and_layouts() {
    let req = Message::BlockRequest {
        block_id: std::array::from_fn(|i| i as u8),
    };
    let bytes = req.to_bytes().unwrap();
    assert_eq!(bytes.len(), 35);
    assert_eq!(&bytes[..3], &[3, 32, 0]);
    assert_eq!(&bytes[3..], &req_id_bytes());

    let ms = Message::MilestoneRequest { index: 0x0403_0201 };
    assert_eq!(ms.to_bytes().unwrap(), [1, 4, 0, 1, 2, 3, 4]);

    let block = Message::Block(Cow::Borrowed(&[0xaa, 0xbb][..]));
    assert_eq!(block.to_bytes().unwrap(), [2, 2, 0, 0xaa, 0xbb]);
    assert_eq!(block.encoded_len().unwrap(), 5);

    let empty = Message::Block(Cow::Borrowed(&[][..]));
    assert_eq!(empty.to_bytes().unwrap(), [2, 0, 0]);
    assert_eq!(read_all(&[2, 0, 0]).unwrap(), vec![empty.into_owned()]);
}

fn req_id_bytes() -> [u8; 32] {
    std::array::from_fn(|i| i as u8)
}

#[test]
fn shimmer_protocol_id() {
    assert_eq!(
        protocol_id("shimmer"),
        "/iota-gossip/14364762045254553490/1.0.0"
    );
    assert_eq!(
        protocol_id_for_network_id(14364762045254553490),
        "/iota-gossip/14364762045254553490/1.0.0"
    );
}

#[test]
fn message_types() {
    for b in 1..=4u8 {
        assert_eq!(MessageType::from_u8(b).unwrap().as_u8(), b);
    }
    assert_eq!(MessageType::MilestoneRequest.fixed_len(), Some(4));
    assert_eq!(MessageType::Block.fixed_len(), None);
    assert_eq!(MessageType::BlockRequest.fixed_len(), Some(32));
    assert_eq!(MessageType::Heartbeat.fixed_len(), Some(14));
}

// ---------------------------------------------------------------- violations

/// Checks that a frame (header plus however much payload) is refused with
/// `want` by both decoders, without the reader buffering any payload, and
/// that the reader stays failed.
fn assert_violation(frame: &[u8], want: FrameError) {
    assert_eq!(
        decode_frame(frame).err(),
        Some(want.clone()),
        "decode_frame {frame:02x?}"
    );
    // The header alone is enough to see the violation.
    let header = &frame[..frame.len().min(3)];
    assert_eq!(
        decode_frame(header).err(),
        Some(want.clone()),
        "header only"
    );

    let mut reader = FrameReader::new();
    let mut input = frame;
    assert_eq!(reader.feed(&mut input), Err(want.clone()), "reader");
    assert_eq!(
        frame.len() - input.len(),
        header.len(),
        "reader read past the header"
    );
    assert_eq!(reader.buffered(), 0);
    assert_eq!(reader.allocated(), 0);
    assert_eq!(reader.error(), Some(&want));
    assert!(!reader.at_frame_boundary());
    assert_eq!(reader.needed(), 0);

    // Failed for good: a valid frame afterwards is refused, nothing consumed.
    let mut valid = &hex::decode(MILESTONE_REQUEST_VECTOR).unwrap()[..];
    assert_eq!(reader.feed(&mut valid), Err(want.clone()));
    assert_eq!(valid.len(), 7);

    // Byte by byte: the same error, at the same point.
    let mut reader = FrameReader::new();
    let mut got = None;
    for (i, b) in frame.iter().enumerate() {
        if let Err(e) = reader.feed(&mut &[*b][..]) {
            got = Some((i, e));
            break;
        }
    }
    // An unknown type at its first byte, a bad length at the header's last.
    let at = if matches!(want, FrameError::UnknownType(_)) {
        0
    } else {
        2
    };
    assert_eq!(got, Some((at, want)), "byte-by-byte");
}

#[test]
fn unknown_types_are_refused_at_the_first_byte() {
    for t in std::iter::once(0u8).chain(5..=255) {
        let want = FrameError::UnknownType(t);
        assert_eq!(decode_frame(&[t]).err(), Some(want.clone()));
        let mut reader = FrameReader::new();
        let mut one = &[t][..];
        assert_eq!(reader.feed(&mut one), Err(want.clone()), "type {t}");
        // A plausible full frame of that type too.
        assert_violation(&[t, 4, 0, 0, 0, 0, 0], want.clone());
        assert_violation(&[t, 0, 0], want);
    }
}

#[test]
fn fixed_types_with_a_wrong_length_are_refused() {
    for (t, size) in [
        (MessageType::MilestoneRequest, 4u16),
        (MessageType::BlockRequest, 32),
        (MessageType::Heartbeat, 14),
    ] {
        for got in [0, size - 1, size + 1, 40_000, u16::MAX] {
            let mut frame = vec![t.as_u8()];
            frame.extend_from_slice(&got.to_le_bytes());
            frame.resize(3 + usize::from(got).min(64), 0x55);
            let want = FrameError::WrongLength {
                message_type: t,
                expected: size,
                got,
            };
            assert_violation(&frame, want);
        }
    }
    // The error reads well.
    let e = decode_frame(&[4, 13, 0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Heartbeat payload must be 14 bytes, the header says 13"
    );
}

#[test]
fn oversized_blocks_are_refused_before_the_body() {
    for len in [MAX_BLOCK_LEN as u16 + 1, 40_000, u16::MAX] {
        let mut frame = vec![2];
        frame.extend_from_slice(&len.to_le_bytes());
        frame.extend_from_slice(&[0; 100]);
        assert_violation(
            &frame,
            FrameError::BlockTooLarge {
                len: usize::from(len),
                max: MAX_BLOCK_LEN,
            },
        );
    }
}

#[test]
fn the_largest_block_is_accepted() {
    let payload: Vec<u8> = (0..MAX_BLOCK_LEN).map(|i| i as u8).collect();
    let msg = Message::Block(Cow::Borrowed(&payload[..]));
    let bytes = msg.to_bytes().unwrap();
    assert_eq!(bytes.len(), MAX_FRAME_LEN);
    assert_eq!(&bytes[..3], &[2, 0x00, 0x80]);
    let (decoded, rest) = decode_frame(&bytes).unwrap().unwrap();
    assert_eq!(decoded, msg);
    assert!(rest.is_empty());

    let mut reader = FrameReader::new();
    let mut input = &bytes[..MAX_FRAME_LEN - 1];
    assert_eq!(reader.feed(&mut input), Ok(None));
    assert_eq!(reader.buffered(), MAX_FRAME_LEN - 1);
    assert_eq!(reader.allocated(), MAX_BLOCK_LEN);
    assert_eq!(reader.needed(), 1);
    let mut last = &bytes[MAX_FRAME_LEN - 1..];
    assert_eq!(reader.feed(&mut last).unwrap(), Some(msg.into_owned()));
    assert_eq!(reader.buffered(), 0);
    assert!(reader.at_frame_boundary());
}

#[test]
fn encoding_an_oversized_block_fails_without_writing() {
    let payload = vec![7u8; MAX_BLOCK_LEN + 1];
    let msg = Message::Block(Cow::Borrowed(&payload[..]));
    let want = FrameError::BlockTooLarge {
        len: MAX_BLOCK_LEN + 1,
        max: MAX_BLOCK_LEN,
    };
    assert_eq!(msg.encoded_len(), Err(want.clone()));
    assert_eq!(msg.to_bytes(), Err(want.clone()));
    let mut out = vec![1, 2, 3];
    assert_eq!(msg.encode(&mut out), Err(want));
    assert_eq!(out, [1, 2, 3]);
    // Far beyond a u16 too: refused, not truncated to a wrapped length.
    let huge = vec![0u8; 65_536 + 5];
    assert!(matches!(
        Message::Block(Cow::Borrowed(&huge[..])).encoded_len(),
        Err(FrameError::BlockTooLarge { len: 65_541, .. })
    ));
}

// ---------------------------------------------------------------- incomplete input

#[test]
fn incomplete_frames_wait_for_more() {
    let bytes = hex::decode(HEARTBEAT_VECTOR).unwrap();
    for cut in 0..bytes.len() {
        assert_eq!(decode_frame(&bytes[..cut]), Ok(None), "cut {cut}");
    }
    let mut reader = FrameReader::new();
    assert_eq!(reader.needed(), 3);
    let mut input = &bytes[..2];
    assert_eq!(reader.feed(&mut input), Ok(None));
    assert_eq!((reader.buffered(), reader.needed()), (2, 1));
    let mut input = &bytes[2..10];
    assert_eq!(reader.feed(&mut input), Ok(None));
    assert_eq!((reader.buffered(), reader.needed()), (10, 7));
    assert!(!reader.at_frame_boundary());
    let mut input = &bytes[10..];
    assert_eq!(reader.feed(&mut input), Ok(Some(heartbeat_7())));
    assert!(input.is_empty());
    assert!(reader.at_frame_boundary());
}

#[test]
fn push_yields_every_frame_of_a_chunk_and_stops_at_an_error() {
    let mut stream = hex::decode(HEARTBEAT_VECTOR).unwrap();
    stream.extend(hex::decode(MILESTONE_REQUEST_VECTOR).unwrap());
    stream.extend([2, 1, 0, 9]);
    stream.extend([9, 9, 9]); // unknown type 9
    stream.extend(hex::decode(HEARTBEAT_VECTOR).unwrap());

    let mut reader = FrameReader::new();
    let mut frames = reader.push(&stream);
    assert_eq!(frames.next(), Some(Ok(heartbeat_7())));
    assert_eq!(
        frames.next(),
        Some(Ok(Message::MilestoneRequest { index: 0 }))
    );
    assert_eq!(frames.next(), Some(Ok(Message::Block(Cow::Owned(vec![9])))));
    assert_eq!(frames.next(), Some(Err(FrameError::UnknownType(9))));
    assert_eq!(frames.next(), None);
    // The reader took the bad header (3 bytes) and nothing after it.
    assert_eq!(frames.rest().len(), 17);
    assert_eq!(
        reader.push(&[]).next(),
        Some(Err(FrameError::UnknownType(9)))
    );
}

#[test]
fn undrained_push_leaves_the_rest_unread() {
    let mut stream = hex::decode(MILESTONE_REQUEST_VECTOR).unwrap();
    stream.extend(hex::decode(HEARTBEAT_VECTOR).unwrap());
    let mut reader = FrameReader::new();
    let mut frames = reader.push(&stream);
    assert!(frames.next().is_some());
    let rest = frames.rest();
    assert_eq!(rest.len(), 17);
    assert_eq!(
        reader.push(rest).collect::<Result<Vec<_>, _>>(),
        Ok(vec![heartbeat_7()])
    );
}

// ---------------------------------------------------------------- properties

fn block_payload() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => prop::collection::vec(any::<u8>(), 0..=300),
        1 => prop::collection::vec(any::<u8>(), MAX_BLOCK_LEN - 2..=MAX_BLOCK_LEN),
    ]
}

fn message() -> impl Strategy<Value = Message<'static>> {
    prop_oneof![
        any::<u32>().prop_map(|index| Message::MilestoneRequest { index }),
        block_payload().prop_map(|b| Message::Block(Cow::Owned(b))),
        any::<[u8; 32]>().prop_map(|block_id| Message::BlockRequest { block_id }),
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u8>(),
            any::<u8>()
        )
            .prop_map(|(s, p, l, c, y)| Message::Heartbeat(Heartbeat {
                solid_milestone_index: s,
                pruned_milestone_index: p,
                latest_milestone_index: l,
                connected_peers: c,
                synced_peers: y,
            })),
    ]
}

/// How a stream is cut into reads.
#[derive(Debug, Clone)]
enum Split {
    /// One byte per read.
    Bytes,
    /// Reads of these sizes, cycled.
    Sizes(Vec<usize>),
}

fn split() -> impl Strategy<Value = Split> {
    prop_oneof![
        1 => Just(Split::Bytes),
        4 => prop::collection::vec(
            prop_oneof![4 => 1usize..=8, 2 => 1usize..=100, 1 => 1usize..=40_000],
            1..=16
        )
        .prop_map(Split::Sizes),
    ]
}

fn chunks(stream: &[u8], split: &Split) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < stream.len() {
        let n = match split {
            Split::Bytes => 1,
            Split::Sizes(sizes) => sizes[i % sizes.len()],
        };
        let end = (at + n).min(stream.len());
        out.push(at..end);
        at = end;
        i += 1;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn streams_round_trip_under_any_split(
        msgs in prop::collection::vec(message(), 0..=12),
        split in split(),
    ) {
        let mut stream = Vec::new();
        let mut total = 0;
        for m in &msgs {
            m.encode(&mut stream).unwrap();
            total += m.encoded_len().unwrap();
        }
        prop_assert_eq!(stream.len(), total);

        // feed(), checking the memory bound after every step.
        let mut reader = FrameReader::new();
        let mut got = Vec::new();
        for range in chunks(&stream, &split) {
            let mut input = &stream[range];
            loop {
                let step = reader.feed(&mut input).unwrap();
                prop_assert!(reader.buffered() <= MAX_FRAME_LEN);
                prop_assert!(reader.allocated() <= MAX_BLOCK_LEN);
                match step {
                    Some(m) => got.push(m),
                    None => break,
                }
            }
            prop_assert!(input.is_empty());
        }
        prop_assert!(reader.at_frame_boundary());
        prop_assert_eq!(&got, &msgs);

        // push(), the same.
        let mut reader = FrameReader::new();
        let mut got = Vec::new();
        for range in chunks(&stream, &split) {
            for msg in reader.push(&stream[range]) {
                got.push(msg.unwrap());
            }
            prop_assert!(reader.buffered() <= MAX_FRAME_LEN);
        }
        prop_assert!(reader.at_frame_boundary());
        prop_assert_eq!(&got, &msgs);

        // The one-shot decoder reads the same sequence.
        let mut rest = &stream[..];
        let mut again = Vec::new();
        while let Some((m, r)) = decode_frame(rest).unwrap() {
            again.push(m.into_owned());
            rest = r;
        }
        prop_assert!(rest.is_empty());
        prop_assert_eq!(&again, &msgs);

        // And the fuzz oracle holds for it under a few chunk sizes.
        for selector in [0u8, 2, 63, 255] {
            let mut data = vec![selector];
            data.extend_from_slice(&stream);
            fuzz_gossip_frames(&data);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..=600)) {
        fuzz_gossip_frames(&data);
    }

    #[test]
    fn mutated_streams_never_panic(
        msgs in prop::collection::vec(message(), 1..=6),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..=4),
        selector in any::<u8>(),
    ) {
        let mut data = vec![selector];
        for m in &msgs {
            m.encode(&mut data).unwrap();
        }
        for (at, b) in flips {
            let i = 1 + at.index(data.len() - 1);
            data[i] = b;
        }
        fuzz_gossip_frames(&data);
    }
}
