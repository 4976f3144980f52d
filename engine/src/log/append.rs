//! Appending records: the write path and segment rolls.

use super::*;

impl Log {
    /// Appends a v2 block; its id is BLAKE2b-256 of `bytes`.
    ///
    /// Returns once the record is as durable as the configured [`Durability`] promises. If a
    /// block with the same id is stored already, nothing is written and its location is
    /// returned with `inserted == false` (after waiting for its durability, like a new one).
    ///
    /// # Errors
    /// [`LogError::RecordTooLarge`], I/O errors, [`LogError::Poisoned`] after a failed fsync,
    /// [`LogError::Full`].
    pub fn append_v2(&self, bytes: &[u8]) -> Result<Appended, LogError> {
        let (appended, durable) = self.append_v2_nowait(bytes)?;
        self.wait_durable_at(durable)?;
        Ok(appended)
    }

    /// Appends a v2 block like [`Log::append_v2`] but returns as soon as the record is
    /// written (readable, not yet durable in group-commit mode): acknowledge it only after
    /// [`Log::wait_durable_at`] or [`Log::on_durable`] reports the returned position durable.
    /// For a block stored already, the position is that record's.
    ///
    /// # Errors
    /// As [`Log::append_v2`], except the fsync outcome, which the wait reports.
    pub fn append_v2_nowait(&self, bytes: &[u8]) -> Result<(Appended, Durable), LogError> {
        let id = BlockId::V2(ledger_codec::hash::blake2b256(bytes));
        self.append_nowait(&id, bytes)
    }

    /// Appends a v3 block under the id the caller computed (hash and slot).
    ///
    /// Same contract as [`Log::append_v2`].
    ///
    /// # Errors
    /// As [`Log::append_v2`].
    pub fn append_v3(&self, id: [u8; 36], bytes: &[u8]) -> Result<Appended, LogError> {
        self.append(&BlockId::V3(id), bytes)
    }
}

impl Inner {
    /// Seals the active segment and starts the next one. Order: seal frame, fsync, the
    /// segment's index file (written under a temporary name, fsynced, renamed, directory
    /// fsynced), the next segment (likewise), then the in-memory index drops the sealed
    /// segment's records. A failure leaves the writer on the sealed segment, so the next
    /// append retries the roll (the seal is rewritten with the same bytes).
    pub(super) fn roll(&self, w: &mut Writer) -> Result<(), LogError> {
        let started = std::time::Instant::now();
        let seg = self.segment(w.segment)?;
        let mut body = [0u8; format::SEAL_BODY_LEN];
        body[..4].copy_from_slice(&w.records.to_le_bytes());
        body[4..].copy_from_slice(&w.offset.to_le_bytes());
        w.buf.clear();
        format::encode_frame(&mut w.buf, KIND_SEAL, &[], &body);
        seg.with_file(|f| f.write_all_at(&w.buf, u64::from(w.offset)))
            .map_err(|e| LogError::io("write seal", &seg.path, e))?;
        if let Err(e) = seg.with_file(fs::File::sync_data) {
            self.poison();
            return Err(LogError::io("fsync", &seg.path, e));
        }
        if !seg.is_sealed() {
            let written = {
                let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
                SealedIndex::write(&self.dir, &seg, index.offsets(), w.offset, w.size)?
            };
            // Written from the frames of the in-memory index: verified.
            seg.install_index(written, true);
        }
        self.seal_keys(&seg);
        let next = w
            .segment
            .checked_add(1)
            .ok_or(LogError::Full("too many segments"))?;
        let created = Segment::create(&self.dir, next, self.config.segment_size)?;
        self.segments.install(created)?;
        self.index
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .restart(next, HEADER_LEN as u32);
        let records = w.records;
        *w = Writer {
            segment: next,
            offset: HEADER_LEN as u32,
            size: self.config.segment_size,
            records: 0,
            buf: std::mem::take(&mut w.buf),
        };
        // Appends wait for the whole roll (it holds the writer lock): said at INFO when long.
        let ms = started.elapsed().as_millis();
        if ms >= SLOW_ROLL_MS {
            tracing::info!(
                segment = seg.number,
                records,
                ms,
                "log segment sealed (slow)"
            );
        } else {
            tracing::debug!(segment = seg.number, records, ms, "log segment sealed");
        }
        Ok(())
    }
}

/// A roll taking this long (appends wait for it) is logged at INFO.
const SLOW_ROLL_MS: u128 = 100;

impl Log {
    /// Seals the active segment now and starts the next one, if it holds at least one record
    /// and `min_bytes` of frames; returns whether it did. Pruning uses it to keep segments
    /// small enough that disk follows the pruning index closely (a retired segment is the
    /// unit of disk given back).
    ///
    /// # Errors
    /// As a roll during an append: I/O failures ([`Log::append_v2`]).
    pub fn seal_active(&self, min_bytes: u64) -> Result<bool, LogError> {
        let inner = &*self.inner;
        if inner.poisoned.load(Ordering::Acquire) {
            return Err(LogError::Poisoned);
        }
        let mut w = lock(&inner.writer);
        let used = u64::from(w.offset).saturating_sub(HEADER_LEN as u64);
        if w.records == 0 || used < min_bytes {
            return Ok(false);
        }
        inner.roll(&mut w)?;
        Ok(true)
    }
}
