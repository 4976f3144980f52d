//! The UTXO ledger as columns keyed by a dense row id.
//!
//! Every output booked gets a row; its columns hold the output id,
//! amount, owning address (through the address dictionary), booking and
//! spending milestone, the spending transaction and where the output's
//! bytes are (inside a block record of the log, or in the genesis blob), so
//! reads of the output itself are zero-copy views of the log. A spent row stays until the
//! engine has stored it on disk ([`Ledger::spent_rows_through`], then
//! [`Ledger::drop_spent_through`]); its slot is then reused by the next output booked, so the
//! columns follow the unspent set, not the history of transactions.
//!
//! A milestone is applied with [`Ledger::apply`]: every check runs before
//! anything is changed, so the ledger moves by exactly one index or not at
//! all. The milestone's diff (created and consumed outputs) is not kept here: the engine
//! journals it (`crate::history::Journal`) and reads it back from there.

// foldhash-backed map for the hot lookups (address and output ids).
use hashbrown::HashMap as FastMap;

/// Output id: transaction id ‖ u16 LE output index.
pub type OutputId = [u8; 34];
/// Serialized address: type byte ‖ 32-byte id.
pub type AddressBytes = [u8; 33];

/// Where an output's serialized bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BytesLoc {
    /// Which blob: a block record position in the log, or [`BytesLoc::GENESIS`].
    pub record: u64,
    /// Offset of the output inside that blob.
    pub offset: u32,
    /// Length of the serialized output.
    pub len: u32,
}

impl BytesLoc {
    /// `record` value of outputs whose bytes live in the genesis blob.
    pub const GENESIS: u64 = u64::MAX;
}

/// Dense ids for addresses.
#[derive(Debug, Default, Clone)]
pub struct AddressDict {
    ids: FastMap<AddressBytes, u32>,
    bytes: Vec<AddressBytes>,
}

impl AddressDict {
    /// The id of `a`, adding it when new.
    pub fn intern(&mut self, a: &AddressBytes) -> u32 {
        if let Some(id) = self.ids.get(a) {
            return *id;
        }
        let id = u32::try_from(self.bytes.len()).unwrap_or(u32::MAX);
        self.bytes.push(*a);
        self.ids.insert(*a, id);
        id
    }
    /// The id of `a`, if known.
    pub fn get(&self, a: &AddressBytes) -> Option<u32> {
        self.ids.get(a).copied()
    }
    /// The address of `id`.
    pub fn address(&self, id: u32) -> Option<&AddressBytes> {
        self.bytes.get(id as usize)
    }
    /// Number of addresses.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// An output to book.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOutput {
    /// Its id.
    pub output_id: OutputId,
    /// The block whose transaction created it (zero for genesis outputs).
    pub block_id: [u8; 32],
    /// Amount of base tokens.
    pub amount: u64,
    /// Owning address for the rich list (None: no owner, e.g. treasury).
    pub owner: Option<AddressBytes>,
    /// Where its bytes are.
    pub loc: BytesLoc,
}

/// One output with everything the ledger knows about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputRow {
    /// Output id.
    pub output_id: OutputId,
    /// Creating block.
    pub block_id: [u8; 32],
    /// Amount.
    pub amount: u64,
    /// Owning address.
    pub owner: Option<AddressBytes>,
    /// Milestone that booked it.
    pub booked_index: u32,
    /// That milestone's timestamp.
    pub booked_timestamp: u32,
    /// Spending milestone, transaction and timestamp, when spent.
    pub spent: Option<Spent>,
    /// Where its bytes are.
    pub loc: BytesLoc,
}

/// How an output was spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spent {
    /// Milestone that spent it.
    pub index: u32,
    /// That milestone's timestamp.
    pub timestamp: u32,
    /// Spending transaction.
    pub transaction_id: [u8; 32],
}

