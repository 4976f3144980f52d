//! Protocol parameters (iota.go `protocol.go`) and the rent structure (TIP-19).
//!
//! Binary: `version u8 ‖ networkName (u8 len) ‖ bech32Hrp (u8 len) ‖
//! minPowScore u32 ‖ belowMaxDepth u8 ‖ vByteCost u32 ‖ vByteFactorData u8 ‖
//! vByteFactorKey u8 ‖ tokenSupply u64` (data factor before key factor).

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use crate::types::u64_str;
use crate::wire::{fields_codec, Len, Prefix};

/// Network name / bech32 HRP: u8-prefixed strings.
pub const NAME: Len = Len::new(Prefix::U8, 0, 255);

/// Storage deposit parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RentStructure {
    /// Cost of one virtual byte.
    pub v_byte_cost: u32,
    /// Weight of data bytes.
    pub v_byte_factor_data: u8,
    /// Weight of key bytes.
    pub v_byte_factor_key: u8,
}

impl RentStructure {
    /// Minimum deposit of an output of `len` serialized bytes:
    /// `cost × (key·34 + data·(32+4+4) + data·len)` (saturating).
    pub fn min_deposit(&self, len: usize) -> u64 {
        let key = u64::from(self.v_byte_factor_key);
        let data = u64::from(self.v_byte_factor_data);
        let len = u64::try_from(len).unwrap_or(u64::MAX);
        let vbytes = key
            .saturating_mul(34)
            .saturating_add(data.saturating_mul(40))
            .saturating_add(data.saturating_mul(len));
        u64::from(self.v_byte_cost).saturating_mul(vbytes)
    }
}

fields_codec!(RentStructure {
    v_byte_cost: "vByteCost",
    v_byte_factor_data: "vByteFactorData",
    v_byte_factor_key: "vByteFactorKey"
});

/// The v2 protocol parameters (the `/info` `protocol` object and milestone option 1 content).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProtocolParameters {
    /// Protocol version (2 for Stardust).
    pub version: u8,
    /// Network name; the network id is derived from it.
    pub network_name: String,
    /// Bech32 human-readable part.
    pub bech32_hrp: String,
    /// Minimum PoW score.
    pub min_pow_score: u32,
    /// Below-max-depth in milestones.
    pub below_max_depth: u8,
    /// Storage deposit parameters.
    pub rent_structure: RentStructure,
    /// Total token supply.
    #[serde(with = "u64_str")]
    pub token_supply: u64,
}

impl ProtocolParameters {
    /// The network id (first 8 bytes of BLAKE2b-256(network name), LE).
    ///
    /// Every transaction check needs it; the last name and id are memoized
    /// per thread so that a node with one network hashes its name once.
    pub fn network_id(&self) -> u64 {
        thread_local! {
            static LAST: RefCell<Option<(String, u64)>> = const { RefCell::new(None) };
        }
        LAST.with(|last| {
            let Ok(mut last) = last.try_borrow_mut() else {
                return super::ids::network_id(&self.network_name);
            };
            match last.as_ref() {
                Some((name, id)) if *name == self.network_name => *id,
                _ => {
                    let id = super::ids::network_id(&self.network_name);
                    *last = Some((self.network_name.clone(), id));
                    id
                }
            }
        })
    }
}

fields_codec!(ProtocolParameters {
    version: "version",
    network_name: "networkName" with NAME,
    bech32_hrp: "bech32Hrp" with NAME,
    min_pow_score: "minPowScore",
    below_max_depth: "belowMaxDepth",
    rent_structure: "rentStructure",
    token_supply: "tokenSupply",
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::wire::Codec;

    fn params() -> ProtocolParameters {
        ProtocolParameters {
            version: 2,
            network_name: "testnet".into(),
            bech32_hrp: "rms".into(),
            min_pow_score: 0,
            below_max_depth: 15,
            rent_structure: RentStructure {
                v_byte_cost: 100,
                v_byte_factor_data: 1,
                v_byte_factor_key: 10,
            },
            token_supply: 1_000_000,
        }
    }

    #[test]
    fn round_trips_with_the_layout_declared_once() {
        let p = params();
        let bytes = p.to_bytes().unwrap(); // ok: test code
        assert_eq!(&bytes[..9], b"\x02\x07testnet");
        assert_eq!(ProtocolParameters::decode(&bytes).unwrap(), p); // ok: test code
    }

    #[test]
    fn a_name_longer_than_its_prefix_is_refused_not_cut() {
        let mut p = params();
        p.network_name = "n".repeat(256);
        let err = p.to_bytes().unwrap_err(); // ok: test code
        assert_eq!(
            err.kind(),
            &ErrorKind::TooLongToEncode { max: 255, got: 256 }
        );
        assert!(err.to_string().starts_with("networkName: "), "{err}");
    }

    #[test]
    fn a_short_field_is_named_by_its_json_name() {
        let bytes = params().to_bytes().unwrap(); // ok: test code
        let err = ProtocolParameters::decode(&bytes[..bytes.len() - 3]).unwrap_err(); // ok: test code
        assert!(err.to_string().starts_with("tokenSupply: "), "{err}");
        let err = ProtocolParameters::decode(&bytes[..20]).unwrap_err(); // ok: test code
        assert!(
            err.to_string().starts_with("rentStructure.vByteCost: "),
            "{err}"
        );
    }
}
