//! Rich list: per-address balances over unspent outputs, kept incrementally.
//!
//! The current balances live in a hash map plus an ordered set sorted by
//! (balance descending, address bytes ascending), so the top N at the
//! current ledger index is a walk over the first N entries of the set.
//! Each milestone also keeps its per-address balance deltas; the top N at an
//! older index rewinds only the addresses touched since then and merges
//! them with the ordered set. The cost depends on N and on the number of
//! addresses touched after the requested index, never on the number of
//! outputs or addresses in the ledger.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap, VecDeque};

/// An address as its 33 serialized bytes (type byte + 32-byte id).
pub type AddressKey = [u8; 33];

/// Why a rich-list query has no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RichListError {
    /// The ledger index is older than the oldest kept or newer than the current one.
    #[error("ledger index {requested} is outside the kept range {oldest}..={current}")]
    OutOfRange {
        /// Index asked for.
        requested: u32,
        /// Oldest index that can be answered.
        oldest: u32,
        /// Current ledger index.
        current: u32,
    },
    /// A milestone delta would make a balance negative or overflow: the caller's bug.
    #[error("balance of an address would leave the u64 range at milestone {0}")]
    Inconsistent(u32),
}

#[derive(Debug, Clone)]
struct MilestoneDelta {
    index: u32,
    // Net change per address during this milestone (never zero).
    changes: Vec<(AddressKey, i128)>,
}

/// Balances per owning address, at the current and at older ledger indices.
#[derive(Debug, Clone)]
pub struct RichList {
    balances: HashMap<AddressKey, u64>,
    order: BTreeSet<(Reverse<u64>, AddressKey)>,
    history: VecDeque<MilestoneDelta>,
    oldest: u32,
    current: u32,
}

impl RichList {
    /// An empty list at ledger index `index` (the genesis index).
    pub fn new(index: u32) -> Self {
        Self {
            balances: HashMap::new(),
            order: BTreeSet::new(),
            history: VecDeque::new(),
            oldest: index,
            current: index,
        }
    }

    /// The current ledger index.
    pub fn ledger_index(&self) -> u32 {
        self.current
    }

    /// The oldest ledger index a query can ask for.
    pub fn oldest_index(&self) -> u32 {
        self.oldest
    }

    /// Current balance of `address` (0 when it holds nothing).
    pub fn balance(&self, address: &AddressKey) -> u64 {
        self.balances.get(address).copied().unwrap_or(0)
    }

    /// Number of addresses with a non-zero balance.
    pub fn len(&self) -> usize {
        self.balances.len()
    }

    /// True when no address holds anything.
    pub fn is_empty(&self) -> bool {
        self.balances.is_empty()
    }

    /// Credits genesis outputs at the genesis index (no history is kept for them).
    ///
    /// # Errors
    /// [`RichListError::Inconsistent`] when a balance would overflow.
    pub fn credit_genesis(
        &mut self,
        address: AddressKey,
        amount: u64,
    ) -> Result<(), RichListError> {
        self.adjust(&address, i128::from(amount))
            .ok_or(RichListError::Inconsistent(self.current))
    }

    /// Applies the balance changes of milestone `index` (= current + 1).
    /// `changes` may name an address several times (one entry per output).
    ///
    /// # Errors
    /// [`RichListError::Inconsistent`] when an index is skipped or a balance
    /// would go negative; nothing is changed then.
    pub fn apply_milestone(
        &mut self,
        index: u32,
        changes: impl IntoIterator<Item = (AddressKey, i128)>,
    ) -> Result<(), RichListError> {
        if Some(index) != self.current.checked_add(1) {
            return Err(RichListError::Inconsistent(index));
        }
        let mut net: HashMap<AddressKey, i128> = HashMap::new();
        for (a, d) in changes {
            *net.entry(a).or_insert(0) += d;
        }
        net.retain(|_, d| *d != 0);
        // Check first so a bad delta changes nothing.
        for (a, d) in &net {
            let after = i128::from(self.balance(a)) + d;
            if after < 0 || after > i128::from(u64::MAX) {
                return Err(RichListError::Inconsistent(index));
            }
        }
        let mut changes: Vec<(AddressKey, i128)> = net.into_iter().collect();
        changes.sort_unstable_by_key(|x| x.0);
        for (a, d) in &changes {
            // Checked above; cannot fail.
            let _ = self.adjust(a, *d);
        }
        self.history.push_back(MilestoneDelta { index, changes });
        self.current = index;
        Ok(())
    }

    /// Forgets the history needed to answer indices older than `index`.
    pub fn prune_before(&mut self, index: u32) {
        let index = index.min(self.current);
        while self.history.front().is_some_and(|m| m.index <= index) {
            self.history.pop_front();
        }
        self.oldest = self.oldest.max(index);
    }

    fn adjust(&mut self, address: &AddressKey, delta: i128) -> Option<()> {
        let before = self.balance(address);
        let after = u64::try_from(i128::from(before) + delta).ok()?;
        if before != 0 {
            self.order.remove(&(Reverse(before), *address));
        }
        if after == 0 {
            self.balances.remove(address);
        } else {
            self.balances.insert(*address, after);
            self.order.insert((Reverse(after), *address));
        }
        Some(())
    }

