//! v3 protocol parameters (TIP-49, type 0): JSON, binary form and hash, and
//! the derived network id and slot arithmetic.

use serde::{Deserialize, Serialize};

use crate::error::{Context, Error, ErrorKind, Result};
use crate::hash::blake2b256;
use crate::nova::json::{i64_str, u64_str};
use crate::wire::{fields_codec, Codec, FieldRule, Len, Prefix, Reader};

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
#[expect(
    missing_docs,
    reason = "each field is the protocol parameter of the same name (camelCase) in its TIP"
)]
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
#[expect(
    missing_docs,
    reason = "each field is the protocol parameter of the same name (camelCase) in its TIP"
)]
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
#[expect(
    missing_docs,
    reason = "each field is the protocol parameter of the same name (camelCase) in its TIP"
)]
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
#[expect(
    missing_docs,
    reason = "each field is the protocol parameter of the same name (camelCase) in its TIP"
)]
pub struct VersionSignalingParameters {
    pub window_size: u8,
    pub window_target_ratio: u8,
    pub activation_offset: u8,
}

/// Rewards parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[expect(
    missing_docs,
    reason = "each field is the protocol parameter of the same name (camelCase) in its TIP"
)]
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
#[expect(
    missing_docs,
    reason = "each field is the protocol parameter of the same name (camelCase) in its TIP"
)]
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

/// The parameters' type byte: 0, the only type there is.
struct ParamsType;

impl<'a> FieldRule<'a, u8> for ParamsType {
    fn read_field(&self, r: &mut Reader<'a>, name: &'static str) -> Result<u8> {
        match r.u8().at(name)? {
            0 => Ok(0),
            kind => Err(ErrorKind::UnknownType(kind.into()).into()),
        }
    }
    fn write_field(&self, v: &u8, name: &'static str, out: &mut Vec<u8>) -> Result<()> {
        v.encode(out).at(name)
    }
}

fields_codec!(StorageScoreParameters {
    storage_cost: "storageCost",
    factor_data: "factorData",
    offset_output_overhead: "offsetOutputOverhead",
    offset_ed25519_block_issuer_key: "offsetEd25519BlockIssuerKey",
    offset_staking_feature: "offsetStakingFeature",
    offset_delegation: "offsetDelegation",
});

fields_codec!(WorkScoreParameters {
    data_byte: "dataByte",
    block: "block",
    input: "input",
    context_input: "contextInput",
    output: "output",
    native_token: "nativeToken",
    staking: "staking",
    block_issuer: "blockIssuer",
    allotment: "allotment",
    signature_ed25519: "signatureEd25519",
});

fields_codec!(ManaParameters {
    bits_count: "bitsCount",
    generation_rate: "generationRate",
    generation_rate_exponent: "generationRateExponent",
    decay_factors: "decayFactors" with DECAY,
    decay_factors_exponent: "decayFactorsExponent",
    decay_factor_epochs_sum: "decayFactorEpochsSum",
    decay_factor_epochs_sum_exponent: "decayFactorEpochsSumExponent",
    annual_decay_factor_percentage: "annualDecayFactorPercentage",
});

fields_codec!(CongestionControlParameters {
    min_reference_mana_cost: "minReferenceManaCost",
    increase: "increase",
    decrease: "decrease",
    increase_threshold: "increaseThreshold",
    decrease_threshold: "decreaseThreshold",
    scheduler_rate: "schedulerRate",
    max_buffer_size: "maxBufferSize",
    max_validation_buffer_size: "maxValidationBufferSize",
});

fields_codec!(VersionSignalingParameters {
    window_size: "windowSize",
    window_target_ratio: "windowTargetRatio",
    activation_offset: "activationOffset",
});

fields_codec!(RewardsParameters {
    profit_margin_exponent: "profitMarginExponent",
    bootstrapping_duration: "bootstrappingDuration",
    reward_to_generation_ratio: "rewardToGenerationRatio",
    initial_target_rewards_rate: "initialTargetRewardsRate",
    final_target_rewards_rate: "finalTargetRewardsRate",
    pool_coefficient_exponent: "poolCoefficientExponent",
    retention_period: "retentionPeriod",
});

fields_codec!(ProtocolParameters {
    kind: "type" with ParamsType,
    version: "version",
    network_name: "networkName" with NAME,
    bech32_hrp: "bech32Hrp" with HRP,
    storage_score_parameters: "storageScoreParameters",
    work_score_parameters: "workScoreParameters",
    mana_parameters: "manaParameters",
    token_supply: "tokenSupply",
    genesis_slot: "genesisSlot",
    genesis_unix_timestamp: "genesisUnixTimestamp",
    slot_duration_in_seconds: "slotDurationInSeconds",
    slots_per_epoch_exponent: "slotsPerEpochExponent",
    staking_unbonding_period: "stakingUnbondingPeriod",
    validation_blocks_per_slot: "validationBlocksPerSlot",
    punishment_epochs: "punishmentEpochs",
    liveness_threshold_lower_bound: "livenessThresholdLowerBound",
    liveness_threshold_upper_bound: "livenessThresholdUpperBound",
    min_committable_age: "minCommittableAge",
    max_committable_age: "maxCommittableAge",
    epoch_nearing_threshold: "epochNearingThreshold",
    congestion_control_parameters: "congestionControlParameters",
    version_signaling_parameters: "versionSignalingParameters",
    rewards_parameters: "rewardsParameters",
    target_committee_size: "targetCommitteeSize",
    chain_switching_threshold: "chainSwitchingThreshold",
});

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