/// Why a milestone could not be applied. Nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The milestone is not the next index.
    #[error("milestone {got} does not follow ledger index {current}")]
    NotNext {
        /// Current ledger index.
        current: u32,
        /// Index given.
        got: u32,
    },
    /// An output to create exists already.
    #[error("output {0} exists already")]
    Exists(String),
    /// An output to consume is unknown or spent.
    #[error("output {0} is not unspent")]
    NotUnspent(String),
}

const NO_OWNER: u32 = u32::MAX;
/// `spent_index` (and `booked_index`) of a slot whose row was dropped, free for the next
/// output booked.
const VACANT: u32 = u32::MAX;

/// The columnar UTXO ledger.
#[derive(Debug, Default, Clone)]
pub struct Ledger {
    rows: FastMap<OutputId, u32>,
    output_id: Vec<OutputId>,
    block_id: Vec<[u8; 32]>,
    amount: Vec<u64>,
    owner: Vec<u32>,
    booked_index: Vec<u32>,
    booked_ts: Vec<u32>,
    // 0 = unspent (milestone indices start at 1).
    spent_index: Vec<u32>,
    spent_ts: Vec<u32>,
    spent_tx: Vec<[u8; 32]>,
    loc: Vec<BytesLoc>,
    addresses: AddressDict,
    ledger_index: u32,
    unspent: usize,
    // Slots of dropped rows, reused by the next outputs booked.
    free: Vec<u32>,
    // Rows spent and not dropped yet, in the order they were spent.
    spent_rows: Vec<u32>,
}

fn hex_id(id: &[u8]) -> String {
    ledger_codec::hexstr::to_hex(id)
}

impl Ledger {
    /// An empty ledger at `index` (the genesis milestone index).
    pub fn new(index: u32) -> Self {
        Self {
            ledger_index: index,
            ..Self::default()
        }
    }

    /// The index of the last applied milestone.
    pub fn ledger_index(&self) -> u32 {
        self.ledger_index
    }

    /// Number of row slots (unspent rows, spent rows not dropped yet, and free slots, for
    /// which [`Ledger::row`] answers `None`).
    pub fn rows(&self) -> usize {
        self.output_id.len()
    }

