//! The TIP-26 output indexer, kept incrementally at each confirmation.
//!
//! Every unspent basic, alias, foundry and NFT output has a [`Row`](store::Row). Two ordered
//! indexes give pages in (booking time, output id) order without sorting: one set per output
//! kind, and one set per address of the outputs that address can unlock (address unlock
//! condition, expiration and storage-deposit return addresses, state controller, governor,
//! foundry alias address). A query reads from the address set when it names one of those
//! addresses (tens of rows for a typical address) and from the kind sets otherwise, testing
//! each row against the whole filter and stopping one item after the page. Chain ids (alias,
//! foundry, NFT) map to their current output.

pub mod entry;
pub mod filter;
mod ordered;
mod service;
mod store;

use std::collections::BTreeSet;
use std::ops::Bound;

use hashbrown::HashMap as FastMap;

pub use entry::{ChainId, IndexEntry, OutputKind};
use filter::ResolvedFilter;
pub use filter::{Cursor, Filter, Page, Query};
use ordered::TimeOrdered;
pub use service::IndexerService;
use store::Row;

use crate::utxo::{AddressDict, OutputId};

/// Unspent outputs by kind, address and chain id, at the current ledger index.
#[derive(Debug, Default, Clone)]
pub struct Indexer {
    dict: AddressDict,
    rows: FastMap<OutputId, Row>,
    by_kind: [TimeOrdered; 4],
    by_address: FastMap<u32, BTreeSet<Cursor>>,
    chains: FastMap<ChainId, OutputId>,
    ledger_index: u32,
}

impl Indexer {
    /// An empty indexer at ledger index `index`.
    pub fn new(index: u32) -> Self {
        Self {
            ledger_index: index,
            ..Self::default()
        }
    }

    /// The ledger index the indexer reflects.
    pub fn ledger_index(&self) -> u32 {
        self.ledger_index
    }

    /// Number of indexed (unspent) outputs.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when no output is indexed.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Applies milestone `index` (timestamp `timestamp`): indexes `created`, then drops
    /// `consumed` (an output may be created and consumed by the same milestone).
    pub fn apply(
        &mut self,
        index: u32,
        timestamp: u32,
        created: &[IndexEntry],
        consumed: &[OutputId],
    ) {
        for e in created {
            self.insert(e, timestamp);
        }
        for id in consumed {
            self.remove(id);
        }
        self.ledger_index = index;
    }

    fn insert(&mut self, e: &IndexEntry, created_at: u32) {
        let row = Row::new(e, created_at, &mut self.dict);
        let key = (created_at, e.output_id);
        self.link(&row, key);
        if let Some(old) = self.rows.insert(e.output_id, row) {
            // Booked twice (never by a valid ledger): the old links go, the new ones stay.
            self.unlink(&old, (old.created_at, e.output_id));
            if let Some(new) = self.rows.remove(&e.output_id) {
                self.link(&new, key);
                self.rows.insert(e.output_id, new);
            }
        }
    }

    fn link(&mut self, row: &Row, key: Cursor) {
        self.by_kind[row.kind.slot()].insert(key);
        for a in ResolvedFilter::unlockers(row).into_iter().flatten() {
            self.by_address.entry(a).or_default().insert(key);
        }
        if let Some(c) = row.chain_id() {
            self.chains.insert(c, key.1);
        }
    }

    fn remove(&mut self, id: &OutputId) {
        if let Some(row) = self.rows.remove(id) {
            self.unlink(&row, (row.created_at, *id));
        }
    }

    fn unlink(&mut self, row: &Row, key: Cursor) {
        self.by_kind[row.kind.slot()].remove(&key);
        for a in ResolvedFilter::unlockers(row).into_iter().flatten() {
            if let Some(set) = self.by_address.get_mut(&a) {
                set.remove(&key);
                if set.is_empty() {
                    self.by_address.remove(&a);
                }
            }
        }
        if let Some(c) = row.chain_id() {
            if self.chains.get(&c) == Some(&key.1) {
                self.chains.remove(&c);
            }
        }
    }

    /// The unspent output of chain `id` (alias, foundry or NFT), if it exists.
    pub fn chain_output(&self, id: &ChainId) -> Option<OutputId> {
        self.chains.get(id).copied()
    }

    /// The filter with its addresses as dictionary ids; `None` when it names an address no
    /// output ever had (nothing can match).
    fn resolve<'a>(&self, f: &'a Filter) -> Option<ResolvedFilter<'a>> {
        let id = |a: &Option<[u8; 33]>| -> Option<Option<u32>> {
            match a {
                None => Some(None),
                Some(a) => self.dict.get(a).map(Some),
            }
        };
        Some(ResolvedFilter {
            f,
            unlockable_by_address: id(&f.unlockable_by_address)?,
            address: id(&f.address)?,
            storage_deposit_return_address: id(&f.storage_deposit_return_address)?,
            expiration_return_address: id(&f.expiration_return_address)?,
            sender: id(&f.sender)?,
            issuer: id(&f.issuer)?,
            state_controller: id(&f.state_controller)?,
            governor: id(&f.governor)?,
            alias_address: id(&f.alias_address)?,
        })
    }

    /// One page of the outputs `q` asks for, in (booking time, output id) order.
    pub fn query(&self, q: &Query) -> Page {
        let page = q.page_size.max(1);
        let mut items: Vec<Cursor> = Vec::with_capacity(page.saturating_add(1).min(1024));
        if let Some(rf) = self.resolve(&q.filter) {
            let from = q.cursor.map_or(Bound::Unbounded, Bound::Included);
            let wanted = |key: &&Cursor| {
                self.rows
                    .get(&key.1)
                    .is_some_and(|r| q.kinds.contains(&r.kind) && rf.matches(r))
            };
            let by_address = [
                rf.unlockable_by_address,
                rf.address,
                rf.state_controller,
                rf.governor,
                rf.alias_address,
                rf.storage_deposit_return_address,
                rf.expiration_return_address,
            ]
            .into_iter()
            .flatten()
            .next();
            match by_address {
                Some(a) => {
                    if let Some(set) = self.by_address.get(&a) {
                        let hits = set.range((from, Bound::Unbounded)).filter(wanted);
                        items.extend(hits.take(page.saturating_add(1)).copied());
                    }
                }
                None => {
                    for kind in OutputKind::ALL.iter().filter(|k| q.kinds.contains(k)) {
                        let keys = self.by_kind[kind.slot()].range_from(q.cursor);
                        let hits = keys.filter(|k| wanted(&k));
                        items.extend(hits.take(page.saturating_add(1)));
                    }
                    items.sort_unstable();
                    items.truncate(page.saturating_add(1));
                }
            }
        }
        let next = (items.len() > page).then(|| items.pop()).flatten();
        Page {
            ledger_index: self.ledger_index,
            items: items.into_iter().map(|(_, id)| id).collect(),
            next,
        }
    }
}
