//! The engine's errors.

use crate::log::LogError;

/// An engine failure that is not about a submitted block.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The block log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The genesis file is invalid.
    #[error("genesis: {0}")]
    Genesis(String),
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
    /// The coordinator settings contradict each other.
    #[error("coordinator settings: {0}")]
    Config(String),
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

/// Why a submitted block was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubmitError {
    /// The block is invalid (HTTP 400): the message says why.
    #[error("invalid block: {0}")]
    Invalid(String),
    /// The node cannot fill in parents or PoW, or is not synced (HTTP 503).
    #[error("{0}")]
    Unavailable(String),
    /// An internal fault (HTTP 500).
    #[error("internal error: {0}")]
    Internal(String),
}
