//! Semantic validation of one v2 transaction (TIP-20 + TIP-18), as run by the
//! white-flag confirmation for every transaction in white-flag order.
//!
//! [`validate_transaction`] is a pure function of the transaction, its id, the
//! consumed outputs (in input order), the confirming milestone's timestamp and a
//! signature oracle. The checks run in the order of iota.go's Stardust virtual
//! machine (`ExecFuncTimelocks`, `ExecFuncInputUnlocks`, `ExecFuncSenderUnlocked`,
//! `ExecFuncBalancedDeposit`, `ExecFuncBalancedNativeTokens`,
//! `ExecFuncChainTransitions`), and the first failure decides the
//! [`ConflictReason`], mapped as Hornet maps iota.go's errors
//! (`pkg/model/storage/block_metadata.go`):
//!
//! - a public key that does not hash to the owning address is
//!   [`ConflictReason::InvalidSignature`], like a signature that does not verify;
//! - every chain rule (alias, NFT, foundry, including the Issuer feature of a new
//!   chain and the foundry's token scheme accounting) is
//!   [`ConflictReason::InvalidChainStateTransition`], because iota.go checks them
//!   inside the chain transition functions.
//!
//! Whether inputs exist and are unspent ([`ConflictReason::InputNotFound`],
//! [`ConflictReason::InputAlreadySpent`], [`ConflictReason::InputSpentInThisMilestone`])
//! is the ledger's question, answered before the consumed outputs are handed in.
//!
//! Signatures are verified by the caller (in parallel over a whole milestone cone,
//! see [`signature_checks`]); [`verify_signatures_sequential`] is the simple oracle.

use std::collections::BTreeMap;
use std::fmt;

use ledger_codec::ed25519;
use ledger_codec::stardust::{
    alias_id, inputs_commitment, nft_id, Address, AliasOutput, Feature, FoundryOutput, Output,
    OutputId, ProtocolParameters, TokenScheme, Transaction, Unlock, UnlockCondition,
};
use ledger_codec::types::{Hash32, U256};
use ledger_codec::Codec;

/// Most distinct native tokens over the inputs and outputs of one transaction.
pub const MAX_NATIVE_TOKENS: usize = 64;

/// Declares [`ConflictReason`] from one table: each reason's doc, code and text.
macro_rules! conflict_reasons {
    ($($(#[doc = $doc:literal])* $name:ident = $code:literal => $text:literal,)+) => {
        /// Why a referenced transaction was not applied (block metadata `conflictReason`).
        #[repr(u8)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ConflictReason {
            $($(#[doc = $doc])* $name = $code,)+
        }

        impl ConflictReason {
            /// Every reason, in code order.
            pub const ALL: &'static [ConflictReason] = &[$(Self::$name,)+];

            /// Human-readable text.
            pub fn text(self) -> &'static str {
                match self {
                    $(Self::$name => $text,)+
                }
            }
        }
    };
}

conflict_reasons! {
    /// An input was already spent by an earlier milestone.
    InputAlreadySpent = 1 => "input already spent",
    /// An input was spent by an earlier transaction of the same milestone.
    InputSpentInThisMilestone = 2 => "input already spent in this milestone",
    /// An input references an output that does not exist.
    InputNotFound = 3 => "input not found",
    /// The input and output amounts differ.
    AmountMismatch = 4 => "sum of input and output amounts does not match",
    /// A signature does not verify or does not belong to the owning address.
    InvalidSignature = 5 => "invalid signature",
    /// An input's timelock is not expired at the milestone timestamp.
    TimelockNotExpired = 6 => "timelock not expired",
    /// Native tokens do not balance or exceed the count limit.
    InvalidNativeTokens = 7 => "invalid native tokens",
    /// A storage deposit return is not fulfilled by the outputs.
    ReturnAmountNotFulfilled = 8 => "storage deposit return amount not fulfilled",
    /// An input's unlock is of the wrong kind or references the wrong unlock.
    InvalidInputUnlock = 9 => "invalid input unlock",
    /// The inputs commitment does not match the consumed outputs.
    InvalidInputsCommitment = 10 => "invalid inputs commitment",
    /// A Sender feature's address is not unlocked by the transaction.
    InvalidSender = 11 => "sender not unlocked",
    /// An alias, NFT or foundry transition breaks its rules.
    InvalidChainStateTransition = 12 => "invalid chain state transition",
    /// Any other semantic failure.
    SemanticValidationFailed = 255 => "semantic validation failed",
}

impl ConflictReason {
    /// The wire/JSON code (1..=12, 255).
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The reason with code `code` (0 = no conflict is not a reason).
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.iter().copied().find(|r| r.code() == code)
    }
}

impl fmt::Display for ConflictReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl std::error::Error for ConflictReason {}

/// What a transaction is validated against besides its inputs.
#[derive(Debug, Clone, Copy)]
pub struct Context<'p> {
    /// Timestamp (unix seconds) of the confirming milestone.
    pub milestone_timestamp: u32,
    /// The protocol parameters in force.
    pub params: &'p ProtocolParameters,
}

