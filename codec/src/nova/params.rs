//! v3 protocol parameters (TIP-49, type 0): JSON, binary form and hash, and
//! the derived network id and slot arithmetic.

use serde::{Deserialize, Serialize};

use crate::error::{Context, Error, ErrorKind, Result};
use crate::hash::blake2b256;
use crate::nova::json::{i64_str, u64_str};
use crate::wire::{Codec, Len, Prefix, Reader};

/// Storage score parameters (TIP-47).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StorageScoreParameters {
    /// Base tokens per storage score unit.
    #[serde(with = "u64_str")]
    pub storage_cost: u64,
    /// Factor per data byte.
    pub factor_data: u8,
    /// Offset for each output.
    #[serde(with = "u64_str")]
    pub offset_output_overhead: u64,
    /// Offset per Ed25519 block issuer key.
    #[serde(with = "u64_str")]
    pub offset_ed25519_block_issuer_key: u64,
    /// Offset per staking feature.
    #[serde(with = "u64_str")]
    pub offset_staking_feature: u64,
    /// Offset per delegation output.
    #[serde(with = "u64_str")]
    pub offset_delegation: u64,
}

/// Work score parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct WorkScoreParameters {
    pub data_byte: u32,
    pub block: u32,
    pub input: u32,
    pub context_input: u32,
    pub output: u32,
    pub native_token: u32,
    pub staking: u32,
    pub block_issuer: u32,
    pub allotment: u32,
    pub signature_ed25519: u32,
}

/// Mana parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct ManaParameters {
    pub bits_count: u8,
    pub generation_rate: u8,
    pub generation_rate_exponent: u8,
    pub decay_factors: Vec<u32>,
    pub decay_factors_exponent: u8,
    pub decay_factor_epochs_sum: u32,
    pub decay_factor_epochs_sum_exponent: u8,
    pub annual_decay_factor_percentage: u8,
}

/// Congestion control parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct CongestionControlParameters {
    #[serde(with = "u64_str")]
    pub min_reference_mana_cost: u64,
    #[serde(with = "u64_str")]
    pub increase: u64,
    #[serde(with = "u64_str")]
    pub decrease: u64,
    pub increase_threshold: u32,
    pub decrease_threshold: u32,
    pub scheduler_rate: u32,
    pub max_buffer_size: u32,
    pub max_validation_buffer_size: u32,
}

/// Version signaling parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct VersionSignalingParameters {
    pub window_size: u8,
    pub window_target_ratio: u8,
    pub activation_offset: u8,
}

/// Rewards parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct RewardsParameters {
    pub profit_margin_exponent: u8,
    pub bootstrapping_duration: u32,
    pub reward_to_generation_ratio: u8,
    #[serde(with = "u64_str")]
    pub initial_target_rewards_rate: u64,
    #[serde(with = "u64_str")]
    pub final_target_rewards_rate: u64,
    pub pool_coefficient_exponent: u8,
    pub retention_period: u16,
}

/// TIP-49 protocol parameters (the JSON object with `"type": 0`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct ProtocolParameters {
    #[serde(rename = "type")]
    pub kind: u8,
    pub version: u8,
    pub network_name: String,
    pub bech32_hrp: String,
    pub storage_score_parameters: StorageScoreParameters,
    pub work_score_parameters: WorkScoreParameters,
    pub mana_parameters: ManaParameters,
    #[serde(with = "u64_str")]
    pub token_supply: u64,
    pub genesis_slot: u32,
    #[serde(with = "i64_str")]
    pub genesis_unix_timestamp: i64,
    pub slot_duration_in_seconds: u8,
    pub slots_per_epoch_exponent: u8,
    pub staking_unbonding_period: u32,
    pub validation_blocks_per_slot: u8,
    pub punishment_epochs: u32,
    pub liveness_threshold_lower_bound: u16,
    pub liveness_threshold_upper_bound: u16,
    pub min_committable_age: u32,
    pub max_committable_age: u32,
    pub epoch_nearing_threshold: u32,
    pub congestion_control_parameters: CongestionControlParameters,
    pub version_signaling_parameters: VersionSignalingParameters,
    pub rewards_parameters: RewardsParameters,
    pub target_committee_size: u8,
    pub chain_switching_threshold: u8,
}

const NAME: Len = Len::new(Prefix::U8, 1, 255);
const HRP: Len = Len::new(Prefix::U8, 1, 83);
const DECAY: Len = Len::new(Prefix::U16, 0, u16::MAX as usize);

fn string(r: &mut Reader<'_>, len: &Len) -> Result<String> {
    let b = r.prefixed(len)?;
    String::from_utf8(b.to_vec()).map_err(|_| Error::invalid("not UTF-8"))
}

