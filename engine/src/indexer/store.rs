//! The indexer's rows: one compact record per unspent output, addresses as dense ids.

use super::entry::{ChainId, IndexEntry, OutputKind};
use crate::utxo::AddressDict;

/// One unspent output as the indexer keeps it.
///
/// `address` is the address the output's kind is mainly filtered by: the address unlock
/// condition of basic and NFT outputs, the state controller of an alias, the alias address
/// of a foundry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub(super) created_at: u32,
    pub(super) kind: OutputKind,
    pub(super) native_tokens: u8,
    pub(super) address: Option<u32>,
    pub(super) governor: Option<u32>,
    pub(super) storage_deposit_return: Option<(u32, u64)>,
    pub(super) expiration: Option<(u32, u32)>,
    pub(super) timelock: Option<u32>,
    pub(super) sender: Option<u32>,
    pub(super) issuer: Option<u32>,
    pub(super) tag: Option<Box<[u8]>>,
    pub(super) chain_id: Option<ChainId>,
}

impl Row {
    /// The row of `e`, booked at `created_at`, interning its addresses in `dict`.
    pub(super) fn new(e: &IndexEntry, created_at: u32, dict: &mut AddressDict) -> Self {
        let main = match e.kind {
            OutputKind::Basic | OutputKind::Nft => e.address,
            OutputKind::Alias => e.state_controller,
            OutputKind::Foundry => e.alias_address,
        };
        Self {
            created_at,
            kind: e.kind,
            native_tokens: e.native_tokens,
            address: main.map(|a| dict.intern(&a)),
            governor: e.governor.map(|a| dict.intern(&a)),
            storage_deposit_return: e
                .storage_deposit_return
                .map(|(a, amount)| (dict.intern(&a), amount)),
            expiration: e.expiration.map(|(a, t)| (dict.intern(&a), t)),
            timelock: e.timelock,
            sender: e.sender.map(|a| dict.intern(&a)),
            issuer: e.issuer.map(|a| dict.intern(&a)),
            tag: e.tag.clone(),
            chain_id: e.chain_id,
        }
    }
}
