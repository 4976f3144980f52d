//! The typed gossip messages, their frames, and one-shot frame decoding.

use std::borrow::Cow;

use super::error::FrameError;
use super::header::{FrameHeader, MessageType, HEADER_LEN};

/// The milestone index a [`Message::MilestoneRequest`] uses for "your latest
/// milestone".
pub const LATEST_MILESTONE: u32 = 0;

/// Payload bytes of a Heartbeat.
const HEARTBEAT_LEN: usize = 14;

/// One gossip message.
///
/// The Block payload is a [`Cow`]: [`decode_frame`] borrows it from the
/// caller's buffer, [`super::FrameReader`] yields it owned (`Message<'static>`,
/// the buffer the reader filled, handed over without a copy). The payload is
/// opaque here; only its length is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    /// Type 1: a request for the milestone with this index
    /// ([`LATEST_MILESTONE`] = the receiver's latest).
    MilestoneRequest {
        /// The milestone index.
        index: u32,
    },
    /// Type 2: raw v2 block bytes, at most [`super::MAX_BLOCK_LEN`].
    Block(Cow<'a, [u8]>),
    /// Type 3: a request for the block with this id.
    BlockRequest {
        /// The block id (BLAKE2b-256 of the block bytes).
        block_id: [u8; 32],
    },
    /// Type 4: the sender's state.
    Heartbeat(Heartbeat),
}

/// The payload of a Heartbeat: the sender's milestone indexes and peer counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Heartbeat {
    /// The sender's solid (confirmed) milestone index.
    pub solid_milestone_index: u32,
    /// The sender's pruning index (it holds nothing at or below it).
    pub pruned_milestone_index: u32,
    /// The sender's latest known milestone index.
    pub latest_milestone_index: u32,
    /// Peers the sender is connected to.
    pub connected_peers: u8,
    /// Connected peers the sender considers synced.
    pub synced_peers: u8,
}

impl Heartbeat {
    /// The 14 payload bytes: solid u32 ‖ pruned u32 ‖ latest u32 ‖ connected
    /// u8 ‖ synced u8, little endian.
    pub fn to_bytes(&self) -> [u8; HEARTBEAT_LEN] {
        let [s0, s1, s2, s3] = self.solid_milestone_index.to_le_bytes();
        let [p0, p1, p2, p3] = self.pruned_milestone_index.to_le_bytes();
        let [l0, l1, l2, l3] = self.latest_milestone_index.to_le_bytes();
        [
            s0,
            s1,
            s2,
            s3,
            p0,
            p1,
            p2,
            p3,
            l0,
            l1,
            l2,
            l3,
            self.connected_peers,
            self.synced_peers,
        ]
    }

    /// Reads the 14 payload bytes.
    pub fn from_bytes(b: [u8; HEARTBEAT_LEN]) -> Self {
        let [s0, s1, s2, s3, p0, p1, p2, p3, l0, l1, l2, l3, connected_peers, synced_peers] = b;
        Self {
            solid_milestone_index: u32::from_le_bytes([s0, s1, s2, s3]),
            pruned_milestone_index: u32::from_le_bytes([p0, p1, p2, p3]),
            latest_milestone_index: u32::from_le_bytes([l0, l1, l2, l3]),
            connected_peers,
            synced_peers,
        }
    }
}

impl<'a> Message<'a> {
    /// The frame type of this message.
    pub fn message_type(&self) -> MessageType {
        match self {
            Self::MilestoneRequest { .. } => MessageType::MilestoneRequest,
            Self::Block(_) => MessageType::Block,
            Self::BlockRequest { .. } => MessageType::BlockRequest,
            Self::Heartbeat(_) => MessageType::Heartbeat,
        }
    }

    /// The checked header this message is framed with.
    ///
    /// # Errors
    /// [`FrameError::BlockTooLarge`] for a Block payload over
    /// [`super::MAX_BLOCK_LEN`].
    pub fn header(&self) -> Result<FrameHeader, FrameError> {
        let message_type = self.message_type();
        let len = match self {
            Self::Block(bytes) => bytes.len(),
            _ => usize::from(message_type.fixed_len().unwrap_or(0)),
        };
        message_type.check_len(len)?;
        let len = u16::try_from(len).map_err(|_| FrameError::BlockTooLarge {
            len,
            max: super::MAX_BLOCK_LEN,
        })?;
        Ok(FrameHeader { message_type, len })
    }

