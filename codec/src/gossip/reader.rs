//! [`FrameReader`]: gossip frames from a byte stream that arrives in chunks of
//! any size.

use std::borrow::Cow;
use std::iter::FusedIterator;

use super::error::FrameError;
use super::header::{FrameHeader, MessageType, HEADER_LEN};
use super::message::Message;

/// An incremental frame decoder for one gossip stream.
///
/// Feed it the bytes of each read, in order, with [`FrameReader::feed`] or
/// [`FrameReader::push`]; it yields every complete message. It buffers at most
/// the one frame in progress: the header (≤ 3 bytes), then the payload, whose
/// buffer is allocated only after the header is checked, to exactly the
/// announced length (≤ [`super::MAX_BLOCK_LEN`]). A finished Block payload
/// becomes the message's owned bytes without a copy.
///
/// The type byte is checked as soon as it arrives and the length as soon as
/// the header is complete. After an error the reader stays failed: every
/// later call returns the same error and consumes nothing.
#[derive(Debug, Default)]
pub struct FrameReader {
    /// Header bytes received so far (`header_filled` of them).
    header: [u8; HEADER_LEN],
    header_filled: usize,
    /// The checked header of the frame whose payload is being received.
    current: Option<FrameHeader>,
    /// Payload bytes received so far; `len() < current.len`.
    payload: Vec<u8>,
    failed: Option<FrameError>,
}

impl FrameReader {
    /// A reader at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Consumes bytes from the front of `input` up to the end of the next
    /// complete frame and returns its message; `Ok(None)` once all of `input`
    /// is consumed without completing one (the partial frame stays buffered).
    ///
    /// Call again while `input` is not empty: a chunk may hold many frames.
    ///
    /// # Errors
    /// A protocol violation ([`FrameError`]); the reader stays failed and
    /// returns it again on every later call.
    pub fn feed(&mut self, input: &mut &[u8]) -> Result<Option<Message<'static>>, FrameError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.step(input).inspect_err(|e| {
            // Nothing of a failed stream is worth keeping.
            self.payload = Vec::new();
            self.header_filled = 0;
            self.current = None;
            self.failed = Some(e.clone());
        })
    }

    /// Every message completed by `chunk`, as an iterator (feeding the
    /// iterator's remaining input to [`FrameReader::feed`]). It ends after the
    /// chunk is consumed or after the first error.
    ///
    /// Drain it: bytes it has not reached when dropped are not read
    /// ([`Frames::rest`] shows them).
    #[must_use = "the chunk is read only as far as the iterator is driven"]
    pub fn push<'r, 'c>(&'r mut self, chunk: &'c [u8]) -> Frames<'r, 'c> {
        Frames {
            reader: self,
            rest: chunk,
            done: false,
        }
    }

    /// Bytes of the unfinished frame held (header or payload), at most
    /// [`super::MAX_FRAME_LEN`].
    pub fn buffered(&self) -> usize {
        match self.current {
            Some(_) => HEADER_LEN + self.payload.len(),
            None => self.header_filled,
        }
    }

    /// Bytes allocated for the payload buffer: never more than the payload
    /// length of the frame in progress or of the last fixed-size one, so at
    /// most [`super::MAX_BLOCK_LEN`].
    pub fn allocated(&self) -> usize {
        self.payload.capacity()
    }

    /// Bytes still missing to finish the header in progress, or the payload
    /// once the header is complete; 0 after an error.
    pub fn needed(&self) -> usize {
        if self.failed.is_some() {
            return 0;
        }
        match self.current {
            Some(h) => usize::from(h.len).saturating_sub(self.payload.len()),
            None => HEADER_LEN - self.header_filled,
        }
    }

    /// Whether the reader is between frames (no partial frame buffered) and
    /// not failed: where a stream may end cleanly.
    pub fn at_frame_boundary(&self) -> bool {
        self.failed.is_none() && self.current.is_none() && self.header_filled == 0
    }

    /// The error the reader failed with, if it has.
    pub fn error(&self) -> Option<&FrameError> {
        self.failed.as_ref()
    }

    fn step(&mut self, input: &mut &[u8]) -> Result<Option<Message<'static>>, FrameError> {
        loop {
            let Some(header) = self.current else {
                // Receiving the header.
                let unfilled = self
                    .header
                    .get_mut(self.header_filled..)
                    .unwrap_or_default();
                let n = unfilled.len().min(input.len());
                let (head, rest) = input.split_at(n);
                if let Some(dst) = unfilled.get_mut(..n) {
                    dst.copy_from_slice(head);
                }
                *input = rest;
                self.header_filled += n;
                if self.header_filled == 0 {
                    return Ok(None);
                }
                let [type_byte, ..] = self.header;
                MessageType::from_u8(type_byte)?;
                if self.header_filled < HEADER_LEN {
                    return Ok(None);
                }
                let header = FrameHeader::parse(self.header)?;
                self.header_filled = 0;
                let len = usize::from(header.len);
                if header.message_type == MessageType::Block {
                    // Handed over with the message: a buffer of exactly its size.
                    self.payload = Vec::with_capacity(len);
                } else {
                    self.payload.clear();
                    self.payload.reserve_exact(len);
                }
                self.current = Some(header);
                continue;
            };
            // Receiving the payload.
            let missing = usize::from(header.len).saturating_sub(self.payload.len());
            let n = missing.min(input.len());
            let (body, rest) = input.split_at(n);
            self.payload.extend_from_slice(body);
            *input = rest;
            if n < missing {
                return Ok(None);
            }
            self.current = None;
            return Ok(Some(match header.message_type {
                MessageType::Block => Message::Block(Cow::Owned(std::mem::take(&mut self.payload))),
                fixed => {
                    let msg = Message::from_payload(fixed, &self.payload)?.into_owned();
                    // The buffer (≤ 32 bytes) is kept for the next fixed frame.
                    self.payload.clear();
                    msg
                }
            }));
        }
    }
}

/// The messages a chunk completes; see [`FrameReader::push`].
#[derive(Debug)]
pub struct Frames<'r, 'c> {
    reader: &'r mut FrameReader,
    rest: &'c [u8],
    done: bool,
}

impl<'c> Frames<'_, 'c> {
    /// The part of the chunk not consumed yet.
    pub fn rest(&self) -> &'c [u8] {
        self.rest
    }
}

impl Iterator for Frames<'_, '_> {
    type Item = Result<Message<'static>, FrameError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.reader.feed(&mut self.rest) {
            Ok(Some(msg)) => Some(Ok(msg)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl FusedIterator for Frames<'_, '_> {}