/// The Ed25519 checks a transaction needs: `(unlock index, public key, signature)`
/// of every Signature Unlock, all over the essence's signing hash
/// (`tx.essence.signing_hash()`). Callers verify them (batched, in parallel) and
/// answer [`validate_transaction`]'s `signature_ok(index)` from the verdicts.
pub fn signature_checks(tx: &Transaction<'_>) -> Vec<(usize, [u8; 32], [u8; 64])> {
    tx.unlocks
        .iter()
        .enumerate()
        .filter_map(|(i, u)| match u {
            Unlock::Signature(s) => Some((i, s.public_key, s.signature)),
            _ => None,
        })
        .collect()
}

/// A `signature_ok` oracle that verifies every Signature Unlock of `tx` one by one
/// (ZIP-215), for tests and simple callers. Indices without a valid signature
/// unlock answer `false`, and so do all of them when the essence has no wire form
/// (there is no message to have signed).
pub fn verify_signatures_sequential(tx: &Transaction<'_>) -> impl Fn(usize) -> bool {
    let mut verdicts = vec![false; tx.unlocks.len()];
    if let Ok(msg) = tx.essence.signing_hash() {
        for (i, pk, sig) in signature_checks(tx) {
            if let Some(v) = verdicts.get_mut(i) {
                *v = ed25519::verify(&pk, &msg, &sig);
            }
        }
    }
    move |i| verdicts.get(i).copied().unwrap_or(false)
}

/// A chain's identity on either side of the transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum ChainKey {
    Alias([u8; 32]),
    Nft([u8; 32]),
    Foundry([u8; 38]),
}

/// Serialized address (type ‖ id), the key of unlocked identities.
type AddrKey = [u8; 33];

fn alias_address_key(id: &[u8; 32]) -> AddrKey {
    Address::Alias(Hash32::borrowed(id)).to_array()
}

fn nft_address_key(id: &[u8; 32]) -> AddrKey {
    Address::Nft(Hash32::borrowed(id)).to_array()
}

fn state_controller(a: &AliasOutput<'_>) -> Option<AddrKey> {
    a.unlock_conditions.iter().find_map(|u| match u {
        UnlockCondition::StateControllerAddress(x) => Some(x.to_array()),
        _ => None,
    })
}

fn governor(a: &AliasOutput<'_>) -> Option<AddrKey> {
    a.unlock_conditions.iter().find_map(|u| match u {
        UnlockCondition::GovernorAddress(x) => Some(x.to_array()),
        _ => None,
    })
}

/// The alias id a foundry belongs to (its Immutable Alias Address).
fn foundry_alias(f: &FoundryOutput<'_>) -> Option<[u8; 32]> {
    f.unlock_conditions.iter().find_map(|u| match u {
        UnlockCondition::ImmutableAliasAddress(a)
            if a.kind() == ledger_codec::stardust::Address::ALIAS =>
        {
            Some(*a.id())
        }
        _ => None,
    })
}

fn metadata_feature<'o, 'a>(fs: &'o [Feature<'a>]) -> Option<&'o [u8]> {
    fs.iter().find_map(|f| match f {
        Feature::Metadata(m) => Some(m.as_slice()),
        _ => None,
    })
}

