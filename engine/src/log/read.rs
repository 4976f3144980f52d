//! Reading records: lookups by id and location, and iteration in append order.

use super::*;

impl Log {
    pub(super) fn find(&self, id: &BlockId) -> Option<Entry> {
        let index = self
            .inner
            .index
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        index.find(&self.inner.segments, id)
    }

    pub(super) fn record_end(&self, e: Entry) -> u64 {
        let end = index::parts(&self.inner.segments, e).map_or(0, |p| p.end);
        pos(e.segment, u32::try_from(end).unwrap_or(u32::MAX))
    }

    /// The record with this id.
    pub fn get(&self, id: &BlockId) -> Option<Record<'_>> {
        let e = self.find(id)?;
        self.record(e)
    }

    /// Whether a record with this id is stored.
    pub fn contains(&self, id: &BlockId) -> bool {
        self.find(id).is_some()
    }

    /// The record at `location`, or `None` if no record starts there.
    pub fn read(&self, location: Location) -> Option<Record<'_>> {
        let e = Entry {
            segment: location.segment,
            offset: location.offset,
        };
        let known = {
            let index = self
                .inner
                .index
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            index.contains_entry(e)
        };
        if known {
            self.record(e)
        } else {
            None
        }
    }

    pub(super) fn record(&self, e: Entry) -> Option<Record<'_>> {
        Some(Record::new(
            e.location(),
            index::parts(&self.inner.segments, e)?,
        ))
    }

    /// Records in the index now.
    fn record_count(&self) -> usize {
        self.inner
            .index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .len()
    }

    /// All records in append order, as of this call (later appends are not visited).
    pub fn iter(&self) -> Iter<'_> {
        let end = self.record_count();
        Iter {
            log: self,
            next: 0,
            end,
            buf: VecDeque::new(),
        }
    }

    /// Number of records stored.
    pub fn len(&self) -> u64 {
        u64::try_from(self.record_count()).unwrap_or(u64::MAX)
    }

    /// Whether no record is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Iterator over the records of a [`Log`] in append order; see [`Log::iter`].
pub struct Iter<'a> {
    pub(super) log: &'a Log,
    pub(super) next: usize,
    pub(super) end: usize,
    pub(super) buf: VecDeque<Entry>,
}

impl fmt::Debug for Iter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter")
            .field("next", &self.next)
            .field("end", &self.end)
            .finish()
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = Record<'a>;

    fn next(&mut self) -> Option<Record<'a>> {
        if self.buf.is_empty() && self.next < self.end {
            // Copy a batch of entries so the index lock is taken once per 1024 records.
            let upto = self.end.min(self.next.saturating_add(1024));
            let index = self
                .log
                .inner
                .index
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            self.buf
                .extend(index.entries.get(self.next..upto).unwrap_or_default());
            self.next = upto;
        }
        let e = self.buf.pop_front()?;
        self.log.record(e)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self
            .end
            .saturating_sub(self.next)
            .saturating_add(self.buf.len());
        (n, Some(n))
    }
}
