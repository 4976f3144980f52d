//! A TIP-26 query: which kinds, which filters, which page.
//!
//! Every filter follows inx-indexer's semantics: a time bound is strict (`expiresBefore`
//! keeps expiration times `<` the bound), `unlockableByAddress` matches the address, the
//! expiration return address or the storage deposit return address of basic and NFT outputs,
//! the state controller or governor of alias outputs and the alias address of foundries.

use super::entry::OutputKind;
use super::store::Row;
use crate::utxo::{AddressBytes, OutputId};

/// The filters of one query; `None` leaves a field unconstrained.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Any native tokens (true) or none (false).
    pub has_native_tokens: Option<bool>,
    /// At least this many native tokens.
    pub min_native_token_count: Option<u32>,
    /// At most this many native tokens.
    pub max_native_token_count: Option<u32>,
    /// Outputs this address can unlock now or after expiry/return.
    pub unlockable_by_address: Option<AddressBytes>,
    /// Basic/NFT address unlock condition.
    pub address: Option<AddressBytes>,
    /// Has a storage deposit return condition.
    pub has_storage_deposit_return: Option<bool>,
    /// Storage deposit return address.
    pub storage_deposit_return_address: Option<AddressBytes>,
    /// Has an expiration condition.
    pub has_expiration: Option<bool>,
    /// Expires strictly before.
    pub expires_before: Option<u32>,
    /// Expires strictly after.
    pub expires_after: Option<u32>,
    /// Expiration return address.
    pub expiration_return_address: Option<AddressBytes>,
    /// Has a timelock condition.
    pub has_timelock: Option<bool>,
    /// Timelocked strictly before.
    pub timelocked_before: Option<u32>,
    /// Timelocked strictly after.
    pub timelocked_after: Option<u32>,
    /// Sender feature.
    pub sender: Option<AddressBytes>,
    /// Tag feature.
    pub tag: Option<Vec<u8>>,
    /// Immutable issuer feature.
    pub issuer: Option<AddressBytes>,
    /// Alias state controller.
    pub state_controller: Option<AddressBytes>,
    /// Alias governor.
    pub governor: Option<AddressBytes>,
    /// Foundry alias address.
    pub alias_address: Option<AddressBytes>,
    /// Booked strictly before (milestone timestamp).
    pub created_before: Option<u32>,
    /// Booked strictly after (milestone timestamp).
    pub created_after: Option<u32>,
}

/// Where a page starts: the (booking time, output id) of its first item, inclusive.
pub type Cursor = (u32, OutputId);

/// One query: the kinds to search, the filters, the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// Kinds searched (the combined endpoint searches all four).
    pub kinds: Vec<OutputKind>,
    /// The filters.
    pub filter: Filter,
    /// Items per page (≥ 1).
    pub page_size: usize,
    /// Start of the page; `None` for the first page.
    pub cursor: Option<Cursor>,
}

/// One page of results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The ledger index the page is valid for.
    pub ledger_index: u32,
    /// Output ids, ordered by booking time then output id.
    pub items: Vec<OutputId>,
    /// Start of the next page, when there is one.
    pub next: Option<Cursor>,
}

/// Resolves the filter's addresses to the store's ids; `None` when an address the filter
/// requires was never seen (then nothing can match).
#[derive(Debug, Clone)]
pub(super) struct ResolvedFilter<'a> {
    pub f: &'a Filter,
    pub unlockable_by_address: Option<u32>,
    pub address: Option<u32>,
    pub storage_deposit_return_address: Option<u32>,
    pub expiration_return_address: Option<u32>,
    pub sender: Option<u32>,
    pub issuer: Option<u32>,
    pub state_controller: Option<u32>,
    pub governor: Option<u32>,
    pub alias_address: Option<u32>,
}

fn flag(want: Option<bool>, has: bool) -> bool {
    want.is_none_or(|w| w == has)
}

fn eq(want: Option<u32>, got: Option<u32>) -> bool {
    want.is_none_or(|w| got == Some(w))
}

fn before(bound: Option<u32>, got: Option<u32>) -> bool {
    bound.is_none_or(|b| got.is_some_and(|t| t < b))
}

fn after(bound: Option<u32>, got: Option<u32>) -> bool {
    bound.is_none_or(|b| got.is_some_and(|t| t > b))
}

impl ResolvedFilter<'_> {
    /// The address ids an output of `row` can be unlocked by, per its kind.
    pub(super) fn unlockers(row: &Row) -> [Option<u32>; 3] {
        match row.kind {
            OutputKind::Basic | OutputKind::Nft => [
                row.address,
                row.expiration().map(|(a, _)| a),
                row.storage_deposit_return().map(|(a, _)| a),
            ],
            OutputKind::Alias => [row.address, row.governor(), None],
            OutputKind::Foundry => [row.address, None, None],
        }
    }

    /// True when `row` passes every filter.
    pub(super) fn matches(&self, row: &Row) -> bool {
        let f = self.f;
        let n = u32::from(row.native_tokens);
        let kind = row.kind;
        let holder = matches!(kind, OutputKind::Basic | OutputKind::Nft);
        let controller = (kind == OutputKind::Alias).then_some(row.address).flatten();
        let foundry_alias = (kind == OutputKind::Foundry)
            .then_some(row.address)
            .flatten();
        flag(f.has_native_tokens, n > 0)
            && f.min_native_token_count.is_none_or(|m| n >= m)
            && f.max_native_token_count.is_none_or(|m| n <= m)
            && self
                .unlockable_by_address
                .is_none_or(|a| Self::unlockers(row).contains(&Some(a)))
            && eq(self.address, holder.then_some(row.address).flatten())
            && flag(
                f.has_storage_deposit_return,
                row.storage_deposit_return().is_some(),
            )
            && eq(
                self.storage_deposit_return_address,
                row.storage_deposit_return().map(|(a, _)| a),
            )
            && flag(f.has_expiration, row.expiration().is_some())
            && before(f.expires_before, row.expiration().map(|(_, t)| t))
            && after(f.expires_after, row.expiration().map(|(_, t)| t))
            && eq(
                self.expiration_return_address,
                row.expiration().map(|(a, _)| a),
            )
            && flag(f.has_timelock, row.timelock().is_some())
            && before(f.timelocked_before, row.timelock())
            && after(f.timelocked_after, row.timelock())
            && eq(self.sender, row.sender())
            && f.tag.as_deref().is_none_or(|t| row.tag() == Some(t))
            && eq(self.issuer, row.issuer())
            && eq(self.state_controller, controller)
            && eq(self.governor, row.governor())
            && eq(self.alias_address, foundry_alias)
            && before(f.created_before, Some(row.created_at))
            && after(f.created_after, Some(row.created_at))
    }
}
