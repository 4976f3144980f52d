//! Output ids in (booking time, output id) order, bucketed by booking time.
//!
//! Every output of a milestone shares its booking time, so a milestone fills one small bucket
//! at the end instead of descending a tree of millions of entries per output, and a spend
//! touches only its own bucket. Pages walk the buckets from the cursor on.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use super::filter::Cursor;
use crate::utxo::OutputId;

/// A set of (booking time, output id), bucketed by booking time.
#[derive(Debug, Default, Clone)]
pub(crate) struct TimeOrdered {
    buckets: BTreeMap<u32, BTreeSet<OutputId>>,
}

impl TimeOrdered {
    /// Adds `key`.
    pub(crate) fn insert(&mut self, key: Cursor) {
        self.buckets.entry(key.0).or_default().insert(key.1);
    }

    /// Removes `key`.
    pub(crate) fn remove(&mut self, key: &Cursor) {
        if let Some(bucket) = self.buckets.get_mut(&key.0) {
            bucket.remove(&key.1);
            if bucket.is_empty() {
                self.buckets.remove(&key.0);
            }
        }
    }

    /// Every key from `from` (inclusive; `None`: from the start), in order.
    pub(crate) fn range_from(&self, from: Option<Cursor>) -> impl Iterator<Item = Cursor> + '_ {
        let start = from.map_or(0, |c| c.0);
        self.buckets.range(start..).flat_map(move |(ts, ids)| {
            let lower = match from {
                Some((t, id)) if t == *ts => Bound::Included(id),
                _ => Bound::Unbounded,
            };
            ids.range((lower, Bound::Unbounded))
                .map(move |id| (*ts, *id))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> OutputId {
        [n; 34]
    }

    #[test]
    fn walks_in_order_from_any_cursor() {
        let mut t = TimeOrdered::default();
        for key in [(2, id(5)), (1, id(9)), (2, id(1)), (3, id(0)), (1, id(2))] {
            t.insert(key);
        }
        t.remove(&(3, id(0)));
        t.remove(&(3, id(0)));
        let all: Vec<Cursor> = t.range_from(None).collect();
        assert_eq!(all, vec![(1, id(2)), (1, id(9)), (2, id(1)), (2, id(5))]);
        let from: Vec<Cursor> = t.range_from(Some((2, id(3)))).collect();
        assert_eq!(from, vec![(2, id(5))]);
        assert_eq!(t.range_from(Some((1, id(9)))).count(), 3);
        assert_eq!(t.range_from(Some((4, id(0)))).count(), 0);
        assert!(t.buckets.len() == 2, "an emptied bucket is dropped");
    }
}