impl<'a> Codec<'a> for ProtocolParameters {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let kind = r.u8()?;
        if kind != 0 {
            return Err(ErrorKind::UnknownType(kind.into()).into());
        }
        Ok(Self {
            kind,
            version: r.u8()?,
            network_name: string(r, &NAME).at("networkName")?,
            bech32_hrp: string(r, &HRP).at("bech32Hrp")?,
            storage_score_parameters: StorageScoreParameters {
                storage_cost: r.u64()?,
                factor_data: r.u8()?,
                offset_output_overhead: r.u64()?,
                offset_ed25519_block_issuer_key: r.u64()?,
                offset_staking_feature: r.u64()?,
                offset_delegation: r.u64()?,
            },
            work_score_parameters: WorkScoreParameters {
                data_byte: r.u32()?,
                block: r.u32()?,
                input: r.u32()?,
                context_input: r.u32()?,
                output: r.u32()?,
                native_token: r.u32()?,
                staking: r.u32()?,
                block_issuer: r.u32()?,
                allotment: r.u32()?,
                signature_ed25519: r.u32()?,
            },
            mana_parameters: ManaParameters {
                bits_count: r.u8()?,
                generation_rate: r.u8()?,
                generation_rate_exponent: r.u8()?,
                decay_factors: {
                    let n = r.len(&DECAY)?;
                    (0..n).map(|_| r.u32()).collect::<Result<_>>()?
                },
                decay_factors_exponent: r.u8()?,
                decay_factor_epochs_sum: r.u32()?,
                decay_factor_epochs_sum_exponent: r.u8()?,
                annual_decay_factor_percentage: r.u8()?,
            },
            token_supply: r.u64()?,
            genesis_slot: r.u32()?,
            genesis_unix_timestamp: r.u64()? as i64,
            slot_duration_in_seconds: r.u8()?,
            slots_per_epoch_exponent: r.u8()?,
            staking_unbonding_period: r.u32()?,
            validation_blocks_per_slot: r.u8()?,
            punishment_epochs: r.u32()?,
            liveness_threshold_lower_bound: r.u16()?,
            liveness_threshold_upper_bound: r.u16()?,
            min_committable_age: r.u32()?,
            max_committable_age: r.u32()?,
            epoch_nearing_threshold: r.u32()?,
            congestion_control_parameters: CongestionControlParameters {
                min_reference_mana_cost: r.u64()?,
                increase: r.u64()?,
                decrease: r.u64()?,
                increase_threshold: r.u32()?,
                decrease_threshold: r.u32()?,
                scheduler_rate: r.u32()?,
                max_buffer_size: r.u32()?,
                max_validation_buffer_size: r.u32()?,
            },
            version_signaling_parameters: VersionSignalingParameters {
                window_size: r.u8()?,
                window_target_ratio: r.u8()?,
                activation_offset: r.u8()?,
            },
            rewards_parameters: RewardsParameters {
                profit_margin_exponent: r.u8()?,
                bootstrapping_duration: r.u32()?,
                reward_to_generation_ratio: r.u8()?,
                initial_target_rewards_rate: r.u64()?,
                final_target_rewards_rate: r.u64()?,
                pool_coefficient_exponent: r.u8()?,
                retention_period: r.u16()?,
            },
            target_committee_size: r.u8()?,
            chain_switching_threshold: r.u8()?,
        })
    }

    fn encode(&self, o: &mut Vec<u8>) -> Result<()> {
        fn s(o: &mut Vec<u8>, v: &str, name: &'static str) -> Result<()> {
            Len::new(Prefix::U8, 0, 255)
                .put_bytes(v.as_bytes(), o)
                .at(name)?;
            Ok(())
        }
        o.push(self.kind);
        o.push(self.version);
        s(o, &self.network_name, "networkName")?;
        s(o, &self.bech32_hrp, "bech32Hrp")?;
        let p = &self.storage_score_parameters;
        o.extend_from_slice(&p.storage_cost.to_le_bytes());
        o.push(p.factor_data);
        for v in [
            p.offset_output_overhead,
            p.offset_ed25519_block_issuer_key,
            p.offset_staking_feature,
            p.offset_delegation,
        ] {
            o.extend_from_slice(&v.to_le_bytes());
        }
        let w = &self.work_score_parameters;
        for v in [
            w.data_byte,
            w.block,
            w.input,
            w.context_input,
            w.output,
            w.native_token,
            w.staking,
            w.block_issuer,
            w.allotment,
            w.signature_ed25519,
        ] {
            o.extend_from_slice(&v.to_le_bytes());
        }
        let m = &self.mana_parameters;
        o.extend_from_slice(&[m.bits_count, m.generation_rate, m.generation_rate_exponent]);
        Len::new(Prefix::U16, 0, u16::MAX as usize)
            .put(m.decay_factors.len(), o)
            .at("manaParameters.decayFactors")?;
        for f in &m.decay_factors {
            o.extend_from_slice(&f.to_le_bytes());
        }
        o.push(m.decay_factors_exponent);
        o.extend_from_slice(&m.decay_factor_epochs_sum.to_le_bytes());
        o.push(m.decay_factor_epochs_sum_exponent);
        o.push(m.annual_decay_factor_percentage);
        o.extend_from_slice(&self.token_supply.to_le_bytes());
        o.extend_from_slice(&self.genesis_slot.to_le_bytes());
        o.extend_from_slice(&self.genesis_unix_timestamp.to_le_bytes());
        o.push(self.slot_duration_in_seconds);
        o.push(self.slots_per_epoch_exponent);
        o.extend_from_slice(&self.staking_unbonding_period.to_le_bytes());
        o.push(self.validation_blocks_per_slot);
        o.extend_from_slice(&self.punishment_epochs.to_le_bytes());
        o.extend_from_slice(&self.liveness_threshold_lower_bound.to_le_bytes());
        o.extend_from_slice(&self.liveness_threshold_upper_bound.to_le_bytes());
        o.extend_from_slice(&self.min_committable_age.to_le_bytes());
        o.extend_from_slice(&self.max_committable_age.to_le_bytes());
        o.extend_from_slice(&self.epoch_nearing_threshold.to_le_bytes());
        let c = &self.congestion_control_parameters;
        for v in [c.min_reference_mana_cost, c.increase, c.decrease] {
            o.extend_from_slice(&v.to_le_bytes());
        }
        for v in [
            c.increase_threshold,
            c.decrease_threshold,
            c.scheduler_rate,
            c.max_buffer_size,
            c.max_validation_buffer_size,
        ] {
            o.extend_from_slice(&v.to_le_bytes());
        }
        let v = &self.version_signaling_parameters;
        o.extend_from_slice(&[v.window_size, v.window_target_ratio, v.activation_offset]);
        let rw = &self.rewards_parameters;
        o.push(rw.profit_margin_exponent);
        o.extend_from_slice(&rw.bootstrapping_duration.to_le_bytes());
        o.push(rw.reward_to_generation_ratio);
        o.extend_from_slice(&rw.initial_target_rewards_rate.to_le_bytes());
        o.extend_from_slice(&rw.final_target_rewards_rate.to_le_bytes());
        o.push(rw.pool_coefficient_exponent);
        o.extend_from_slice(&rw.retention_period.to_le_bytes());
        o.push(self.target_committee_size);
        o.push(self.chain_switching_threshold);
        Ok(())
    }
}