    /// Bytes of the whole frame (header and payload).
    ///
    /// # Errors
    /// As [`Message::header`]: a Block payload over the maximum.
    pub fn encoded_len(&self) -> Result<usize, FrameError> {
        Ok(self.header()?.frame_len())
    }

    /// Appends the frame to `out`. On error `out` is left unchanged: a Block
    /// payload over the maximum is refused, never truncated.
    ///
    /// # Errors
    /// As [`Message::header`]: a Block payload over the maximum.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), FrameError> {
        let header = self.header()?;
        out.reserve(header.frame_len());
        out.extend_from_slice(&header.to_bytes());
        match self {
            Self::MilestoneRequest { index } => out.extend_from_slice(&index.to_le_bytes()),
            Self::Block(bytes) => out.extend_from_slice(bytes),
            Self::BlockRequest { block_id } => out.extend_from_slice(block_id),
            Self::Heartbeat(hb) => out.extend_from_slice(&hb.to_bytes()),
        }
        Ok(())
    }

    /// The frame as a new vector.
    ///
    /// # Errors
    /// As [`Message::encode`].
    pub fn to_bytes(&self) -> Result<Vec<u8>, FrameError> {
        let mut out = Vec::new();
        self.encode(&mut out)?;
        Ok(out)
    }

    /// The message with an owned Block payload.
    pub fn into_owned(self) -> Message<'static> {
        match self {
            Self::MilestoneRequest { index } => Message::MilestoneRequest { index },
            Self::Block(bytes) => Message::Block(Cow::Owned(bytes.into_owned())),
            Self::BlockRequest { block_id } => Message::BlockRequest { block_id },
            Self::Heartbeat(hb) => Message::Heartbeat(hb),
        }
    }

    /// The message a payload of the given type carries, borrowing a Block
    /// payload.
    ///
    /// # Errors
    /// The payload length breaks the type's rule.
    pub fn from_payload(message_type: MessageType, payload: &'a [u8]) -> Result<Self, FrameError> {
        message_type.check_len(payload.len())?;
        // The length is checked, so the conversions below cannot fail; they
        // still report a wrong length rather than panic.
        let wrong = || FrameError::WrongLength {
            message_type,
            expected: message_type.fixed_len().unwrap_or(0),
            got: u16::try_from(payload.len()).unwrap_or(u16::MAX),
        };
        Ok(match message_type {
            MessageType::MilestoneRequest => Self::MilestoneRequest {
                index: u32::from_le_bytes(payload.try_into().map_err(|_| wrong())?),
            },
            MessageType::Block => Self::Block(Cow::Borrowed(payload)),
            MessageType::BlockRequest => Self::BlockRequest {
                block_id: payload.try_into().map_err(|_| wrong())?,
            },
            MessageType::Heartbeat => Self::Heartbeat(Heartbeat::from_bytes(
                payload.try_into().map_err(|_| wrong())?,
            )),
        })
    }
}

/// Decodes the first frame of `input`.
///
/// Returns the message and the bytes after its frame, or `Ok(None)` when
/// `input` holds no violation yet but ends before the frame does (read more
/// and call again with the longer input). The type byte is checked as soon as
/// it is present and the length as soon as the header is, so a bad header is
/// reported without waiting for its payload.
///
/// # Errors
/// An unknown type, or a length its type does not allow.
pub fn decode_frame(input: &[u8]) -> Result<Option<(Message<'_>, &[u8])>, FrameError> {
    let Some(&type_byte) = input.first() else {
        return Ok(None);
    };
    MessageType::from_u8(type_byte)?;
    let Some((header, rest)) = input.split_first_chunk::<HEADER_LEN>() else {
        return Ok(None);
    };
    let header = FrameHeader::parse(*header)?;
    let Some((payload, rest)) = rest.split_at_checked(usize::from(header.len)) else {
        return Ok(None);
    };
    Ok(Some((
        Message::from_payload(header.message_type, payload)?,
        rest,
    )))
}
