//! The engine's errors.

use ledger_codec::hexstr::to_hex;

use crate::log::LogError;
use crate::richlist::RichListError;
use crate::tangle::AttachError;
use crate::utxo::LedgerError;

/// An engine failure that is not about a submitted block.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The block log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The genesis file is invalid.
    #[error("genesis: {0}")]
    Genesis(#[from] GenesisError),
    /// A coordinator key file does not hold a seed.
    #[error("genesis: {} does not hold a 32-byte hex seed", path.display())]
    CoordinatorKey {
        /// The key file.
        path: std::path::PathBuf,
    },
    /// An I/O failure outside the log (key files, data dir).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Stored state contradicts itself (a bug or a damaged store).
    #[error("inconsistent state: {0}")]
    Inconsistent(String),
    /// A history file beside the log (block metadata, journal, checkpoint) failed.
    #[error(transparent)]
    History(#[from] crate::history::HistoryError),
    /// The coordinator settings contradict each other.
    #[error("coordinator settings: {0}")]
    Config(#[from] ConfigError),
    /// A value the node built has no wire form (a list longer than its prefix can count).
    #[error("cannot encode: {0}")]
    Encode(#[from] ledger_codec::Error),
    /// The coordinator is not enabled on this node.
    #[error("the coordinator is not enabled on this node")]
    NoCoordinator,
    /// The node is shutting down.
    #[error("the node is shutting down")]
    ShuttingDown,
}

/// Why a genesis cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenesisError {
    /// The document is not the genesis JSON.
    #[error("invalid genesis JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// There is no solid entry point.
    #[error("solidEntryPoints must not be empty")]
    NoSolidEntryPoints,
    /// An output of the document is invalid.
    #[error("outputs[{index}]: {problem}")]
    Output {
        /// Its place in `outputs`.
        index: usize,
        /// What is wrong with it.
        #[source]
        problem: GenesisOutputError,
    },
    /// A genesis output's stored bytes do not decode.
    #[error("{0}")]
    Decode(#[source] ledger_codec::Error),
    /// The genesis balances do not fit the rich list.
    #[error("{0}")]
    RichList(#[source] RichListError),
    /// The ledger cannot book the genesis outputs.
    #[error("{0}")]
    Ledger(#[source] LedgerError),
}

/// What is wrong with one output of a genesis document.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenesisOutputError {
    /// Its output id appears earlier in the document.
    #[error("duplicate outputId")]
    DuplicateId,
    /// Its output id's index is above the maximum.
    #[error("output index above 127")]
    IndexTooHigh,
    /// It has no wire form.
    #[error("{0}")]
    Encode(#[source] ledger_codec::Error),
    /// Its wire form does not decode.
    #[error("{0}")]
    Decode(#[source] ledger_codec::Error),
    /// It breaks an output rule of the protocol parameters.
    #[error("{0}")]
    Invalid(#[source] ledger_codec::Error),
    /// The outputs up to it add up to more than the token supply.
    #[error("outputs exceed the token supply")]
    ExceedsSupply,
    /// The outputs up to it are more bytes than a genesis can hold.
    #[error("genesis too large")]
    GenesisTooLarge,
    /// It is more bytes than an output can have.
    #[error("output too large")]
    OutputTooLarge,
}

/// How the coordinator settings contradict each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The milestone threshold is 0.
    #[error("the milestone threshold must be at least 1")]
    ZeroThreshold,
    /// The milestone threshold is above the number of distinct coordinator keys.
    #[error("a milestone threshold of {threshold} exceeds the {keys} distinct coordinator keys")]
    ThresholdAboveKeys {
        /// The milestone threshold.
        threshold: usize,
        /// Distinct coordinator keys.
        keys: usize,
    },
}

/// Why a submitted block was refused.
///
/// Each variant's payload says which rule or fault it was; the text is the message clients
/// see (after `invalid block: ` for [`SubmitError::Invalid`], after `internal error: ` for
/// [`SubmitError::Internal`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SubmitError {
    /// The block is invalid (HTTP 400): the rule it broke.
    #[error("invalid block: {0}")]
    Invalid(#[from] InvalidBlock),
    /// The node cannot fill in parents or store the block now (HTTP 503).
    #[error("{0}")]
    Unavailable(#[from] Unavailable),
    /// An internal fault (HTTP 500).
    #[error("internal error: {0}")]
    Internal(#[from] InternalError),
}

/// The rule a submitted block broke, with the values that broke it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidBlock {
    /// The request body is empty.
    #[error("request body is empty")]
    EmptyBody,
    /// The block ends before its nonce (or its PoW body).
    #[error("block is too short")]
    TooShort,
    /// A v3 block too short to compute its id.
    #[error("block too short for an id")]
    TooShortForId,
    /// The bytes do not decode as a block.
    #[error("{0}")]
    Decode(#[source] ledger_codec::Error),
    /// The block decodes but breaks a syntactic rule of the protocol parameters.
    #[error("{0}")]
    Syntax(#[source] ledger_codec::Error),
    /// A block built from a client's JSON fields has no wire form.
    #[error("{0}")]
    Encode(#[source] ledger_codec::Error),
    /// A client's block names a protocol version other than the network's.
    #[error("protocolVersion invalid: {version} (expected {expected})")]
    DraftProtocolVersion {
        /// The version the client gave.
        version: u64,
        /// The network's protocol version.
        expected: u8,
    },
    /// A block to be stored names a protocol version other than the network's.
    #[error("protocolVersion invalid: {version}")]
    ProtocolVersion {
        /// The block's version.
        version: u8,
    },
    /// No parents were given (the node is to fill them in) but the nonce is not 0.
    #[error("no parents were given but nonce was != 0")]
    ParentlessWithNonce,
    /// A transaction names another network.
    #[error("wrong networkID: {network_id} (this network's id is {expected})")]
    NetworkId {
        /// The transaction's network id.
        network_id: u64,
        /// This network's id.
        expected: u64,
    },
    /// The block's proof of work scores below the network's minimum.
    #[error("block has insufficient PoW score {score:.2} (minimum {min_score})")]
    PowScore {
        /// The block's score.
        score: f64,
        /// The network's minimum score.
        min_score: u32,
    },
    /// A milestone block's nonce is not 0.
    #[error("milestone blocks must have nonce 0")]
    MilestoneNonce,
    /// A milestone's parents are not its block's parents.
    #[error("milestone parents differ from the block's parents")]
    MilestoneParents,
    /// A milestone's essence has no wire form, so it has no id to verify.
    #[error("milestone: {0}")]
    MilestoneId(#[source] ledger_codec::Error),
    /// A milestone is signed by a key that is not a coordinator key.
    #[error("milestone signed by unknown key {}", to_hex(.key))]
    UnknownKey {
        /// The signer's public key.
        key: [u8; 32],
    },
    /// A milestone signature does not verify.
    #[error("invalid milestone signature by {}", to_hex(.key))]
    BadSignature {
        /// The signer's public key.
        key: [u8; 32],
    },
    /// A milestone carries fewer valid signatures than the threshold.
    #[error("milestone has {valid} valid signatures, {needed} needed")]
    TooFewSignatures {
        /// Valid signatures.
        valid: usize,
        /// The milestone threshold.
        needed: usize,
    },
    /// A milestone's index is not above the confirmed ledger index.
    #[error("milestone {index} is not newer than the ledger index {ledger_index}")]
    MilestoneNotNewer {
        /// The milestone's index.
        index: u32,
        /// The ledger index.
        ledger_index: u32,
    },
    /// A parent is unknown, not solid or below max depth (API submits only).
    #[error("{0}")]
    Attach(#[source] AttachError),
}

/// Why the node cannot take a block now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unavailable {
    /// Parents are to be filled in and the tangle has no tips.
    #[error("no parents were given and no tips are available to fill them in")]
    NoTips,
    /// The disk is full: no block is stored until space returns.
    #[error("storage full: the node stores no blocks until disk space returns")]
    StorageFull,
}

/// An internal fault while taking a block.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InternalError {
    /// The block log failed (append, or the wait for durability).
    #[error("{0}")]
    Log(#[source] LogError),
    /// Writing the parents the node chose into the client's bytes failed.
    #[error("filling in parents: {0}")]
    FillParents(#[source] ledger_codec::Error),
    /// Confirming a milestone after storing a block failed.
    #[error("{0}")]
    Confirm(#[source] Box<EngineError>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(e: impl Into<SubmitError>) -> String {
        e.into().to_string()
    }

    /// Clients, the server's tests and the refusal summary read these texts: typed errors
    /// keep them byte for byte.
    #[test]
    fn messages_are_the_texts_clients_know() {
        assert_eq!(
            text(InvalidBlock::PowScore {
                score: 412.0 / 3.0,
                min_score: 1500
            }),
            "invalid block: block has insufficient PoW score 137.33 (minimum 1500)"
        );
        assert_eq!(
            text(InvalidBlock::BadSignature { key: [0xab; 32] }),
            format!(
                "invalid block: invalid milestone signature by 0x{}",
                "ab".repeat(32)
            )
        );
        assert_eq!(
            text(InvalidBlock::UnknownKey { key: [1; 32] }),
            format!(
                "invalid block: milestone signed by unknown key 0x{}",
                "01".repeat(32)
            )
        );
        assert_eq!(
            text(InvalidBlock::TooFewSignatures {
                valid: 1,
                needed: 2
            }),
            "invalid block: milestone has 1 valid signatures, 2 needed"
        );
        assert_eq!(
            text(InvalidBlock::MilestoneNotNewer {
                index: 7,
                ledger_index: 9
            }),
            "invalid block: milestone 7 is not newer than the ledger index 9"
        );
        assert_eq!(
            text(InvalidBlock::ProtocolVersion { version: 1 }),
            "invalid block: protocolVersion invalid: 1"
        );
        assert_eq!(
            text(InvalidBlock::DraftProtocolVersion {
                version: 300,
                expected: 2
            }),
            "invalid block: protocolVersion invalid: 300 (expected 2)"
        );
        assert_eq!(
            text(InvalidBlock::NetworkId {
                network_id: 5,
                expected: 6
            }),
            "invalid block: wrong networkID: 5 (this network's id is 6)"
        );
        assert_eq!(
            text(InvalidBlock::ParentlessWithNonce),
            "invalid block: no parents were given but nonce was != 0"
        );
        assert_eq!(
            text(InvalidBlock::Attach(AttachError::BelowMaxDepth {
                parent: format!("0x{}", "11".repeat(32)),
                ocri: 1,
                cmi: 20,
                below_max_depth: 15,
            })),
            format!(
                "invalid block: block is below max depth: parent 0x{} has oldest cone root \
                 index 1, more than 15 behind the confirmed milestone index 20",
                "11".repeat(32)
            )
        );
        let codec = ledger_codec::Error::invalid("not sorted").at("parents");
        assert_eq!(
            text(InvalidBlock::Decode(codec.clone())),
            "invalid block: parents: not sorted"
        );
        assert_eq!(
            text(InvalidBlock::MilestoneId(codec.clone())),
            "invalid block: milestone: parents: not sorted"
        );
        assert_eq!(
            text(Unavailable::StorageFull),
            "storage full: the node stores no blocks until disk space returns"
        );
        assert_eq!(
            text(Unavailable::NoTips),
            "no parents were given and no tips are available to fill them in"
        );
        assert_eq!(
            text(InternalError::FillParents(codec)),
            "internal error: filling in parents: parents: not sorted"
        );
        assert_eq!(
            text(InternalError::Log(LogError::Poisoned)),
            "internal error: log is poisoned by an earlier fsync failure; reopen it"
        );
    }

    #[test]
    fn engine_messages_are_the_texts_operators_know() {
        assert_eq!(
            EngineError::from(ConfigError::ThresholdAboveKeys {
                threshold: 3,
                keys: 2
            })
            .to_string(),
            "coordinator settings: a milestone threshold of 3 exceeds the 2 distinct \
             coordinator keys"
        );
        assert_eq!(
            EngineError::from(ConfigError::ZeroThreshold).to_string(),
            "coordinator settings: the milestone threshold must be at least 1"
        );
        assert_eq!(
            EngineError::CoordinatorKey {
                path: "/data/coordinator.key".into()
            }
            .to_string(),
            "genesis: /data/coordinator.key does not hold a 32-byte hex seed"
        );
        assert_eq!(
            EngineError::from(GenesisError::Output {
                index: 2,
                problem: GenesisOutputError::DuplicateId
            })
            .to_string(),
            "genesis: outputs[2]: duplicate outputId"
        );
        assert_eq!(
            EngineError::from(GenesisError::NoSolidEntryPoints).to_string(),
            "genesis: solidEntryPoints must not be empty"
        );
    }

    /// The typed payload is the error's source: callers reach the codec's error.
    #[test]
    fn invalid_blocks_keep_their_source() {
        use std::error::Error as _;
        let e = SubmitError::from(InvalidBlock::Syntax(ledger_codec::Error::invalid("x")));
        let invalid = e.source().and_then(|s| s.downcast_ref::<InvalidBlock>());
        assert!(matches!(invalid, Some(InvalidBlock::Syntax(_))));
        let codec = invalid
            .and_then(|i| i.source())
            .and_then(|s| s.downcast_ref::<ledger_codec::Error>());
        assert_eq!(codec.map(ToString::to_string).as_deref(), Some("x"));
    }
}