/// The chain key of consumed output `o` with id `oid` (implicit ids resolved).
fn input_chain_key(oid: &OutputId, o: &Output<'_>) -> Result<Option<ChainKey>, ConflictReason> {
    Ok(match o {
        Output::Alias(a) if a.alias_id.is_zero() => Some(ChainKey::Alias(alias_id(oid))),
        Output::Alias(a) => Some(ChainKey::Alias(a.alias_id.to_array())),
        Output::Nft(n) if n.nft_id.is_zero() => Some(ChainKey::Nft(nft_id(oid))),
        Output::Nft(n) => Some(ChainKey::Nft(n.nft_id.to_array())),
        Output::Foundry(_) => Some(ChainKey::Foundry(
            o.foundry_id()
                .ok_or(ConflictReason::SemanticValidationFailed)?,
        )),
        Output::Basic(_) | Output::Treasury(_) => None,
    })
}

/// Chains on the input side (key → input index) and output side (key → output
/// index); a key twice on one side is an invalid chain transition.
struct Chains {
    inputs: BTreeMap<ChainKey, usize>,
    outputs: BTreeMap<ChainKey, usize>,
}

impl Chains {
    fn build(
        tx: &Transaction<'_>,
        tx_id: &[u8; 32],
        inputs: &[(OutputId, Output<'_>)],
    ) -> Result<Self, ConflictReason> {
        let mut ins = BTreeMap::new();
        for (i, (oid, o)) in inputs.iter().enumerate() {
            if let Some(k) = input_chain_key(oid, o)? {
                if ins.insert(k, i).is_some() {
                    return Err(ConflictReason::InvalidChainStateTransition);
                }
            }
        }
        let mut outs = BTreeMap::new();
        for (j, o) in tx.essence.outputs.iter().enumerate() {
            let oid = OutputId {
                transaction_id: *tx_id,
                index: u16::try_from(j).map_err(|_| ConflictReason::SemanticValidationFailed)?,
            };
            if let Some(k) = input_chain_key(&oid, o)? {
                if outs.insert(k, j).is_some() {
                    return Err(ConflictReason::InvalidChainStateTransition);
                }
            }
        }
        Ok(Self {
            inputs: ins,
            outputs: outs,
        })
    }
}

/// Identities unlocked so far: address → index of the input that unlocked it.
#[derive(Default)]
struct Unlocked(Vec<(AddrKey, usize)>);

impl Unlocked {
    fn at(&self, k: &AddrKey) -> Option<usize> {
        self.0.iter().find(|(a, _)| a == k).map(|(_, i)| *i)
    }
    fn contains(&self, k: &AddrKey) -> bool {
        self.at(k).is_some()
    }
    fn add(&mut self, k: AddrKey, i: usize) {
        self.0.push((k, i));
    }
}

/// Validates `tx` (id `tx_id`) semantically.
///
/// `inputs[i]` is the consumed output of input `i` (same order as
/// `tx.essence.inputs`); `signature_ok(i)` tells whether unlock `i` (a Signature
/// Unlock) carries a valid Ed25519 signature over the essence signing hash.
///
/// # Errors
/// The first broken rule's [`ConflictReason`].
pub fn validate_transaction(
    tx: &Transaction<'_>,
    tx_id: &[u8; 32],
    inputs: &[(OutputId, Output<'_>)],
    ctx: &Context<'_>,
    signature_ok: &dyn Fn(usize) -> bool,
) -> Result<(), ConflictReason> {
    validate_transaction_committed(tx, tx_id, inputs, None, ctx, signature_ok)
}

/// [`validate_transaction`] with the inputs commitment of `inputs` already computed from
/// their stored bytes ([`ledger_codec::stardust::inputs_commitment_of_bytes`]); `None`
/// computes it here by encoding them.
///
/// # Errors
/// As [`validate_transaction`].
pub fn validate_transaction_committed(
    tx: &Transaction<'_>,
    tx_id: &[u8; 32],
    inputs: &[(OutputId, Output<'_>)],
    commitment: Option<[u8; 32]>,
    ctx: &Context<'_>,
    signature_ok: &dyn Fn(usize) -> bool,
) -> Result<(), ConflictReason> {
    let essence = &tx.essence;
    let t = ctx.milestone_timestamp;

    // The consumed outputs must be those the essence names.
    if inputs.len() != essence.inputs.len() {
        return Err(ConflictReason::InputNotFound);
    }
    for (inp, (oid, out)) in essence.inputs.iter().zip(inputs) {
        if inp.transaction_id != oid.transaction_id || inp.index() != oid.index {
            return Err(ConflictReason::InputNotFound);
        }
        if let Output::Treasury(_) = out {
            return Err(ConflictReason::SemanticValidationFailed);
        }
    }
    if tx.unlocks.len() != inputs.len() {
        return Err(ConflictReason::InvalidInputUnlock);
    }

    // 1. Timelocks.
    for (_, o) in inputs {
        for uc in o.unlock_conditions() {
            if let UnlockCondition::Timelock(unix) = uc {
                if t < *unix {
                    return Err(ConflictReason::TimelockNotExpired);
                }
            }
        }
    }

    // 2. Inputs commitment, then the unlocks.
    let commitment = commitment.or_else(|| inputs_commitment(inputs.iter().map(|(_, o)| o)).ok());
    if commitment != Some(*essence.inputs_commitment.as_array()) {
        return Err(ConflictReason::InvalidInputsCommitment);
    }
    let chains = Chains::build(tx, tx_id, inputs)?;
    let mut unlocked = Unlocked::default();
    let mut owners: Vec<AddrKey> = Vec::with_capacity(inputs.len());
    for (i, (oid, o)) in inputs.iter().enumerate() {
        let (owner, chain_unlocked) = owner_of(oid, o, &chains, &essence.outputs, t)?;
        owners.push(owner);
        let unlock = tx
            .unlocks
            .get(i)
            .ok_or(ConflictReason::InvalidInputUnlock)?;
        unlock_input(i, &owner, unlock, &mut unlocked, signature_ok)?;
        if let Some(k) = chain_unlocked {
            unlocked.add(k, i);
        }
    }

    // 3. Sender features.
    for o in &essence.outputs {
        for f in o.features() {
            if let Feature::Sender(a) = f {
                if !unlocked.contains(&a.to_array()) {
                    return Err(ConflictReason::InvalidSender);
                }
            }
        }
    }

    // 4. Amounts and storage deposit returns.
    check_amounts(inputs, &owners, &essence.outputs)?;

    // 5. Native tokens.
    let (in_sums, out_sums) = native_token_sums(inputs, &essence.outputs)?;
    for (id, in_sum) in &in_sums {
        if chains.outputs.contains_key(&ChainKey::Foundry(*id)) {
            continue;
        }
        if out_sums.get(id).is_some_and(|out| out > in_sum) {
            return Err(ConflictReason::InvalidNativeTokens);
        }
    }
    for id in out_sums.keys() {
        if !chains.outputs.contains_key(&ChainKey::Foundry(*id)) && !in_sums.contains_key(id) {
            return Err(ConflictReason::InvalidNativeTokens);
        }
    }

    // 6. Chain state transitions.
    let stvf = Stvf {
        inputs,
        outputs: &essence.outputs,
        chains: &chains,
        unlocked: &unlocked,
        in_sums: &in_sums,
        out_sums: &out_sums,
    };
    stvf.check()
}

/// The address that must unlock input `o`, and the chain address its consumption
/// unlocks (NFTs always, aliases only on a state transition).
fn owner_of(
    oid: &OutputId,
    o: &Output<'_>,
    chains: &Chains,
    outputs: &[Output<'_>],
    t: u32,
) -> Result<(AddrKey, Option<AddrKey>), ConflictReason> {
    let fail = ConflictReason::SemanticValidationFailed;
    let (mut owner, chain) = match o {
        Output::Treasury(_) => return Err(fail),
        Output::Basic(_) | Output::Nft(_) => {
            let addr = o
                .unlock_conditions()
                .iter()
                .find_map(|u| match u {
                    UnlockCondition::Address(a) => Some(a.to_array()),
                    _ => None,
                })
                .ok_or(fail)?;
            let chain = match o {
                Output::Nft(n) if n.nft_id.is_zero() => Some(nft_address_key(&nft_id(oid))),
                Output::Nft(n) => Some(nft_address_key(n.nft_id.as_array())),
                _ => None,
            };
            (addr, chain)
        }
        Output::Alias(a) => {
            let id = if a.alias_id.is_zero() {
                alias_id(oid)
            } else {
                a.alias_id.to_array()
            };
            let next = chains
                .outputs
                .get(&ChainKey::Alias(id))
                .and_then(|j| outputs.get(*j));
            let state_transition = matches!(next, Some(Output::Alias(n))
                if a.state_index.checked_add(1) == Some(n.state_index));
            if state_transition {
                (
                    state_controller(a).ok_or(fail)?,
                    Some(alias_address_key(&id)),
                )
            } else {
                (governor(a).ok_or(fail)?, None)
            }
        }
        Output::Foundry(f) => (alias_address_key(&foundry_alias(f).ok_or(fail)?), None),
    };
    for uc in o.unlock_conditions() {
        if let UnlockCondition::Expiration {
            return_address,
            unix_time,
        } = uc
        {
            if *unix_time <= t {
                owner = return_address.to_array();
            }
        }
    }
    Ok((owner, chain))
}

/// Checks unlock `i` against the owning address and records what it unlocks.
fn unlock_input(
    i: usize,
    owner: &AddrKey,
    unlock: &Unlock<'_>,
    unlocked: &mut Unlocked,
    signature_ok: &dyn Fn(usize) -> bool,
) -> Result<(), ConflictReason> {
    let bad = ConflictReason::InvalidInputUnlock;
    let referenced_ok = |r: &u16| unlocked.at(owner) == Some(usize::from(*r));
    let Ok(address) = Address::decode(owner) else {
        return Err(bad);
    };
    match (&address, unlock) {
        (Address::Ed25519(key_hash), Unlock::Signature(sig)) => {
            if unlocked.contains(owner) {
                return Err(bad);
            }
            if ed25519::ed25519_address(&sig.public_key) != *key_hash.as_array() {
                return Err(ConflictReason::InvalidSignature);
            }
            if !signature_ok(i) {
                return Err(ConflictReason::InvalidSignature);
            }
            unlocked.add(*owner, i);
            Ok(())
        }
        (Address::Ed25519(_), Unlock::Reference(r))
        | (Address::Alias(_), Unlock::Alias(r))
        | (Address::Nft(_), Unlock::Nft(r)) => {
            if referenced_ok(r) {
                Ok(())
            } else {
                Err(bad)
            }
        }
        _ => Err(bad),
    }
}

fn check_amounts(
    inputs: &[(OutputId, Output<'_>)],
    owners: &[AddrKey],
    outputs: &[Output<'_>],
) -> Result<(), ConflictReason> {
    let mut in_sum: u128 = 0;
    let mut returns: BTreeMap<AddrKey, u128> = BTreeMap::new();
    for ((_, o), owner) in inputs.iter().zip(owners) {
        in_sum += u128::from(o.amount());
        for uc in o.unlock_conditions() {
            if let UnlockCondition::StorageDepositReturn {
                return_address,
                amount,
            } = uc
            {
                let k = return_address.to_array();
                // The return address unlocking the input itself owes nothing.
                if &k != owner {
                    *returns.entry(k).or_default() += u128::from(*amount);
                }
            }
        }
    }
    let mut out_sum: u128 = 0;
    let mut simple: BTreeMap<AddrKey, u128> = BTreeMap::new();
    for o in outputs {
        out_sum += u128::from(o.amount());
        if let Output::Basic(b) = o {
            if let ([UnlockCondition::Address(a)], true, true) = (
                b.unlock_conditions.as_slice(),
                b.features.is_empty(),
                b.native_tokens.is_empty(),
            ) {
                *simple.entry(a.to_array()).or_default() += u128::from(b.amount);
            }
        }
    }
    if in_sum != out_sum {
        return Err(ConflictReason::AmountMismatch);
    }
    for (addr, owed) in &returns {
        if simple.get(addr).copied().unwrap_or(0) < *owed {
            return Err(ConflictReason::ReturnAmountNotFulfilled);
        }
    }
    Ok(())
}

type TokenSums = BTreeMap<[u8; 38], U256>;

fn add_tokens<'o, 'a: 'o>(
    outputs: impl IntoIterator<Item = &'o Output<'a>>,
) -> Result<TokenSums, ConflictReason> {
    let bad = ConflictReason::InvalidNativeTokens;
    let mut sums = TokenSums::new();
    for o in outputs {
        for nt in o.native_tokens() {
            if nt.amount.is_zero() {
                return Err(bad);
            }
            let e = sums.entry(nt.id.to_array()).or_insert(U256::ZERO);
            *e = U256(e.0.checked_add(nt.amount.0).ok_or(bad)?);
        }
    }
    Ok(sums)
}

fn native_token_sums(
    inputs: &[(OutputId, Output<'_>)],
    outputs: &[Output<'_>],
) -> Result<(TokenSums, TokenSums), ConflictReason> {
    let bad = ConflictReason::InvalidNativeTokens;
    let ins = add_tokens(inputs.iter().map(|(_, o)| o))?;
    if ins.len() > MAX_NATIVE_TOKENS {
        return Err(bad);
    }
    let outs = add_tokens(outputs)?;
    let distinct = ins.len() + outs.keys().filter(|k| !ins.contains_key(*k)).count();
    if distinct > MAX_NATIVE_TOKENS {
        return Err(bad);
    }
    Ok((ins, outs))
}

/// The chain state transition checks (iota.go `ExecFuncChainTransitions`).
struct Stvf<'s, 'a, 'b> {
    inputs: &'s [(OutputId, Output<'a>)],
    outputs: &'s [Output<'b>],
    chains: &'s Chains,
    unlocked: &'s Unlocked,
    in_sums: &'s TokenSums,
    out_sums: &'s TokenSums,
}

const CHAIN: ConflictReason = ConflictReason::InvalidChainStateTransition;

fn ensure(ok: bool) -> Result<(), ConflictReason> {
    if ok {
        Ok(())
    } else {
        Err(CHAIN)
    }
}

impl Stvf<'_, '_, '_> {
    fn check(&self) -> Result<(), ConflictReason> {
        for (key, i) in &self.chains.inputs {
            let (_, current) = self.inputs.get(*i).ok_or(CHAIN)?;
            match self.chains.outputs.get(key) {
                None => self.destroy(key, current)?,
                Some(j) => self.transition(key, current, self.outputs.get(*j).ok_or(CHAIN)?)?,
            }
        }
        for (key, j) in &self.chains.outputs {
            if !self.chains.inputs.contains_key(key) {
                self.genesis(key, *j)?;
            }
        }
        Ok(())
    }

    fn sums(&self, id: &[u8; 38]) -> (U256, U256) {
        (
            self.in_sums.get(id).copied().unwrap_or(U256::ZERO),
            self.out_sums.get(id).copied().unwrap_or(U256::ZERO),
        )
    }

    fn destroy(&self, key: &ChainKey, current: &Output<'_>) -> Result<(), ConflictReason> {
        match (key, current) {
            // The governor (alias) or owner (NFT) unlocked it; nothing else to check.
            (ChainKey::Alias(_), _) | (ChainKey::Nft(_), _) => Ok(()),
            (ChainKey::Foundry(id), Output::Foundry(f)) => {
                let TokenScheme::Simple(s) = &f.token_scheme;
                let (in_sum, out_sum) = self.sums(id);
                // Everything minted must be melted: minted + (out − in) == melted.
                let lhs = s.minted_tokens.0.checked_add(out_sum.0);
                let rhs = s.melted_tokens.0.checked_add(in_sum.0);
                ensure(lhs.is_some() && lhs == rhs)
            }
            _ => Err(CHAIN),
        }
    }

    fn transition(
        &self,
        key: &ChainKey,
        current: &Output<'_>,
        next: &Output<'_>,
    ) -> Result<(), ConflictReason> {
        ensure(current.immutable_features() == next.immutable_features())?;
        match (key, current, next) {
            (ChainKey::Alias(id), Output::Alias(cur), Output::Alias(nxt)) => {
                if cur.state_index == nxt.state_index {
                    // Governance transition.
                    ensure(
                        cur.amount == nxt.amount
                            && cur.native_tokens == nxt.native_tokens
                            && cur.state_metadata == nxt.state_metadata
                            && cur.foundry_counter == nxt.foundry_counter,
                    )
                } else {
                    self.alias_state_transition(id, cur, nxt)
                }
            }
            (ChainKey::Nft(_), Output::Nft(_), Output::Nft(_)) => Ok(()),
            (ChainKey::Foundry(id), Output::Foundry(cur), Output::Foundry(nxt)) => {
                let (TokenScheme::Simple(c), TokenScheme::Simple(n)) =
                    (&cur.token_scheme, &nxt.token_scheme);
                ensure(c.maximum_supply == n.maximum_supply)?;
                ensure(n.minted_tokens >= c.minted_tokens && n.melted_tokens >= c.melted_tokens)?;
                let minted = n.minted_tokens.0 - c.minted_tokens.0;
                let melted = n.melted_tokens.0 - c.melted_tokens.0;
                let (in_sum, out_sum) = self.sums(id);
                if out_sum > in_sum {
                    // Mint: exactly the surplus, no melting.
                    ensure(minted == out_sum.0 - in_sum.0 && melted.is_zero())
                } else if out_sum < in_sum {
                    // Melt up to the deficit (the rest is burned), no minting.
                    ensure(melted <= in_sum.0 - out_sum.0 && minted.is_zero())
                } else {
                    ensure(minted.is_zero() && melted.is_zero())
                }
            }
            _ => Err(CHAIN),
        }
    }

    fn alias_state_transition(
        &self,
        id: &[u8; 32],
        cur: &AliasOutput<'_>,
        nxt: &AliasOutput<'_>,
    ) -> Result<(), ConflictReason> {
        ensure(cur.state_index.checked_add(1) == Some(nxt.state_index))?;
        ensure(state_controller(cur) == state_controller(nxt) && governor(cur) == governor(nxt))?;
        ensure(nxt.foundry_counter >= cur.foundry_counter)?;
        ensure(metadata_feature(&cur.features) == metadata_feature(&nxt.features))?;
        if cur.foundry_counter != nxt.foundry_counter {
            let new_foundries = self.new_foundries_of(id).len();
            ensure(
                u32::try_from(new_foundries).ok()
                    == Some(nxt.foundry_counter - cur.foundry_counter),
            )?;
        }
        Ok(())
    }

    /// Output index and serial number of every foundry of alias `id` that is new
    /// in this transaction.
    fn new_foundries_of(&self, id: &[u8; 32]) -> Vec<(usize, u32)> {
        self.chains
            .outputs
            .iter()
            .filter(|(key, _)| {
                matches!(key, ChainKey::Foundry(_)) && !self.chains.inputs.contains_key(key)
            })
            .filter_map(|(_, j)| match self.outputs.get(*j) {
                Some(Output::Foundry(f)) if foundry_alias(f).as_ref() == Some(id) => {
                    Some((*j, f.serial_number))
                }
                _ => None,
            })
            .collect()
    }

    fn issuer_unlocked(&self, o: &Output<'_>) -> Result<(), ConflictReason> {
        for f in o.immutable_features() {
            if let Feature::Issuer(a) = f {
                ensure(self.unlocked.contains(&a.to_array()))?;
            }
        }
        Ok(())
    }

    fn genesis(&self, key: &ChainKey, j: usize) -> Result<(), ConflictReason> {
        let next = self.outputs.get(j).ok_or(CHAIN)?;
        match (key, next) {
            (ChainKey::Alias(_), Output::Alias(a)) => {
                ensure(a.alias_id.is_zero())?;
                self.issuer_unlocked(next)
            }
            (ChainKey::Nft(_), Output::Nft(n)) => {
                ensure(n.nft_id.is_zero())?;
                self.issuer_unlocked(next)
            }
            (ChainKey::Foundry(id), Output::Foundry(f)) => {
                let TokenScheme::Simple(s) = &f.token_scheme;
                let (_, out_sum) = self.sums(id);
                ensure(s.melted_tokens.is_zero() && out_sum == s.minted_tokens)?;
                let alias = foundry_alias(f).ok_or(CHAIN)?;
                let akey = ChainKey::Alias(alias);
                let in_alias = self.chains.inputs.get(&akey).ok_or(CHAIN)?;
                let out_alias = self.chains.outputs.get(&akey).ok_or(CHAIN)?;
                let (Some((_, Output::Alias(ia))), Some(Output::Alias(oa))) =
                    (self.inputs.get(*in_alias), self.outputs.get(*out_alias))
                else {
                    return Err(CHAIN);
                };
                ensure(
                    ia.foundry_counter < f.serial_number && f.serial_number <= oa.foundry_counter,
                )?;
                // New foundries of the alias ascend by serial number in output order.
                for (k, serial) in self.new_foundries_of(&alias) {
                    if k < j && serial >= f.serial_number {
                        return Err(CHAIN);
                    }
                }
                Ok(())
            }
            _ => Err(CHAIN),
        }
    }
}
