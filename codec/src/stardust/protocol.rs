//! Protocol parameters (iota.go `protocol.go`) and the rent structure (TIP-19).
//!
//! Binary: `version u8 ‖ networkName (u8 len) ‖ bech32Hrp (u8 len) ‖
//! minPowScore u32 ‖ belowMaxDepth u8 ‖ vByteCost u32 ‖ vByteFactorData u8 ‖
//! vByteFactorKey u8 ‖ tokenSupply u64` (data factor before key factor).

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use crate::error::{Context, Error, Result};
use crate::types::u64_str;
use crate::wire::{Codec, Len, Prefix, Reader};

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

impl<'a> Codec<'a> for RentStructure {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            v_byte_cost: r.u32()?,
            v_byte_factor_data: r.u8()?,
            v_byte_factor_key: r.u8()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.v_byte_cost.to_le_bytes());
        out.push(self.v_byte_factor_data);
        out.push(self.v_byte_factor_key);
        Ok(())
    }
}

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

fn read_string(r: &mut Reader<'_>, name: &'static str) -> Result<String> {
    let b = r.prefixed(&NAME).at(name)?;
    std::str::from_utf8(b)
        .map(str::to_owned)
        .map_err(|_| Error::invalid("not UTF-8").at(name))
}

impl<'a> Codec<'a> for ProtocolParameters {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            version: r.u8().at("version")?,
            network_name: read_string(r, "networkName")?,
            bech32_hrp: read_string(r, "bech32Hrp")?,
            min_pow_score: r.u32().at("minPowScore")?,
            below_max_depth: r.u8().at("belowMaxDepth")?,
            rent_structure: RentStructure::read(r).at("rentStructure")?,
            token_supply: r.u64().at("tokenSupply")?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(self.version);
        let name = self.network_name.as_bytes();
        let name = name.get(..name.len().min(255)).unwrap_or_default();
        NAME.put_bytes(name, out)?;
        let hrp = self.bech32_hrp.as_bytes();
        let hrp = hrp.get(..hrp.len().min(255)).unwrap_or_default();
        NAME.put_bytes(hrp, out)?;
        out.extend_from_slice(&self.min_pow_score.to_le_bytes());
        out.push(self.below_max_depth);
        self.rent_structure.encode(out)?;
        out.extend_from_slice(&self.token_supply.to_le_bytes());
        Ok(())
    }
}