pub use crate::hash::network_id;

impl ProtocolParameters {
    /// Parses the TIP-49 JSON object and checks it.
    ///
    /// # Errors
    /// Malformed JSON, or a type/version/slot duration that cannot work.
    pub fn from_json(s: &str) -> Result<Self> {
        let p: Self =
            serde_json::from_str(s).map_err(|e| Error::new(ErrorKind::Json(e.to_string())))?;
        if p.kind != 0 {
            return Err(Error::new(ErrorKind::UnknownType(p.kind.into())).at("type"));
        }
        if p.slot_duration_in_seconds == 0 {
            return Err(Error::invalid("slotDurationInSeconds must not be 0"));
        }
        if p.network_name.is_empty() || p.network_name.len() > 255 || p.bech32_hrp.len() > HRP.max {
            return Err(Error::invalid("networkName/bech32Hrp length out of range"));
        }
        Ok(p)
    }

    /// The network id derived from the network name.
    pub fn network_id(&self) -> u64 {
        network_id(&self.network_name)
    }

    /// BLAKE2b-256 of the binary form.
    ///
    /// # Errors
    /// As [`Codec::encode`]: a name or decay table too long for its prefix.
    pub fn hash(&self) -> Result<[u8; 32]> {
        Ok(blake2b256(&self.to_bytes()?))
    }

    /// The slot of a time given in Unix nanoseconds (TIP-46): genesis slot
    /// before genesis, else `genesisSlot + elapsedSeconds / slotDuration + 1`.
    pub fn slot_of(&self, unix_ns: u64) -> u32 {
        let genesis_ns = i128::from(self.genesis_unix_timestamp) * 1_000_000_000;
        let t = i128::from(unix_ns);
        if t < genesis_ns {
            return self.genesis_slot;
        }
        let elapsed_s = (t - genesis_ns) / 1_000_000_000;
        let dur = i128::from(self.slot_duration_in_seconds.max(1));
        let slot = i128::from(self.genesis_slot) + elapsed_s / dur + 1;
        u32::try_from(slot).unwrap_or(u32::MAX)
    }

    /// The epoch of a slot.
    pub fn epoch_of(&self, slot: u32) -> u32 {
        if slot <= self.genesis_slot {
            return 0;
        }
        (slot - self.genesis_slot)
            .checked_shr(u32::from(self.slots_per_epoch_exponent))
            .unwrap_or(0)
    }

    /// Largest mana value (2^bitsCount − 1).
    pub fn max_mana(&self) -> u64 {
        match self.mana_parameters.bits_count {
            0 => 0,
            b if b >= 64 => u64::MAX,
            b => (1u64 << b) - 1,
        }
    }
}