    /// The `n` richest addresses at ledger index `at`, balance descending,
    /// ties by address bytes ascending.
    ///
    /// # Errors
    /// [`RichListError::OutOfRange`] for an index outside the kept range.
    pub fn top(&self, n: usize, at: u32) -> Result<Vec<(AddressKey, u64)>, RichListError> {
        if at < self.oldest || at > self.current {
            return Err(RichListError::OutOfRange {
                requested: at,
                oldest: self.oldest,
                current: self.current,
            });
        }
        if at == self.current {
            return Ok(self
                .order
                .iter()
                .take(n)
                .map(|(Reverse(b), a)| (*a, *b))
                .collect());
        }
        // Rewind the addresses touched after `at`.
        let mut past: HashMap<AddressKey, i128> = HashMap::new();
        for m in self.history.iter().rev().take_while(|m| m.index > at) {
            for (a, d) in &m.changes {
                let e = past
                    .entry(*a)
                    .or_insert_with(|| i128::from(self.balance(a)));
                *e -= d;
            }
        }
        let mut rewound: Vec<(Reverse<u64>, AddressKey)> = past
            .iter()
            .filter_map(|(a, b)| {
                u64::try_from(*b)
                    .ok()
                    .filter(|b| *b > 0)
                    .map(|b| (Reverse(b), *a))
            })
            .collect();
        rewound.sort_unstable();
        let mut out = Vec::with_capacity(n.min(rewound.len() + self.order.len()));
        let mut current = self
            .order
            .iter()
            .filter(|(_, a)| !past.contains_key(a))
            .peekable();
        let mut old = rewound.iter().peekable();
        while out.len() < n {
            let next = match (current.peek(), old.peek()) {
                (Some(c), Some(o)) => {
                    if *c <= *o {
                        current.next()
                    } else {
                        old.next()
                    }
                }
                (Some(_), None) => current.next(),
                (None, Some(_)) => old.next(),
                (None, None) => None,
            };
            match next {
                Some((Reverse(b), a)) => out.push((*a, *b)),
                None => break,
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn addr(i: u8) -> AddressKey {
        let mut a = [0u8; 33];
        a[32] = i;
        a
    }

    #[test]
    fn ties_are_ordered_by_address_bytes() {
        let mut r = RichList::new(0);
        r.credit_genesis(addr(3), 10).unwrap();
        r.credit_genesis(addr(1), 10).unwrap();
        r.credit_genesis(addr(2), 20).unwrap();
        let top = r.top(10, 0).unwrap();
        assert_eq!(top, vec![(addr(2), 20), (addr(1), 10), (addr(3), 10)]);
    }

    #[test]
    fn rejects_indices_outside_the_kept_range() {
        let mut r = RichList::new(5);
        r.apply_milestone(6, [(addr(1), 4)]).unwrap();
        assert!(matches!(
            r.top(1, 4),
            Err(RichListError::OutOfRange { requested: 4, .. })
        ));
        assert!(matches!(
            r.top(1, 7),
            Err(RichListError::OutOfRange { requested: 7, .. })
        ));
        r.prune_before(6);
        assert!(r.top(1, 5).is_err());
        assert_eq!(r.top(1, 6).unwrap(), vec![(addr(1), 4)]);
    }

    #[test]
    fn refuses_negative_balances_and_skipped_indices() {
        let mut r = RichList::new(0);
        assert_eq!(
            r.apply_milestone(1, [(addr(1), -1)]),
            Err(RichListError::Inconsistent(1))
        );
        assert_eq!(
            r.apply_milestone(2, [(addr(1), 1)]),
            Err(RichListError::Inconsistent(2))
        );
        assert_eq!(r.ledger_index(), 0);
        assert!(r.is_empty());
    }

    proptest! {
        // Model: a full balance table per index, compared with the index at every step.
        #[test]
        fn matches_a_full_snapshot_model(
            genesis in proptest::collection::vec((0u8..12, 1u64..1000), 0..10),
            milestones in proptest::collection::vec(
                proptest::collection::vec((0u8..12, -500i64..500), 0..8), 0..12),
            n in 0usize..15,
        ) {
            let mut r = RichList::new(0);
            let mut model: Vec<HashMap<AddressKey, u64>> = vec![HashMap::new()];
            for (a, v) in genesis {
                r.credit_genesis(addr(a), v).unwrap();
                *model[0].entry(addr(a)).or_insert(0) += v;
            }
            for (i, ms) in milestones.into_iter().enumerate() {
                let mut next = model.last().unwrap().clone();
                // Clamp debits to what the model holds so the deltas are valid.
                let mut changes = Vec::new();
                for (a, d) in ms {
                    let bal = next.entry(addr(a)).or_insert(0);
                    let d = if d < 0 { -(i64::try_from(*bal).unwrap().min(-d)) } else { d };
                    *bal = (i64::try_from(*bal).unwrap() + d) as u64;
                    changes.push((addr(a), i128::from(d)));
                }
                next.retain(|_, b| *b > 0);
                r.apply_milestone(u32::try_from(i).unwrap() + 1, changes).unwrap();
                model.push(next);
            }
            for (at, snapshot) in model.iter().enumerate() {
                let mut want: Vec<(AddressKey, u64)> = snapshot.iter().map(|(a, b)| (*a, *b)).collect();
                want.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
                want.truncate(n);
                prop_assert_eq!(r.top(n, u32::try_from(at).unwrap()).unwrap(), want);
            }
        }
    }
}