    /// The unspent outputs with their booking milestone and timestamp, in row order.
    pub fn unspent_rows(&self) -> impl Iterator<Item = (NewOutput, u32, u32)> + '_ {
        (0..self.output_id.len())
            .filter(|&r| self.spent_index[r] == 0)
            .map(|r| {
                let owner = match self.owner[r] {
                    NO_OWNER => None,
                    id => self.addresses.address(id).copied(),
                };
                let output = NewOutput {
                    output_id: self.output_id[r],
                    block_id: self.block_id[r],
                    amount: self.amount[r],
                    owner,
                    loc: self.loc[r],
                };
                (output, self.booked_index[r], self.booked_ts[r])
            })
    }

    /// Spent rows still held (not dropped yet).
    pub fn spent_in_memory(&self) -> usize {
        self.spent_rows.len()
    }

    /// Number of unspent outputs.
    pub fn unspent_count(&self) -> usize {
        self.unspent
    }

    /// The address dictionary.
    pub fn addresses(&self) -> &AddressDict {
        &self.addresses
    }

    fn push(&mut self, o: &NewOutput, index: u32, timestamp: u32) -> u32 {
        let owner = o
            .owner
            .as_ref()
            .map_or(NO_OWNER, |a| self.addresses.intern(a));
        self.unspent += 1;
        if let Some(row) = self.free.pop() {
            let r = row as usize;
            self.rows.insert(o.output_id, row);
            self.output_id[r] = o.output_id;
            self.block_id[r] = o.block_id;
            self.amount[r] = o.amount;
            self.owner[r] = owner;
            self.booked_index[r] = index;
            self.booked_ts[r] = timestamp;
            self.spent_index[r] = 0;
            self.spent_ts[r] = 0;
            self.spent_tx[r] = [0; 32];
            self.loc[r] = o.loc;
            return row;
        }
        let row = u32::try_from(self.output_id.len()).unwrap_or(u32::MAX);
        self.rows.insert(o.output_id, row);
        self.output_id.push(o.output_id);
        self.block_id.push(o.block_id);
        self.amount.push(o.amount);
        self.owner.push(owner);
        self.booked_index.push(index);
        self.booked_ts.push(timestamp);
        self.spent_index.push(0);
        self.spent_ts.push(0);
        self.spent_tx.push([0; 32]);
        self.loc.push(o.loc);
        row
    }

    /// Books genesis outputs at the current (genesis) index.
    ///
    /// # Errors
    /// [`LedgerError::Exists`] for a duplicate output id (nothing is booked).
    pub fn book_genesis(
        &mut self,
        outputs: &[NewOutput],
        timestamp: u32,
    ) -> Result<(), LedgerError> {
        let at = self.ledger_index;
        let booked: Vec<_> = outputs.iter().map(|o| (o.clone(), at, timestamp)).collect();
        self.book_genesis_as_booked(&booked)
    }

    /// [`Ledger::book_genesis`] with each output's own booking milestone and timestamp (a
    /// snapshot's outputs keep theirs).
    ///
    /// # Errors
    /// [`LedgerError::Exists`] for a duplicate output id (nothing is booked).
    pub fn book_genesis_as_booked(
        &mut self,
        outputs: &[(NewOutput, u32, u32)],
    ) -> Result<(), LedgerError> {
        let mut seen = std::collections::HashSet::new();
        for (o, _, _) in outputs {
            if self.rows.contains_key(&o.output_id) || !seen.insert(o.output_id) {
                return Err(LedgerError::Exists(hex_id(&o.output_id)));
            }
        }
        for (o, index, timestamp) in outputs {
            self.push(o, *index, *timestamp);
        }
        Ok(())
    }

    /// Applies milestone `index`: books `created`, spends `consumed`
    /// (output id, spending transaction), all or nothing.
    ///
    /// # Errors
    /// See [`LedgerError`]; the ledger is unchanged on error.
    pub fn apply(
        &mut self,
        index: u32,
        timestamp: u32,
        created: &[NewOutput],
        consumed: &[(OutputId, [u8; 32])],
    ) -> Result<(), LedgerError> {
        if Some(index) != self.ledger_index.checked_add(1) {
            return Err(LedgerError::NotNext {
                current: self.ledger_index,
                got: index,
            });
        }
        let mut seen = std::collections::HashSet::new();
        for o in created {
            if self.rows.contains_key(&o.output_id) || !seen.insert(o.output_id) {
                return Err(LedgerError::Exists(hex_id(&o.output_id)));
            }
        }
        let mut spent_rows = Vec::with_capacity(consumed.len());
        let mut spent_seen = std::collections::HashSet::new();
        for (id, _) in consumed {
            let row = self
                .rows
                .get(id)
                .copied()
                .filter(|r| self.spent_index[*r as usize] == 0)
                .filter(|_| spent_seen.insert(*id));
            // An output created in this same milestone may be consumed by a later transaction of it.
            let row = match row {
                Some(r) => Some(r),
                None if seen.contains(id) && spent_seen.insert(*id) => None,
                None => return Err(LedgerError::NotUnspent(hex_id(id))),
            };
            spent_rows.push(row);
        }
        for o in created {
            self.push(o, index, timestamp);
        }
        for ((id, tx), row) in consumed.iter().zip(spent_rows) {
            let Some(row) = row.or_else(|| self.rows.get(id).copied()) else {
                continue;
            };
            let r = row as usize;
            self.spent_index[r] = index;
            self.spent_ts[r] = timestamp;
            self.spent_tx[r] = *tx;
            self.unspent -= 1;
            self.spent_rows.push(row);
        }
        self.ledger_index = index;
        Ok(())
    }

    /// The row of `id`, if the output was ever booked.
    pub fn row_of(&self, id: &OutputId) -> Option<u32> {
        self.rows.get(id).copied()
    }

    /// Everything about `id`.
    pub fn get(&self, id: &OutputId) -> Option<OutputRow> {
        self.row(self.row_of(id)?)
    }

    /// Everything about row `row` (`None` for a free slot).
    pub fn row(&self, row: u32) -> Option<OutputRow> {
        let r = row as usize;
        let output_id = *self.output_id.get(r)?;
        if self.spent_index[r] == VACANT {
            return None;
        }
        let owner = match self.owner[r] {
            NO_OWNER => None,
            id => self.addresses.address(id).copied(),
        };
        let spent = (self.spent_index[r] != 0).then(|| Spent {
            index: self.spent_index[r],
            timestamp: self.spent_ts[r],
            transaction_id: self.spent_tx[r],
        });
        Some(OutputRow {
            output_id,
            block_id: self.block_id[r],
            amount: self.amount[r],
            owner,
            booked_index: self.booked_index[r],
            booked_timestamp: self.booked_ts[r],
            spent,
            loc: self.loc[r],
        })
    }

    /// True when `id` is booked and unspent at the current index.
    pub fn is_unspent(&self, id: &OutputId) -> bool {
        self.rows
            .get(id)
            .is_some_and(|r| self.spent_index[*r as usize] == 0)
    }

    /// The spent rows held whose spending milestone is at or below `index`, in the order
    /// they were spent (to be stored before [`Ledger::drop_spent_through`]).
    pub fn spent_rows_through(&self, index: u32) -> Vec<OutputRow> {
        self.spent_rows
            .iter()
            .filter(|r| self.spent_index[**r as usize] <= index)
            .filter_map(|r| self.row(*r))
            .collect()
    }

    /// Drops the spent rows whose spending milestone is at or below `index` (they are stored
    /// elsewhere now); their slots take the next outputs booked. Returns how many went.
    pub fn drop_spent_through(&mut self, index: u32) -> usize {
        let mut kept = Vec::with_capacity(self.spent_rows.len());
        let mut gone = 0;
        for row in std::mem::take(&mut self.spent_rows) {
            let r = row as usize;
            if self.spent_index[r] > index {
                kept.push(row);
                continue;
            }
            self.rows.remove(&self.output_id[r]);
            self.spent_index[r] = VACANT;
            self.booked_index[r] = VACANT;
            self.free.push(row);
            gone += 1;
        }
        self.spent_rows = kept;
        gone
    }

    /// Forgets the outputs spent at or below milestone `index` (pruning: Hornet deletes the
    /// outputs consumed by a pruned milestone with their spent records, and keeps every
    /// unspent one). Rows are renumbered and free slots go. Returns how many spent rows went.
    pub fn forget_spent_through(&mut self, index: u32) -> usize {
        let keep = |r: usize| self.spent_index[r] == 0 || self.spent_index[r] > index;
        let vacant = self.free.len();
        let kept: Vec<usize> = (0..self.output_id.len())
            .filter(|&r| self.spent_index[r] != VACANT && keep(r))
            .collect();
        let gone = self.output_id.len() - kept.len() - vacant;
        if gone + vacant == 0 {
            return 0;
        }
        fn pick<T: Copy>(col: &[T], kept: &[usize]) -> Vec<T> {
            kept.iter().map(|&r| col[r]).collect()
        }
        self.output_id = pick(&self.output_id, &kept);
        self.block_id = pick(&self.block_id, &kept);
        self.amount = pick(&self.amount, &kept);
        self.owner = pick(&self.owner, &kept);
        self.booked_index = pick(&self.booked_index, &kept);
        self.booked_ts = pick(&self.booked_ts, &kept);
        self.spent_index = pick(&self.spent_index, &kept);
        self.spent_ts = pick(&self.spent_ts, &kept);
        self.spent_tx = pick(&self.spent_tx, &kept);
        self.loc = pick(&self.loc, &kept);
        self.rows = self
            .output_id
            .iter()
            .enumerate()
            .filter_map(|(r, id)| Some((*id, u32::try_from(r).ok()?)))
            .collect();
        self.free.clear();
        self.spent_rows = (0u32..)
            .zip(&self.spent_index)
            .filter(|(_, s)| **s != 0)
            .map(|(r, _)| r)
            .collect();
        gone
    }

    /// The rows held that were booked at or below milestone `index`: once pruning to `index`
    /// forgot the rows spent at or below it, these and the stored spent rows booked then are
    /// the ledger at `index` (the outputs unspent then).
    pub fn rows_booked_through(&self, index: u32) -> impl Iterator<Item = u32> + '_ {
        (0u32..)
            .zip(&self.booked_index)
            .filter(move |(_, b)| **b <= index)
            .map(|(r, _)| r)
    }

    /// Points row `row` at other bytes (the same output moved to a new ledger base).
    pub fn relocate(&mut self, row: u32, loc: BytesLoc) {
        if let Some(l) = self.loc.get_mut(row as usize) {
            *l = loc;
        }
    }

    /// Unspent rows owned by `address` (a scan; for tests and tools).
    pub fn unspent_of(&self, address: &AddressBytes) -> Vec<u32> {
        let Some(id) = self.addresses.get(address) else {
            return Vec::new();
        };
        (0..self.owner.len())
            .filter(|r| self.owner[*r] == id && self.spent_index[*r] == 0)
            .filter_map(|r| u32::try_from(r).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(tx: u8, i: u16, amount: u64, owner: u8) -> NewOutput {
        let mut id = [0u8; 34];
        id[0] = tx;
        id[32..].copy_from_slice(&i.to_le_bytes());
        let mut a = [0u8; 33];
        a[1] = owner;
        NewOutput {
            output_id: id,
            block_id: [tx; 32],
            amount,
            owner: Some(a),
            loc: BytesLoc {
                record: 0,
                offset: 0,
                len: 0,
            },
        }
    }

    #[test]
    fn applies_a_milestone() {
        let mut l = Ledger::new(0);
        l.book_genesis(&[out(1, 0, 100, 1)], 0).unwrap();
        let a = out(2, 0, 60, 2);
        let b = out(2, 1, 40, 1);
        l.apply(
            1,
            10,
            &[a.clone(), b],
            &[(out(1, 0, 0, 0).output_id, [2; 32])],
        )
        .unwrap();
        assert_eq!(l.ledger_index(), 1);
        assert_eq!(l.unspent_count(), 2);
        let spent = l.get(&out(1, 0, 0, 0).output_id).unwrap().spent.unwrap();
        assert_eq!(
            (spent.index, spent.timestamp, spent.transaction_id),
            (1, 10, [2; 32])
        );
        let row = l.get(&a.output_id).unwrap();
        assert_eq!(
            (row.booked_index, row.booked_timestamp, row.amount),
            (1, 10, 60)
        );
    }

    #[test]
    fn refuses_double_spends_and_changes_nothing() {
        let mut l = Ledger::new(0);
        l.book_genesis(&[out(1, 0, 100, 1)], 0).unwrap();
        let g = out(1, 0, 0, 0).output_id;
        let err = l
            .apply(1, 10, &[out(2, 0, 100, 2)], &[(g, [2; 32]), (g, [3; 32])])
            .unwrap_err();
        assert!(matches!(err, LedgerError::NotUnspent(_)));
        assert_eq!(l.ledger_index(), 0);
        assert_eq!(l.rows(), 1);
        l.apply(1, 10, &[], &[(g, [2; 32])]).unwrap();
        assert!(matches!(
            l.apply(2, 11, &[], &[(g, [3; 32])]),
            Err(LedgerError::NotUnspent(_))
        ));
        assert!(matches!(
            l.apply(5, 11, &[], &[]),
            Err(LedgerError::NotNext { current: 1, got: 5 })
        ));
    }

    #[test]
    fn spends_an_output_created_in_the_same_milestone() {
        let mut l = Ledger::new(0);
        let a = out(2, 0, 5, 2);
        l.apply(1, 10, std::slice::from_ref(&a), &[(a.output_id, [3; 32])])
            .unwrap();
        assert!(!l.is_unspent(&a.output_id));
        assert_eq!(l.unspent_count(), 0);
    }

    #[test]
    fn forgets_only_outputs_spent_through_the_index() {
        let mut l = Ledger::new(0);
        l.book_genesis(&[out(1, 0, 100, 1), out(1, 1, 7, 3)], 0)
            .unwrap();
        let a = out(2, 0, 60, 2);
        let b = out(2, 1, 40, 1);
        let genesis = out(1, 0, 0, 0).output_id;
        l.apply(1, 10, &[a.clone(), b.clone()], &[(genesis, [2; 32])])
            .unwrap();
        l.apply(2, 11, &[], &[(a.output_id, [3; 32])]).unwrap();
        assert_eq!(l.forget_spent_through(0), 0);
        assert_eq!(l.forget_spent_through(1), 1);
        assert_eq!(l.get(&genesis), None);
        // Spent after the index: kept, with its metadata.
        let row = l.get(&a.output_id).unwrap();
        assert_eq!(row.spent.map(|s| s.index), Some(2));
        assert_eq!((row.amount, row.booked_index), (60, 1));
        assert!(l.is_unspent(&b.output_id));
        assert_eq!(l.unspent_of(&b.owner.unwrap()).len(), 1);
        assert_eq!((l.rows(), l.unspent_count()), (3, 2));
        assert_eq!(l.forget_spent_through(2), 1);
        assert_eq!(l.get(&a.output_id), None);
        assert_eq!(l.get(&out(1, 1, 0, 0).output_id).map(|r| r.amount), Some(7));
    }

    #[test]
    fn dropped_spent_rows_free_their_slots_for_later_outputs() {
        let mut l = Ledger::new(0);
        l.book_genesis(&[out(1, 0, 100, 1), out(1, 1, 7, 3)], 0)
            .unwrap();
        let genesis = out(1, 0, 0, 0).output_id;
        let a = out(2, 0, 100, 2);
        l.apply(1, 10, std::slice::from_ref(&a), &[(genesis, [2; 32])])
            .unwrap();
        l.apply(2, 11, &[], &[(a.output_id, [3; 32])]).unwrap();
        assert_eq!(l.spent_in_memory(), 2);
        let through_1: Vec<_> = l.spent_rows_through(1);
        assert_eq!(through_1.len(), 1);
        assert_eq!(through_1[0].output_id, genesis);
        assert_eq!(through_1[0].spent.map(|s| s.index), Some(1));
        assert_eq!(l.drop_spent_through(1), 1);
        assert_eq!(l.get(&genesis), None);
        assert_eq!(l.spent_in_memory(), 1);
        assert_eq!(l.rows_booked_through(5).count(), 2);
        // The next output takes the free slot.
        let b = out(3, 0, 9, 4);
        l.apply(3, 12, std::slice::from_ref(&b), &[]).unwrap();
        assert_eq!(l.rows(), 3);
        assert_eq!(
            l.get(&b.output_id).map(|r| (r.amount, r.booked_index)),
            Some((9, 3))
        );
        assert_eq!(l.unspent_of(&b.owner.unwrap()).len(), 1);
        // A spent output that is no longer held cannot be spent again.
        assert!(matches!(
            l.apply(4, 13, &[], &[(genesis, [4; 32])]),
            Err(LedgerError::NotUnspent(_))
        ));
        assert_eq!(l.drop_spent_through(9), 1);
        assert_eq!(l.forget_spent_through(9), 0);
        assert_eq!((l.rows(), l.unspent_count()), (2, 2));
        assert_eq!(l.get(&out(1, 1, 0, 0).output_id).map(|r| r.amount), Some(7));
        assert_eq!(l.get(&b.output_id).map(|r| r.amount), Some(9));
    }
}
