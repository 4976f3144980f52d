//! TIP-20 + TIP-18 semantic validation on real signed transactions: every
//! transaction here is built, signed with Ed25519 keys, checked to be
//! syntactically valid by the codec, and then validated semantically.

use std::borrow::Cow;

use ledger_codec::ed25519::SigningKey;
use ledger_codec::stardust::{
    alias_id, foundry_id, inputs_commitment, nft_id, Address, AliasOutput, BasicOutput,
    Ed25519Signature, Essence, Feature, FoundryOutput, NativeToken, NftOutput, Output, OutputId,
    ProtocolParameters, SimpleTokenScheme, TokenScheme, Transaction, TreasuryOutput, Unlock,
    UnlockCondition, UtxoInput,
};
use ledger_codec::types::{Bytes, Fixed, Hash32, U256};
use ledger_codec::Codec;
use ledger_engine::internals::semantic::{
    signature_checks, validate_transaction, verify_signatures_sequential, ConflictReason, Context,
};

use ConflictReason::*;

// ---------------------------------------------------------------- helpers

fn params() -> ProtocolParameters {
    ledger_test_support::ledger::testnet_params()
}

const M: u64 = 1_000_000;

fn key(n: u8) -> SigningKey {
    SigningKey::from_seed(&[n; 32])
}

fn ed(k: &SigningKey) -> Address<'static> {
    Address::Ed25519(Hash32::owned(k.address()))
}

fn alias_addr(id: [u8; 32]) -> Address<'static> {
    Address::Alias(Hash32::owned(id))
}

fn nft_addr(id: [u8; 32]) -> Address<'static> {
    Address::Nft(Hash32::owned(id))
}

fn oid(n: u8, index: u16) -> OutputId {
    OutputId {
        transaction_id: [n; 32],
        index,
    }
}

fn nt(id: [u8; 38], amount: u64) -> NativeToken<'static> {
    NativeToken {
        id: Fixed::owned(id),
        amount: U256::from(amount),
    }
}

fn basic_full(
    amount: u64,
    native_tokens: Vec<NativeToken<'static>>,
    unlock_conditions: Vec<UnlockCondition<'static>>,
    features: Vec<Feature<'static>>,
) -> Output<'static> {
    Output::Basic(BasicOutput {
        amount,
        native_tokens,
        unlock_conditions,
        features,
    })
}

fn basic(amount: u64, owner: Address<'static>) -> Output<'static> {
    Output::basic(amount, owner)
}

fn basic_nt(
    amount: u64,
    owner: Address<'static>,
    nts: Vec<NativeToken<'static>>,
) -> Output<'static> {
    basic_full(amount, nts, vec![UnlockCondition::Address(owner)], vec![])
}

fn alias(
    amount: u64,
    id: [u8; 32],
    state_index: u32,
    foundry_counter: u32,
    sc: &SigningKey,
    gov: &SigningKey,
) -> AliasOutput<'static> {
    AliasOutput {
        amount,
        native_tokens: vec![],
        alias_id: Hash32::owned(id),
        state_index,
        state_metadata: Bytes(Cow::Owned(vec![])),
        foundry_counter,
        unlock_conditions: vec![
            UnlockCondition::StateControllerAddress(ed(sc)),
            UnlockCondition::GovernorAddress(ed(gov)),
        ],
        features: vec![],
        immutable_features: vec![],
    }
}

fn foundry(alias: [u8; 32], serial: u32, minted: u64, melted: u64) -> FoundryOutput<'static> {
    FoundryOutput {
        amount: M,
        native_tokens: vec![],
        serial_number: serial,
        token_scheme: TokenScheme::Simple(SimpleTokenScheme {
            minted_tokens: U256::from(minted),
            melted_tokens: U256::from(melted),
            maximum_supply: U256::from(1_000_000u64),
        }),
        unlock_conditions: vec![UnlockCondition::ImmutableAliasAddress(alias_addr(alias))],
        features: vec![],
        immutable_features: vec![],
    }
}

