//! What one output contributes to the indexer: the fields TIP-26 filters on, read once when
//! the output is booked.

use ledger_codec::stardust::{self, Feature, Output, UnlockCondition};

use crate::utxo::{AddressBytes, OutputId};

/// The four output kinds the indexer serves (treasury outputs are not indexed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OutputKind {
    /// Basic output (type 3).
    Basic,
    /// Alias output (type 4).
    Alias,
    /// Foundry output (type 5).
    Foundry,
    /// NFT output (type 6).
    Nft,
}

impl OutputKind {
    /// Every kind, in wire-type order.
    pub const ALL: [Self; 4] = [Self::Basic, Self::Alias, Self::Foundry, Self::Nft];

    /// Position in [`Self::ALL`].
    pub fn slot(self) -> usize {
        match self {
            Self::Basic => 0,
            Self::Alias => 1,
            Self::Foundry => 2,
            Self::Nft => 3,
        }
    }
}

/// The id of a chain output: alias and NFT ids are 32 bytes, foundry ids 38.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChainId {
    /// An alias id.
    Alias([u8; 32]),
    /// A foundry id (alias address ‖ serial number ‖ token scheme type).
    Foundry([u8; 38]),
    /// An NFT id.
    Nft([u8; 32]),
}

/// The indexed fields of one output. Timestamps are unix seconds; a field the output does not
/// have is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The output's id.
    pub output_id: OutputId,
    /// Its kind.
    pub kind: OutputKind,
    /// Number of distinct native tokens it holds.
    pub native_tokens: u8,
    /// Basic/NFT: the address unlock condition.
    pub address: Option<AddressBytes>,
    /// Storage deposit return: return address and amount.
    pub storage_deposit_return: Option<(AddressBytes, u64)>,
    /// Timelock until this time.
    pub timelock: Option<u32>,
    /// Expiration: return address and time.
    pub expiration: Option<(AddressBytes, u32)>,
    /// Alias: state controller.
    pub state_controller: Option<AddressBytes>,
    /// Alias: governor.
    pub governor: Option<AddressBytes>,
    /// Foundry: the controlling alias address.
    pub alias_address: Option<AddressBytes>,
    /// Sender feature.
    pub sender: Option<AddressBytes>,
    /// Immutable issuer feature (alias, NFT).
    pub issuer: Option<AddressBytes>,
    /// Tag feature (basic, NFT).
    pub tag: Option<Box<[u8]>>,
    /// Alias, foundry and NFT outputs: their chain id (implicit ids resolved).
    pub chain_id: Option<ChainId>,
}

impl IndexEntry {
    /// An entry of `kind` with no address, condition, feature or chain id yet.
    pub fn new(output_id: OutputId, kind: OutputKind, native_tokens: u8) -> Self {
        Self {
            output_id,
            kind,
            native_tokens,
            address: None,
            storage_deposit_return: None,
            timelock: None,
            expiration: None,
            state_controller: None,
            governor: None,
            alias_address: None,
            sender: None,
            issuer: None,
            tag: None,
            chain_id: None,
        }
    }

    /// The entry of output `output_id`; `None` for treasury outputs.
    pub fn of(output_id: &OutputId, output: &Output<'_>) -> Option<Self> {
        let kind = match output {
            Output::Basic(_) => OutputKind::Basic,
            Output::Alias(_) => OutputKind::Alias,
            Output::Foundry(_) => OutputKind::Foundry,
            Output::Nft(_) => OutputKind::Nft,
            Output::Treasury(_) => return None,
        };
        let native_tokens = u8::try_from(output.native_tokens().len()).unwrap_or(u8::MAX);
        let mut e = Self::new(*output_id, kind, native_tokens);
        for u in output.unlock_conditions() {
            match u {
                UnlockCondition::Address(a) => e.address = Some(a.to_array()),
                UnlockCondition::StorageDepositReturn {
                    return_address,
                    amount,
                } => e.storage_deposit_return = Some((return_address.to_array(), *amount)),
                UnlockCondition::Timelock(t) => e.timelock = Some(*t),
                UnlockCondition::Expiration {
                    return_address,
                    unix_time,
                } => e.expiration = Some((return_address.to_array(), *unix_time)),
                UnlockCondition::StateControllerAddress(a) => {
                    e.state_controller = Some(a.to_array())
                }
                UnlockCondition::GovernorAddress(a) => e.governor = Some(a.to_array()),
                UnlockCondition::ImmutableAliasAddress(a) => e.alias_address = Some(a.to_array()),
            }
        }
        let (features, immutable) = (output.features(), output.immutable_features());
        for f in features {
            match f {
                Feature::Sender(a) => e.sender = Some(a.to_array()),
                Feature::Tag(t) => e.tag = Some(Box::from(t.as_slice())),
                Feature::Issuer(_) | Feature::Metadata(_) => {}
            }
        }
        for f in immutable {
            if let Feature::Issuer(a) = f {
                e.issuer = Some(a.to_array());
            }
        }
        let implicit = || stardust::OutputId::from_array(output_id);
        e.chain_id = match output {
            Output::Alias(o) if o.alias_id.is_zero() => {
                Some(ChainId::Alias(stardust::alias_id(&implicit())))
            }
            Output::Alias(o) => Some(ChainId::Alias(*o.alias_id.as_array())),
            Output::Nft(o) if o.nft_id.is_zero() => {
                Some(ChainId::Nft(stardust::nft_id(&implicit())))
            }
            Output::Nft(o) => Some(ChainId::Nft(*o.nft_id.as_array())),
            Output::Foundry(_) => output.foundry_id().map(ChainId::Foundry),
            Output::Basic(_) | Output::Treasury(_) => None,
        };
        Some(e)
    }
}
