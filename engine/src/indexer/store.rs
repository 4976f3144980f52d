//! The indexer's rows: one compact record per unspent output, addresses as dense ids.
//!
//! Most outputs are plain basic outputs (an address and an amount), so a row holds only what
//! every output has; conditions, features and chain ids, when present, sit in a boxed
//! [`Extra`]. A plain output costs 24 bytes of row.

use super::entry::{ChainId, IndexEntry, OutputKind};
use crate::utxo::AddressDict;

/// One unspent output as the indexer keeps it.
///
/// `address` is the address the output's kind is mainly filtered by: the address unlock
/// condition of basic and NFT outputs, the state controller of an alias, the alias address
/// of a foundry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub(super) created_at: u32,
    pub(super) kind: OutputKind,
    pub(super) native_tokens: u8,
    pub(super) address: Option<u32>,
    extra: Option<Box<Extra>>,
}

/// The fields most outputs do not have.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Extra {
    governor: Option<u32>,
    storage_deposit_return: Option<(u32, u64)>,
    expiration: Option<(u32, u32)>,
    timelock: Option<u32>,
    sender: Option<u32>,
    issuer: Option<u32>,
    tag: Option<Box<[u8]>>,
    chain_id: Option<ChainId>,
}

impl Row {
    /// The row of `e`, booked at `created_at`, interning its addresses in `dict`.
    pub(super) fn new(e: &IndexEntry, created_at: u32, dict: &mut AddressDict) -> Self {
        let main = match e.kind {
            OutputKind::Basic | OutputKind::Nft => e.address,
            OutputKind::Alias => e.state_controller,
            OutputKind::Foundry => e.alias_address,
        };
        let extra = Extra {
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
        };
        Self {
            created_at,
            kind: e.kind,
            native_tokens: e.native_tokens,
            address: main.map(|a| dict.intern(&a)),
            extra: (extra != Extra::default()).then(|| Box::new(extra)),
        }
    }

    fn extra<T>(&self, f: impl FnOnce(&Extra) -> Option<T>) -> Option<T> {
        self.extra.as_deref().and_then(f)
    }

    /// Alias governor.
    pub(super) fn governor(&self) -> Option<u32> {
        self.extra(|e| e.governor)
    }

    /// Storage deposit return address and amount.
    pub(super) fn storage_deposit_return(&self) -> Option<(u32, u64)> {
        self.extra(|e| e.storage_deposit_return)
    }

    /// Expiration return address and time.
    pub(super) fn expiration(&self) -> Option<(u32, u32)> {
        self.extra(|e| e.expiration)
    }

    /// Timelock time.
    pub(super) fn timelock(&self) -> Option<u32> {
        self.extra(|e| e.timelock)
    }

    /// Sender feature.
    pub(super) fn sender(&self) -> Option<u32> {
        self.extra(|e| e.sender)
    }

    /// Immutable issuer feature.
    pub(super) fn issuer(&self) -> Option<u32> {
        self.extra(|e| e.issuer)
    }

    /// Tag feature.
    pub(super) fn tag(&self) -> Option<&[u8]> {
        self.extra.as_deref().and_then(|e| e.tag.as_deref())
    }

    /// Chain id (alias, foundry, NFT).
    pub(super) fn chain_id(&self) -> Option<ChainId> {
        self.extra(|e| e.chain_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_row_is_small() {
        assert!(
            std::mem::size_of::<Row>() <= 24,
            "{}",
            std::mem::size_of::<Row>()
        );
    }
}