fn nft(amount: u64, id: [u8; 32], owner: Address<'static>) -> NftOutput<'static> {
    NftOutput {
        amount,
        native_tokens: vec![],
        nft_id: Hash32::owned(id),
        unlock_conditions: vec![UnlockCondition::Address(owner)],
        features: vec![],
        immutable_features: vec![],
    }
}

/// How to unlock one input.
enum U<'k> {
    Sig(&'k SigningKey),
    Ref(u16),
    Alias(u16),
    Nft(u16),
}

struct Tx {
    tx: Transaction<'static>,
    id: [u8; 32],
    inputs: Vec<(OutputId, Output<'static>)>,
}

/// Builds and signs a transaction consuming `inputs`; it must pass the codec's
/// syntactic rules and the parameter checks.
fn build(
    inputs: Vec<(OutputId, Output<'static>)>,
    outputs: Vec<Output<'static>>,
    unlocks: &[U<'_>],
) -> Tx {
    let essence = Essence {
        network_id: params().network_id(),
        inputs: Cow::Owned(
            inputs
                .iter()
                .map(|(id, _)| UtxoInput::new(id.transaction_id, id.index))
                .collect(),
        ),
        inputs_commitment: Hash32::owned(inputs_commitment(inputs.iter().map(|(_, o)| o)).unwrap()),
        outputs,
        payload: None,
    };
    let msg = essence.signing_hash().unwrap();
    let unlocks = unlocks
        .iter()
        .map(|u| match u {
            U::Sig(k) => Unlock::Signature(Cow::Owned(Ed25519Signature::new(
                k.public_key(),
                k.sign(&msg),
            ))),
            U::Ref(r) => Unlock::Reference(*r),
            U::Alias(r) => Unlock::Alias(*r),
            U::Nft(r) => Unlock::Nft(*r),
        })
        .collect();
    let tx = Transaction { essence, unlocks };
    let bytes = tx.to_bytes().unwrap();
    let decoded = Transaction::decode(&bytes).expect("test transaction is syntactically valid");
    decoded
        .essence
        .validate(&params())
        .expect("test transaction passes the parameter checks");
    let id = tx.id().unwrap();
    Tx { tx, id, inputs }
}

fn check_at(t: &Tx, ts: u32) -> Result<(), ConflictReason> {
    let p = params();
    let ok = verify_signatures_sequential(&t.tx);
    validate_transaction(
        &t.tx,
        &t.id,
        &t.inputs,
        &Context {
            milestone_timestamp: ts,
            params: &p,
        },
        &ok,
    )
}

fn check(t: &Tx) -> Result<(), ConflictReason> {
    check_at(t, 1_700_000_000)
}

// ---------------------------------------------------------------- codes

#[test]
fn conflict_reason_codes_and_texts() {
    let want = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 255];
    assert_eq!(ConflictReason::ALL.len(), want.len());
    for (r, code) in ConflictReason::ALL.iter().zip(want) {
        assert_eq!(r.code(), code, "{r:?}");
        assert_eq!(ConflictReason::from_code(code), Some(*r));
        assert!(!r.to_string().is_empty());
    }
    assert_eq!(ConflictReason::from_code(0), None);
    assert_eq!(ConflictReason::from_code(13), None);
    assert_eq!(InputAlreadySpent as u8, 1);
    assert_eq!(
        InputSpentInThisMilestone.to_string(),
        "input already spent in this milestone"
    );
    assert_eq!(SemanticValidationFailed.code(), 255);
}

// ---------------------------------------------------------------- basic transfers

#[test]
fn simple_transfer_is_valid() {
    let (a, b) = (key(1), key(2));
    let t = build(
        vec![(oid(9, 0), basic(3 * M, ed(&a)))],
        vec![basic(M, ed(&b)), basic(2 * M, ed(&a))],
        &[U::Sig(&a)],
    );
    assert_eq!(signature_checks(&t.tx).len(), 1);
    assert!(verify_signatures_sequential(&t.tx)(0));
    assert_eq!(check(&t), Ok(()));
}

#[test]
fn inputs_of_one_address_use_a_reference_unlock() {
    let (a, b) = (key(1), key(2));
    let inputs = vec![
        (oid(9, 0), basic(M, ed(&a))),
        (oid(9, 1), basic(M, ed(&b))),
        (oid(8, 5), basic(M, ed(&a))),
    ];
    let outputs = vec![basic(3 * M, ed(&b))];
    let t = build(
        inputs.clone(),
        outputs.clone(),
        &[U::Sig(&a), U::Sig(&b), U::Ref(0)],
    );
    assert_eq!(check(&t), Ok(()));

    // A second signature unlock for an already unlocked address must be a
    // reference. (Byte-identical signature unlocks are syntactically invalid, and
    // Ed25519 signing is deterministic, so the second one differs in one bit; the
    // rule fires before its signature is looked at.)
    let mut t = build(
        inputs.clone(),
        outputs.clone(),
        &[U::Sig(&a), U::Sig(&b), U::Ref(0)],
    );
    let Unlock::Signature(first) = &t.tx.unlocks[0] else {
        unreachable!()
    };
    let mut second = first.clone().into_owned();
    second.signature[63] ^= 0x10;
    t.tx.unlocks[2] = Unlock::Signature(Cow::Owned(second));
    t.id = t.tx.id().unwrap();
    assert!(Transaction::decode(&t.tx.to_bytes().unwrap()).is_ok());
    assert_eq!(check(&t), Err(InvalidInputUnlock));

    // A reference to the signature of another address.
    let t = build(inputs, outputs, &[U::Sig(&a), U::Sig(&b), U::Ref(1)]);
    assert_eq!(check(&t), Err(InvalidInputUnlock));
}

#[test]
fn bad_or_foreign_signatures_are_invalid_signature() {
    let (a, b) = (key(1), key(2));
    let mut t = build(
        vec![(oid(9, 0), basic(M, ed(&a)))],
        vec![basic(M, ed(&b))],
        &[U::Sig(&a)],
    );
    if let Unlock::Signature(s) = &mut t.tx.unlocks[0] {
        s.to_mut().signature[5] ^= 1;
    }
    assert!(!verify_signatures_sequential(&t.tx)(0));
    assert_eq!(check(&t), Err(InvalidSignature));

    // A valid signature by a key that does not own the input.
    let t = build(
        vec![(oid(9, 0), basic(M, ed(&a)))],
        vec![basic(M, ed(&b))],
        &[U::Sig(&b)],
    );
    assert!(verify_signatures_sequential(&t.tx)(0));
    assert_eq!(check(&t), Err(InvalidSignature));

    // The oracle is what decides: the same transaction with a refusing oracle.
    let t = build(
        vec![(oid(9, 0), basic(M, ed(&a)))],
        vec![basic(M, ed(&b))],
        &[U::Sig(&a)],
    );
    let p = params();
    let ctx = Context {
        milestone_timestamp: 1,
        params: &p,
    };
    assert_eq!(
        validate_transaction(&t.tx, &t.id, &t.inputs, &ctx, &|_| false),
        Err(InvalidSignature)
    );
}

#[test]
fn chain_unlock_for_an_ed25519_owner_is_invalid_input_unlock() {
    let (a, b) = (key(1), key(2));
    let n = [0x4e; 32];
    let t = build(
        vec![
            (oid(9, 0), Output::Nft(nft(M, n, ed(&a)))),
            (oid(9, 1), basic(M, ed(&b))),
        ],
        vec![Output::Nft(nft(M, n, ed(&b))), basic(M, ed(&a))],
        &[U::Sig(&a), U::Nft(0)],
    );
    assert_eq!(check(&t), Err(InvalidInputUnlock));
}

#[test]
fn amount_mismatch() {
    let a = key(1);
    let t = build(
        vec![(oid(9, 0), basic(3 * M, ed(&a)))],
        vec![basic(M, ed(&a)), basic(M, ed(&a))],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Err(AmountMismatch));
}

#[test]
fn inputs_commitment_must_match_the_consumed_outputs() {
    let a = key(1);
    let mut t = build(
        vec![(oid(9, 0), basic(2 * M, ed(&a)))],
        vec![basic(2 * M, ed(&a))],
        &[U::Sig(&a)],
    );
    // The ledger hands in a different output under the same id.
    t.inputs[0].1 = basic(2 * M + 1, ed(&a));
    assert_eq!(check(&t), Err(InvalidInputsCommitment));
}

#[test]
fn consumed_outputs_must_be_the_named_inputs() {
    let a = key(1);
    let mut t = build(
        vec![(oid(9, 0), basic(M, ed(&a)))],
        vec![basic(M, ed(&a))],
        &[U::Sig(&a)],
    );
    t.inputs[0].0 = oid(9, 1);
    assert_eq!(check(&t), Err(InputNotFound));
    t.inputs.clear();
    assert_eq!(check(&t), Err(InputNotFound));
}

#[test]
fn treasury_output_as_input_is_semantic_validation_failed() {
    let a = key(1);
    let mut t = build(
        vec![(oid(9, 0), basic(M, ed(&a)))],
        vec![basic(M, ed(&a))],
        &[U::Sig(&a)],
    );
    t.inputs[0].1 = Output::Treasury(TreasuryOutput { amount: M });
    assert_eq!(check(&t), Err(SemanticValidationFailed));
}

// ---------------------------------------------------------------- time

#[test]
fn timelock_against_the_milestone_timestamp() {
    let a = key(1);
    let locked = basic_full(
        M,
        vec![],
        vec![
            UnlockCondition::Address(ed(&a)),
            UnlockCondition::Timelock(1000),
        ],
        vec![],
    );
    let t = build(
        vec![(oid(9, 0), locked)],
        vec![basic(M, ed(&a))],
        &[U::Sig(&a)],
    );
    assert_eq!(check_at(&t, 999), Err(TimelockNotExpired));
    assert_eq!(check_at(&t, 1000), Ok(()));
    assert_eq!(check_at(&t, 1001), Ok(()));
}

#[test]
fn expiration_moves_ownership_to_the_return_address() {
    let (a, b) = (key(1), key(2));
    let out = basic_full(
        M,
        vec![],
        vec![
            UnlockCondition::Address(ed(&a)),
            UnlockCondition::Expiration {
                return_address: ed(&b),
                unix_time: 1000,
            },
        ],
        vec![],
    );
    let by_a = build(
        vec![(oid(9, 0), out.clone())],
        vec![basic(M, ed(&a))],
        &[U::Sig(&a)],
    );
    let by_b = build(
        vec![(oid(9, 0), out)],
        vec![basic(M, ed(&b))],
        &[U::Sig(&b)],
    );
    assert_eq!(check_at(&by_a, 999), Ok(()));
    assert_eq!(check_at(&by_b, 999), Err(InvalidSignature));
    assert_eq!(check_at(&by_a, 1000), Err(InvalidSignature));
    assert_eq!(check_at(&by_b, 1000), Ok(()));
}

// ---------------------------------------------------------------- storage deposit return

fn sdruc_output(
    owner: &SigningKey,
    ret: &SigningKey,
    amount: u64,
    ret_amount: u64,
) -> Output<'static> {
    basic_full(
        amount,
        vec![],
        vec![
            UnlockCondition::Address(ed(owner)),
            UnlockCondition::StorageDepositReturn {
                return_address: ed(ret),
                amount: ret_amount,
            },
        ],
        vec![],
    )
}

#[test]
fn storage_deposit_return_fulfilled_and_not() {
    let (a, b) = (key(1), key(2));
    let input = || vec![(oid(9, 0), sdruc_output(&a, &b, M, 100_000))];
    let t = build(
        input(),
        vec![basic(100_000, ed(&b)), basic(900_000, ed(&a))],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Ok(()));

    let t = build(
        input(),
        vec![basic(99_999, ed(&b)), basic(900_001, ed(&a))],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Err(ReturnAmountNotFulfilled));

    let t = build(input(), vec![basic(M, ed(&a))], &[U::Sig(&a)]);
    assert_eq!(check(&t), Err(ReturnAmountNotFulfilled));

    // Only simple transfers count: a Tag feature disqualifies the refund.
    let tagged = basic_full(
        100_000,
        vec![],
        vec![UnlockCondition::Address(ed(&b))],
        vec![Feature::Tag(Bytes(Cow::Owned(b"refund".to_vec())))],
    );
    let t = build(input(), vec![tagged, basic(900_000, ed(&a))], &[U::Sig(&a)]);
    assert_eq!(check(&t), Err(ReturnAmountNotFulfilled));

    // Two inputs owing the same address add up.
    let t = build(
        vec![
            (oid(9, 0), sdruc_output(&a, &b, M, 100_000)),
            (oid(9, 1), sdruc_output(&a, &b, M, 100_000)),
        ],
        vec![basic(150_000, ed(&b)), basic(1_850_000, ed(&a))],
        &[U::Sig(&a), U::Ref(0)],
    );
    assert_eq!(check(&t), Err(ReturnAmountNotFulfilled));
}

#[test]
fn storage_deposit_return_not_owed_when_the_return_address_unlocks() {
    let (a, b, c) = (key(1), key(2), key(3));
    let out = basic_full(
        M,
        vec![],
        vec![
            UnlockCondition::Address(ed(&a)),
            UnlockCondition::StorageDepositReturn {
                return_address: ed(&b),
                amount: 100_000,
            },
            UnlockCondition::Expiration {
                return_address: ed(&b),
                unix_time: 1000,
            },
        ],
        vec![],
    );
    let t = build(
        vec![(oid(9, 0), out.clone())],
        vec![basic(M, ed(&c))],
        &[U::Sig(&b)],
    );
    assert_eq!(check_at(&t, 1000), Ok(()));
    let t = build(
        vec![(oid(9, 0), out)],
        vec![basic(M, ed(&c))],
        &[U::Sig(&a)],
    );
    assert_eq!(check_at(&t, 999), Err(ReturnAmountNotFulfilled));
}

// ---------------------------------------------------------------- sender

#[test]
fn sender_feature_must_be_unlocked() {
    let (a, b, c) = (key(1), key(2), key(3));
    let sent_by = |s: &SigningKey| {
        basic_full(
            M,
            vec![],
            vec![UnlockCondition::Address(ed(&b))],
            vec![Feature::Sender(ed(s))],
        )
    };
    let t = build(
        vec![(oid(9, 0), basic(M, ed(&a)))],
        vec![sent_by(&a)],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Ok(()));
    let t = build(
        vec![(oid(9, 0), basic(M, ed(&a)))],
        vec![sent_by(&c)],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Err(InvalidSender));
}

#[test]
fn alias_sender_needs_a_state_transition() {
    let (sc, gov, x) = (key(1), key(2), key(3));
    let id = [0xa1; 32];
    let sent = basic_full(
        M,
        vec![],
        vec![UnlockCondition::Address(ed(&x))],
        vec![Feature::Sender(alias_addr(id))],
    );
    let input = || {
        vec![
            (oid(9, 0), Output::Alias(alias(M, id, 3, 0, &sc, &gov))),
            (oid(9, 1), basic(M, ed(&sc))),
        ]
    };
    let t = build(
        input(),
        vec![Output::Alias(alias(M, id, 4, 0, &sc, &gov)), sent.clone()],
        &[U::Sig(&sc), U::Ref(0)],
    );
    assert_eq!(check(&t), Ok(()));
    // Governance transition: the governor signs, the alias address is not unlocked.
    let mut next = alias(M, id, 3, 0, &sc, &gov);
    next.unlock_conditions[0] = UnlockCondition::StateControllerAddress(ed(&x));
    let t = build(
        vec![
            (oid(9, 0), Output::Alias(alias(M, id, 3, 0, &sc, &gov))),
            (oid(9, 1), basic(M, ed(&gov))),
        ],
        vec![Output::Alias(next), sent],
        &[U::Sig(&gov), U::Ref(0)],
    );
    assert_eq!(check(&t), Err(InvalidSender));
}

// ---------------------------------------------------------------- alias

#[test]
fn alias_creation_with_issuer_and_then_state_transition() {
    let (sc, gov) = (key(1), key(2));
    let mut new_alias = alias(M, [0; 32], 0, 0, &sc, &gov);
    new_alias.immutable_features = vec![Feature::Issuer(ed(&sc))];
    let create = build(
        vec![(oid(9, 0), basic(2 * M, ed(&sc)))],
        vec![Output::Alias(new_alias.clone()), basic(M, ed(&sc))],
        &[U::Sig(&sc)],
    );
    assert_eq!(check(&create), Ok(()));

    // The issuer must be unlocked in the creating transaction.
    let mut foreign = new_alias.clone();
    foreign.immutable_features = vec![Feature::Issuer(ed(&gov))];
    let t = build(
        vec![(oid(9, 0), basic(2 * M, ed(&sc)))],
        vec![Output::Alias(foreign), basic(M, ed(&sc))],
        &[U::Sig(&sc)],
    );
    assert_eq!(check(&t), Err(InvalidChainStateTransition));

    // Spend the created alias (stored with its zero id): its id derives from the output id.
    let created = OutputId {
        transaction_id: create.id,
        index: 0,
    };
    let id = alias_id(&created);
    let mut next = alias(M, id, 1, 0, &sc, &gov);
    next.immutable_features = new_alias.immutable_features.clone();
    next.state_metadata = Bytes(Cow::Owned(b"state 1".to_vec()));
    let t = build(
        vec![(created, Output::Alias(new_alias.clone()))],
        vec![Output::Alias(next.clone())],
        &[U::Sig(&sc)],
    );
    assert_eq!(check(&t), Ok(()));

    // The governor cannot perform a state transition.
    let t = build(
        vec![(created, Output::Alias(new_alias.clone()))],
        vec![Output::Alias(next.clone())],
        &[U::Sig(&gov)],
    );
    assert_eq!(check(&t), Err(InvalidSignature));

    // Immutable features never change.
    let mut changed = next.clone();
    changed.immutable_features = vec![];
    let t = build(
        vec![(created, Output::Alias(new_alias.clone()))],
        vec![Output::Alias(changed)],
        &[U::Sig(&sc)],
    );
    assert_eq!(check(&t), Err(InvalidChainStateTransition));

    // A state transition cannot change the controllers.
    let mut moved = next;
    moved.unlock_conditions[1] = UnlockCondition::GovernorAddress(ed(&sc));
    let t = build(
        vec![(created, Output::Alias(new_alias))],
        vec![Output::Alias(moved)],
        &[U::Sig(&sc)],
    );
    assert_eq!(check(&t), Err(InvalidChainStateTransition));
}

#[test]
fn alias_governance_transition() {
    let (sc, gov, x) = (key(1), key(2), key(3));
    let id = [0xa1; 32];
    let current = || vec![(oid(9, 0), Output::Alias(alias(M, id, 5, 2, &sc, &gov)))];
    let mut next = alias(M, id, 5, 2, &sc, &gov);
    next.unlock_conditions[0] = UnlockCondition::StateControllerAddress(ed(&x));
    next.features = vec![Feature::Metadata(Bytes(Cow::Owned(b"gov".to_vec())))];
    let t = build(
        current(),
        vec![Output::Alias(next.clone())],
        &[U::Sig(&gov)],
    );
    assert_eq!(check(&t), Ok(()));
    // The state controller cannot govern.
    let t = build(current(), vec![Output::Alias(next.clone())], &[U::Sig(&sc)]);
    assert_eq!(check(&t), Err(InvalidSignature));
    // A governance transition keeps the state (here: the state metadata).
    let mut bad = next;
    bad.state_metadata = Bytes(Cow::Owned(b"new state".to_vec()));
    let t = build(current(), vec![Output::Alias(bad)], &[U::Sig(&gov)]);
    assert_eq!(check(&t), Err(InvalidChainStateTransition));
    // A state index jump is no state transition: governor-owned, then rejected.
    let t = build(
        current(),
        vec![Output::Alias(alias(M, id, 7, 2, &sc, &gov))],
        &[U::Sig(&gov)],
    );
    assert_eq!(check(&t), Err(InvalidChainStateTransition));
}

#[test]
fn alias_destruction_by_the_governor() {
    let (sc, gov) = (key(1), key(2));
    let id = [0xa1; 32];
    let input = || vec![(oid(9, 0), Output::Alias(alias(M, id, 5, 0, &sc, &gov)))];
    let t = build(input(), vec![basic(M, ed(&gov))], &[U::Sig(&gov)]);
    assert_eq!(check(&t), Ok(()));
    let t = build(input(), vec![basic(M, ed(&sc))], &[U::Sig(&sc)]);
    assert_eq!(check(&t), Err(InvalidSignature));
}

#[test]
fn alias_owned_output_needs_a_state_transitioned_alias_unlock() {
    let (sc, gov, x) = (key(1), key(2), key(3));
    let id = [0xa1; 32];
    let inputs = || {
        vec![
            (oid(9, 0), Output::Alias(alias(M, id, 5, 0, &sc, &gov))),
            (oid(9, 1), basic(M, alias_addr(id))),
        ]
    };
    let t = build(
        inputs(),
        vec![
            Output::Alias(alias(M, id, 6, 0, &sc, &gov)),
            basic(M, ed(&x)),
        ],
        &[U::Sig(&sc), U::Alias(0)],
    );
    assert_eq!(check(&t), Ok(()));

    // Governance transition: the alias does not unlock what it owns.
    let mut next = alias(M, id, 5, 0, &sc, &gov);
    next.unlock_conditions[0] = UnlockCondition::StateControllerAddress(ed(&x));
    let t = build(
        inputs(),
        vec![Output::Alias(next), basic(M, ed(&x))],
        &[U::Sig(&gov), U::Alias(0)],
    );
    assert_eq!(check(&t), Err(InvalidInputUnlock));

    // The wrong kind of unlock for an alias owner.
    let t = build(
        inputs(),
        vec![
            Output::Alias(alias(M, id, 6, 0, &sc, &gov)),
            basic(M, ed(&x)),
        ],
        &[U::Sig(&sc), U::Nft(0)],
    );
    assert_eq!(check(&t), Err(InvalidInputUnlock));
}

#[test]
fn chain_output_with_unknown_id_is_invalid() {
    let (a, b) = (key(1), key(2));
    let t = build(
        vec![(oid(9, 0), basic(M, ed(&a)))],
        vec![Output::Alias(alias(M, [0x77; 32], 1, 0, &a, &b))],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Err(InvalidChainStateTransition));
    let t = build(
        vec![(oid(9, 0), basic(M, ed(&a)))],
        vec![Output::Nft(nft(M, [0x77; 32], ed(&b)))],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Err(InvalidChainStateTransition));
}

// ---------------------------------------------------------------- foundry

const ALIAS: [u8; 32] = [0xa1; 32];

fn token(serial: u32) -> [u8; 38] {
    foundry_id(&ALIAS, serial, 0)
}

#[test]
fn foundry_creation_mints_native_tokens() {
    let (sc, gov, x) = (key(1), key(2), key(3));
    let inputs = || {
        vec![
            (oid(9, 0), Output::Alias(alias(M, ALIAS, 1, 0, &sc, &gov))),
            (oid(9, 1), basic(2 * M, ed(&sc))),
        ]
    };
    let outputs = |serial: u32, counter: u32, minted: u64, paid: u64| {
        vec![
            Output::Alias(alias(M, ALIAS, 2, counter, &sc, &gov)),
            Output::Foundry(foundry(ALIAS, serial, minted, 0)),
            basic_nt(M, ed(&x), vec![nt(token(serial), paid)]),
        ]
    };
    let unlocks = [U::Sig(&sc), U::Ref(0)];
    assert_eq!(
        check(&build(inputs(), outputs(1, 1, 1000, 1000), &unlocks)),
        Ok(())
    );
    // Minted supply must equal what the outputs carry.
    assert_eq!(
        check(&build(inputs(), outputs(1, 1, 1000, 999), &unlocks)),
        Err(InvalidChainStateTransition)
    );
    // The serial number must be in (old counter, new counter].
    assert_eq!(
        check(&build(inputs(), outputs(2, 1, 1000, 1000), &unlocks)),
        Err(InvalidChainStateTransition)
    );
    // The counter must grow by the number of new foundries.
    assert_eq!(
        check(&build(inputs(), outputs(1, 2, 1000, 1000), &unlocks)),
        Err(InvalidChainStateTransition)
    );
    // The alias must transition in the same transaction.
    let t = build(
        vec![(oid(9, 1), basic(3 * M, ed(&sc)))],
        vec![
            Output::Foundry(foundry(ALIAS, 1, 1000, 0)),
            basic_nt(2 * M, ed(&x), vec![nt(token(1), 1000)]),
        ],
        &[U::Sig(&sc)],
    );
    assert_eq!(check(&t), Err(InvalidChainStateTransition));
}

#[test]
fn two_new_foundries_ascend_by_serial() {
    let (sc, gov, x) = (key(1), key(2), key(3));
    let t = |first: u32, second: u32| {
        build(
            vec![
                (oid(9, 0), Output::Alias(alias(M, ALIAS, 1, 0, &sc, &gov))),
                (oid(9, 1), basic(3 * M, ed(&sc))),
            ],
            vec![
                Output::Alias(alias(M, ALIAS, 2, 2, &sc, &gov)),
                Output::Foundry(foundry(ALIAS, first, 10, 0)),
                Output::Foundry(foundry(ALIAS, second, 20, 0)),
                basic_nt(M, ed(&x), {
                    let mut v = vec![nt(token(first), 10), nt(token(second), 20)];
                    v.sort_by(|a, b| a.id.as_array().cmp(b.id.as_array()));
                    v
                }),
            ],
            &[U::Sig(&sc), U::Ref(0)],
        )
    };
    assert_eq!(check(&t(1, 2)), Ok(()));
    assert_eq!(check(&t(2, 1)), Err(InvalidChainStateTransition));
}

fn melt_case(melted_after: u64, tokens_after: u64) -> Tx {
    let (sc, gov, x) = (key(1), key(2), key(3));
    let mut outputs = vec![
        Output::Alias(alias(M, ALIAS, 3, 1, &sc, &gov)),
        Output::Foundry(foundry(ALIAS, 1, 1000, melted_after)),
    ];
    outputs.push(if tokens_after == 0 {
        basic(M, ed(&x))
    } else {
        basic_nt(M, ed(&x), vec![nt(token(1), tokens_after)])
    });
    build(
        vec![
            (oid(9, 0), Output::Alias(alias(M, ALIAS, 2, 1, &sc, &gov))),
            (oid(9, 1), Output::Foundry(foundry(ALIAS, 1, 1000, 0))),
            (oid(9, 2), basic_nt(M, ed(&x), vec![nt(token(1), 1000)])),
        ],
        outputs,
        &[U::Sig(&sc), U::Alias(0), U::Sig(&x)],
    )
}

#[test]
fn foundry_melting_and_burning() {
    assert_eq!(check(&melt_case(400, 600)), Ok(()), "melt 400");
    assert_eq!(check(&melt_case(300, 600)), Ok(()), "melt 300, burn 100");
    assert_eq!(
        check(&melt_case(500, 600)),
        Err(InvalidChainStateTransition),
        "melt more than the deficit"
    );
    assert_eq!(
        check(&melt_case(100, 1000)),
        Err(InvalidChainStateTransition),
        "melt without deficit"
    );
}

#[test]
fn foundry_minting_more_later() {
    let (sc, gov) = (key(1), key(2));
    let t = |minted_after: u64| {
        build(
            vec![
                (oid(9, 0), Output::Alias(alias(M, ALIAS, 2, 1, &sc, &gov))),
                (oid(9, 1), Output::Foundry(foundry(ALIAS, 1, 1000, 0))),
            ],
            vec![
                Output::Alias(alias(M, ALIAS, 3, 1, &sc, &gov)),
                Output::Foundry(foundry(ALIAS, 1, minted_after, 0)),
            ],
            &[U::Sig(&sc), U::Alias(0)],
        )
    };
    // No tokens appear on the output side: minted must stay.
    assert_eq!(check(&t(1000)), Ok(()));
    assert_eq!(check(&t(1500)), Err(InvalidChainStateTransition));
}

#[test]
fn foundry_destruction_requires_everything_melted() {
    let (sc, gov, x) = (key(1), key(2), key(3));
    let t = |keep_tokens: bool| {
        let last = if keep_tokens {
            basic_nt(2 * M, ed(&x), vec![nt(token(1), 600)])
        } else {
            basic(2 * M, ed(&x))
        };
        build(
            vec![
                (oid(9, 0), Output::Alias(alias(M, ALIAS, 2, 1, &sc, &gov))),
                (oid(9, 1), Output::Foundry(foundry(ALIAS, 1, 1000, 400))),
                (oid(9, 2), basic_nt(M, ed(&x), vec![nt(token(1), 600)])),
            ],
            vec![Output::Alias(alias(M, ALIAS, 3, 1, &sc, &gov)), last],
            &[U::Sig(&sc), U::Alias(0), U::Sig(&x)],
        )
    };
    assert_eq!(check(&t(false)), Ok(()));
    assert_eq!(check(&t(true)), Err(InvalidChainStateTransition));
}

// ---------------------------------------------------------------- native tokens

#[test]
fn native_tokens_without_a_foundry() {
    let (a, b) = (key(1), key(2));
    let tok = token(7);
    let input = || vec![(oid(9, 0), basic_nt(M, ed(&a), vec![nt(tok, 100)]))];
    let t = build(
        input(),
        vec![basic_nt(M, ed(&b), vec![nt(tok, 100)])],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Ok(()));
    let t = build(
        input(),
        vec![basic_nt(M, ed(&b), vec![nt(tok, 50)])],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Ok(()), "burning is allowed");
    let t = build(
        input(),
        vec![basic_nt(M, ed(&b), vec![nt(tok, 150)])],
        &[U::Sig(&a)],
    );
    assert_eq!(
        check(&t),
        Err(InvalidNativeTokens),
        "minting needs the foundry"
    );
    let t = build(
        input(),
        vec![basic_nt(M, ed(&b), vec![nt(tok, 100), nt(token(8), 1)])],
        &[U::Sig(&a)],
    );
    assert_eq!(
        check(&t),
        Err(InvalidNativeTokens),
        "new token without its foundry"
    );
}

#[test]
fn at_most_64_distinct_native_tokens() {
    let (a, b) = (key(1), key(2));
    let tokens = |range: std::ops::Range<u32>| range.map(|s| nt(token(s), 1)).collect::<Vec<_>>();
    let t = build(
        vec![
            (oid(9, 0), basic_nt(M, ed(&a), tokens(0..40))),
            (oid(9, 1), basic_nt(M, ed(&a), tokens(40..65))),
        ],
        vec![basic(2 * M, ed(&b))],
        &[U::Sig(&a), U::Ref(0)],
    );
    assert_eq!(check(&t), Err(InvalidNativeTokens));
    let t = build(
        vec![
            (oid(9, 0), basic_nt(M, ed(&a), tokens(0..40))),
            (oid(9, 1), basic_nt(M, ed(&a), tokens(40..64))),
        ],
        vec![basic(2 * M, ed(&b))],
        &[U::Sig(&a), U::Ref(0)],
    );
    assert_eq!(check(&t), Ok(()), "64 distinct tokens, all burned");
}

// ---------------------------------------------------------------- NFT

#[test]
fn nft_creation_with_issuer() {
    let (a, b) = (key(1), key(2));
    let mut new = nft(M, [0; 32], ed(&b));
    new.immutable_features = vec![
        Feature::Issuer(ed(&a)),
        Feature::Metadata(Bytes(Cow::Owned(b"art".to_vec()))),
    ];
    let t = build(
        vec![(oid(9, 0), basic(M, ed(&a)))],
        vec![Output::Nft(new.clone())],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Ok(()));
    new.immutable_features[0] = Feature::Issuer(ed(&b));
    let t = build(
        vec![(oid(9, 0), basic(M, ed(&a)))],
        vec![Output::Nft(new)],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Err(InvalidChainStateTransition));
}

#[test]
fn nft_transfer_with_nft_unlock() {
    let (a, b) = (key(1), key(2));
    let created = oid(9, 0);
    let id = nft_id(&created);
    let mut stored = nft(M, [0; 32], ed(&a));
    stored.immutable_features = vec![Feature::Metadata(Bytes(Cow::Owned(b"art".to_vec())))];
    let mut next = nft(M, id, ed(&b));
    next.immutable_features = stored.immutable_features.clone();
    let inputs = || {
        vec![
            (created, Output::Nft(stored.clone())),
            (oid(8, 3), basic(M, nft_addr(id))),
        ]
    };
    let t = build(
        inputs(),
        vec![Output::Nft(next.clone()), basic(M, ed(&a))],
        &[U::Sig(&a), U::Nft(0)],
    );
    assert_eq!(check(&t), Ok(()));

    // The NFT's id must be the one derived from its creating output.
    let mut wrong = next.clone();
    wrong.nft_id = Hash32::owned([0x66; 32]);
    let t = build(
        inputs(),
        vec![Output::Nft(wrong), basic(M, ed(&a))],
        &[U::Sig(&a), U::Nft(0)],
    );
    assert_eq!(check(&t), Err(InvalidChainStateTransition));

    // Immutable features never change.
    let mut changed = next.clone();
    changed.immutable_features = vec![Feature::Metadata(Bytes(Cow::Owned(b"fake".to_vec())))];
    let t = build(
        inputs(),
        vec![Output::Nft(changed), basic(M, ed(&a))],
        &[U::Sig(&a), U::Nft(0)],
    );
    assert_eq!(check(&t), Err(InvalidChainStateTransition));

    // An NFT-owned output needs an NFT unlock.
    let t = build(
        inputs(),
        vec![Output::Nft(next.clone()), basic(M, ed(&a))],
        &[U::Sig(&a), U::Alias(0)],
    );
    assert_eq!(check(&t), Err(InvalidInputUnlock));

    // ... referencing the NFT's own input.
    let t = build(
        vec![
            (oid(7, 1), basic(M, ed(&a))),
            (created, Output::Nft(stored.clone())),
            (oid(8, 3), basic(M, nft_addr(id))),
        ],
        vec![Output::Nft(next), basic(2 * M, ed(&a))],
        &[U::Sig(&a), U::Ref(0), U::Nft(0)],
    );
    assert_eq!(check(&t), Err(InvalidInputUnlock));

    // Destroying the NFT is fine.
    let t = build(
        vec![(created, Output::Nft(stored))],
        vec![basic(M, ed(&b))],
        &[U::Sig(&a)],
    );
    assert_eq!(check(&t), Ok(()));
}

// ---------------------------------------------------------------- property

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// A two-input transfer is valid exactly when the amounts balance, and the
    /// verdict does not depend on the milestone timestamp.
    #[test]
    fn transfer_valid_iff_amounts_balance(
        a1 in 50_000u64..10_000_000,
        a2 in 50_000u64..10_000_000,
        out in 50_000u64..20_000_000,
        ts in proptest::prelude::any::<u32>(),
    ) {
        let (a, b) = (key(1), key(2));
        let t = build(
            vec![(oid(9, 0), basic(a1, ed(&a))), (oid(9, 1), basic(a2, ed(&b)))],
            vec![basic(out, ed(&b))],
            &[U::Sig(&a), U::Sig(&b)],
        );
        let want = if a1 + a2 == out { Ok(()) } else { Err(AmountMismatch) };
        proptest::prop_assert_eq!(check_at(&t, ts), want);
    }
}

#[test]
fn transfer_balances_at_the_edge() {
    let (a, b) = (key(1), key(2));
    let t = build(
        vec![
            (oid(9, 0), basic(60_000, ed(&a))),
            (oid(9, 1), basic(70_000, ed(&b))),
        ],
        vec![basic(130_000, ed(&b))],
        &[U::Sig(&a), U::Sig(&b)],
    );
    assert_eq!(check_at(&t, 0), Ok(()));
}
