//! v2 (Stardust) wire format: TIP-18..24, 29, 34.
//!
//! Every wire type implements [`Codec`](crate::Codec): `read` borrows from
//! the input and applies the syntactic rules of the format (counts, ranges,
//! ordering, uniqueness, allowed kinds per place); `encode` writes the exact
//! bytes. Checks that need the protocol parameters (network id, token supply,
//! storage deposit, protocol version) are separate `validate` methods.

pub mod address;
pub mod block;
pub mod ids;
pub mod input;
pub mod layout;
pub mod milestone;
pub mod output;
pub mod payload;
pub mod protocol;
pub mod unlock;

pub use address::Address;
pub use block::Block;
pub use ids::{
    alias_id, foundry_id, inputs_commitment, inputs_commitment_of_bytes, merkle_root, network_id,
    nft_id, OutputId,
};
pub use input::{Input, TreasuryInput, UtxoInput};
pub use layout::{
    fill_parents, output_spans, payload_bytes, payload_kind, transaction_id_of_block,
};
pub use milestone::{
    MigratedFundsEntry, Milestone, MilestoneOption, ProtocolParamsOption, Receipt,
    TailTransactionHash,
};
pub use output::{
    AliasOutput, BasicOutput, Feature, FoundryOutput, NativeToken, NftOutput, Output,
    SimpleTokenScheme, TokenScheme, TreasuryOutput, UnlockCondition,
};
pub use payload::{Essence, Payload, TaggedData, Transaction, TreasuryTransaction};
pub use protocol::{ProtocolParameters, RentStructure};
pub use unlock::{Ed25519Signature, Unlock};

use crate::error::{Error, Result};

/// Protocol version of Stardust blocks.
pub const PROTOCOL_VERSION: u8 = 2;

/// Checks that type-keyed elements are in ascending type order with at most
/// one of each type; the error is located at `list` (e.g.
/// `unlockConditions: not sorted by type`).
pub(crate) fn check_types_ascending(
    kinds: impl IntoIterator<Item = u8>,
    list: &'static str,
) -> Result<()> {
    let mut prev: Option<u8> = None;
    for k in kinds {
        if let Some(e) = crate::wire::type_order_error(prev, k) {
            return Err(Error::new(e).at(list));
        }
        prev = Some(k);
    }
    Ok(())
}

/// Serde modules for structs whose JSON carries a fixed numeric `"type"`:
/// `typed_serde!(t1 = 1)` for a field, `typed_serde!(opt t5_opt = 5)` for an optional one.
/// Only the modules some field uses are declared (no dead code to allow).
macro_rules! typed_serde {
    ($name:ident = $ty:expr) => {
        pub(crate) mod $name {
            use serde::{de::DeserializeOwned, Deserializer, Serialize, Serializer};

            pub(crate) fn serialize<S: Serializer, T: Serialize>(
                v: &T,
                s: S,
            ) -> Result<S::Ok, S::Error> {
                crate::types::tagged::serialize(s, $ty, v)
            }

            pub(crate) fn deserialize<'de, D: Deserializer<'de>, T: DeserializeOwned>(
                d: D,
            ) -> Result<T, D::Error> {
                crate::types::tagged::deserialize_fixed::<D, T, $ty>(d)
            }
        }
    };
    (opt $opt:ident = $ty:expr) => {
        pub(crate) mod $opt {
            use serde::{de::DeserializeOwned, Deserializer, Serialize, Serializer};

            pub(crate) fn serialize<S: Serializer, T: Serialize>(
                v: &Option<T>,
                s: S,
            ) -> Result<S::Ok, S::Error> {
                match v {
                    Some(v) => crate::types::tagged::serialize(s, $ty, v),
                    None => s.serialize_none(),
                }
            }

            pub(crate) fn deserialize<'de, D: Deserializer<'de>, T: DeserializeOwned>(
                d: D,
            ) -> Result<Option<T>, D::Error> {
                crate::types::tagged::deserialize_fixed_opt::<D, T, $ty>(d)
            }
        }
    };
}

/// Serde for a struct that carries a fixed numeric `"type"` in its own JSON:
/// the struct derives `#[serde(remote = "Self")]` and this adds the trait
/// impls that put the type first.
macro_rules! typed_struct_serde {
    ($ty:ident, $n:expr) => {
        impl serde::Serialize for $ty<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                struct Body<'r, 'a>(&'r $ty<'a>);
                impl serde::Serialize for Body<'_, '_> {
                    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                        $ty::serialize(self.0, s)
                    }
                }
                crate::types::tagged::serialize(s, $n, &Body(self))
            }
        }

        crate::types::tagged::deserialize_tagged!($ty<'_>, |ty, rest| {
            crate::types::tagged::require_type::<D::Error>(ty, $n, stringify!($ty))?;
            $ty::deserialize(rest)
        });
    };
}
pub(crate) use typed_struct_serde;

pub(crate) mod typed {
    typed_serde!(t1 = 1);
    typed_serde!(t2 = 2);
    typed_serde!(opt t5_opt = 5);
}
