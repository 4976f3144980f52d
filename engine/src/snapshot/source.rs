//! Exact, positioned reads from a snapshot file: every read is whole or an error naming the
//! file, section and byte offset; every length is checked against its cap before anything is
//! allocated (docs/snapshots-pruning.md §1.10).

use std::io::{self, Read};

use super::SnapshotError;

/// A reader that knows its byte position and which part of which file it is in.
pub(crate) struct Source<R> {
    inner: R,
    pos: u64,
    file: &'static str,
    section: &'static str,
}

impl<R: Read> Source<R> {
    pub(crate) fn new(inner: R, file: &'static str) -> Self {
        Self {
            inner,
            pos: 0,
            file,
            section: "header",
        }
    }

    /// Bytes consumed so far.
    pub(crate) fn pos(&self) -> u64 {
        self.pos
    }

    pub(crate) fn set_section(&mut self, section: &'static str) {
        self.section = section;
    }

    /// A format error at `offset` in the current section.
    pub(crate) fn error_at(&self, offset: u64, reason: impl Into<String>) -> SnapshotError {
        SnapshotError::Format {
            file: self.file,
            section: self.section,
            offset,
            reason: reason.into(),
        }
    }

    /// One read into `buf` (retried when interrupted): the bytes read, 0 at the end.
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize, SnapshotError> {
        loop {
            match self.inner.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(SnapshotError::Io {
                        file: self.file,
                        section: self.section,
                        offset: self.pos,
                        source,
                    })
                }
                Ok(n) => return Ok(n),
            }
        }
    }

    /// Fills `buf` completely; a file that ends first is a format error naming `what`.
    pub(crate) fn fill(&mut self, buf: &mut [u8], what: &str) -> Result<(), SnapshotError> {
        let start = self.pos;
        let mut done = 0;
        while done < buf.len() {
            let n = self.read_some(&mut buf[done..])?;
            if n == 0 {
                return Err(self.error_at(
                    start,
                    format!(
                        "file ends inside {what}: {} of {} bytes present",
                        done,
                        buf.len()
                    ),
                ));
            }
            done += n;
            self.pos += n as u64;
        }
        Ok(())
    }

    pub(crate) fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], SnapshotError> {
        let mut buf = [0u8; N];
        self.fill(&mut buf, what)?;
        Ok(buf)
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8, SnapshotError> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &str) -> Result<u16, SnapshotError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, SnapshotError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u64(&mut self, what: &str) -> Result<u64, SnapshotError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn i64(&mut self, what: &str) -> Result<i64, SnapshotError> {
        Ok(i64::from_le_bytes(self.array(what)?))
    }

    /// `len` bytes, refused before allocating when `len` is over `max`.
    pub(crate) fn bytes(
        &mut self,
        len: u32,
        max: u32,
        what: &str,
    ) -> Result<Vec<u8>, SnapshotError> {
        if len > max {
            return Err(self.error_at(
                self.pos.saturating_sub(4),
                format!("{what} length {len} is over the limit of {max} bytes"),
            ));
        }
        let mut buf = vec![0u8; len as usize];
        self.fill(&mut buf, what)?;
        Ok(buf)
    }

    /// Succeeds only at the end of the input.
    pub(crate) fn expect_end(&mut self) -> Result<(), SnapshotError> {
        let mut probe = [0u8; 1];
        match self.read_some(&mut probe)? {
            0 => Ok(()),
            _ => Err(self.error_at(
                self.pos,
                "bytes after the last solid entry point (the file must end there)",
            )),
        }
    }
}
