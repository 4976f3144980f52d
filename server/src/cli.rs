//! The command line of `ledger-node`.

use std::{net::SocketAddr, path::PathBuf};

use clap::{Args, Parser, Subcommand};
use serde::Deserialize;

/// A node for the block-DAG ledger (v2 Stardust and v3 Nova blocks).
///
/// Without a subcommand it runs the node (like `ledger-node run`): a single-node dev network
/// with the built-in coordinator, data in ./data and the REST API on 127.0.0.1:14265.
#[derive(Debug, Parser)]
#[command(
    name = "ledger-node",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do (default: run the node).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Flags of `run`, accepted without the subcommand too.
    #[command(flatten)]
    pub run: RunArgs,
}

impl Cli {
    /// The command to carry out: `run` with the top-level flags when none was given.
    pub fn into_command(self) -> Command {
        self.command.unwrap_or(Command::Run(self.run))
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the node.
    Run(RunArgs),
    /// Helper tools.
    #[command(subcommand)]
    Tools(Tool),
}

/// `ledger-node tools ...`.
#[derive(Debug, Subcommand)]
pub enum Tool {
    /// Print a token (JWT) for the protected API routes of the node using this data dir
    /// (creates the secret there if the node has not run yet).
    Jwt(JwtArgs),
    /// Decode a block or other object from binary to JSON (not implemented yet).
    Decode(PendingArgs),
    /// Encode a block or other object from JSON to binary (not implemented yet).
    Encode(PendingArgs),
    /// Compute the id of a block, transaction or output (not implemented yet).
    Id(PendingArgs),
}

/// Arguments of `tools jwt`.
#[derive(Debug, Args)]
pub struct JwtArgs {
    /// Data directory of the node whose secret signs the token.
    #[arg(
        long,
        env = "LEDGER_NODE_DATA_DIR",
        value_name = "DIR",
        default_value = "./data"
    )]
    pub data_dir: PathBuf,
}

/// Arguments of a tool that is not implemented yet (taken as they come).
#[derive(Debug, Args)]
pub struct PendingArgs {
    /// Anything.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<String>,
}

/// Settings of `ledger-node run`. Each is also read from the environment (`LEDGER_NODE_*`)
/// and from the TOML file given by `--config`, whose keys are the long flag names
/// (`api-bind = "127.0.0.1:14265"`). Precedence: command line, environment, file, default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RunArgs {
    /// TOML config file whose keys are the long flag names (e.g. `data-dir = "/var/ledger"`);
    /// flags and LEDGER_NODE_* variables override it.
    #[arg(long, env = "LEDGER_NODE_CONFIG", value_name = "FILE")]
    #[serde(skip)]
    pub config: Option<PathBuf>,

    /// Directory holding the block log, the ledger and the API token secret
    /// [default: ./data].
    #[arg(long, env = "LEDGER_NODE_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Genesis file (JSON: protocol parameters and initial outputs) used when the data dir
    /// is empty [default: the built-in dev genesis].
    #[arg(long, env = "LEDGER_NODE_GENESIS", value_name = "FILE")]
    pub genesis: Option<PathBuf>,

    /// Address and port the REST API listens on; port 0 picks a free port, printed at start
    /// [default: 127.0.0.1:14265].
    #[arg(long, env = "LEDGER_NODE_API_BIND", value_name = "ADDR:PORT")]
    pub api_bind: Option<SocketAddr>,

    /// Seconds between milestones of the built-in coordinator; 0 issues milestones only on
    /// demand (POST /api/core/v2/control/milestone) [default: 1].
    #[arg(long, env = "LEDGER_NODE_COORDINATOR_INTERVAL", value_name = "SECS")]
    pub coordinator_interval: Option<u64>,

    /// Do not run the built-in coordinator, so no milestones are issued by this node.
    #[arg(
        long,
        env = "LEDGER_NODE_NO_COORDINATOR",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub no_coordinator: Option<bool>,

    /// Number of threads doing proof of work for submitted blocks without a nonce
    /// [default: all cores].
    #[arg(long, env = "LEDGER_NODE_POW_WORKERS", value_name = "N")]
    pub pow_workers: Option<usize>,

    /// Never do proof of work for clients: a block without a nonce then gets 503 unless the
    /// network's minimum PoW score is 0.
    #[arg(
        long,
        env = "LEDGER_NODE_NO_POW",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub no_pow: Option<bool>,

    /// TIP-49 protocol parameters (one JSON object) that enable v3 (Nova) blocks
    /// [default: v3 off].
    #[arg(long, env = "LEDGER_NODE_V3_PROTOCOL_PARAMETERS", value_name = "FILE")]
    pub v3_protocol_parameters: Option<PathBuf>,

    /// Largest request body the API accepts, in bytes; larger ones get 413
    /// [default: 1048576].
    #[arg(long, env = "LEDGER_NODE_API_BODY_LIMIT", value_name = "BYTES")]
    pub api_body_limit: Option<usize>,

    /// Comma-separated route patterns open to everyone (`*` matches anything, e.g.
    /// `/api/core/v2/blocks*`) [default: every route except peers and admin routes].
    #[arg(
        long,
        env = "LEDGER_NODE_PUBLIC_ROUTES",
        value_name = "LIST",
        value_delimiter = ','
    )]
    pub public_routes: Option<Vec<String>>,

    /// Comma-separated route patterns that need `Authorization: Bearer <token>` with a token
    /// from `ledger-node tools jwt`; routes on neither list get 403 [default: /api/*].
    #[arg(
        long,
        env = "LEDGER_NODE_PROTECTED_ROUTES",
        value_name = "LIST",
        value_delimiter = ','
    )]
    pub protected_routes: Option<Vec<String>>,
}

impl RunArgs {
    /// Each setting from `self`, or from `lower` where `self` has none.
    pub fn or(self, lower: Self) -> Self {
        Self {
            config: self.config.or(lower.config),
            data_dir: self.data_dir.or(lower.data_dir),
            genesis: self.genesis.or(lower.genesis),
            api_bind: self.api_bind.or(lower.api_bind),
            coordinator_interval: self.coordinator_interval.or(lower.coordinator_interval),
            no_coordinator: self.no_coordinator.or(lower.no_coordinator),
            pow_workers: self.pow_workers.or(lower.pow_workers),
            no_pow: self.no_pow.or(lower.no_pow),
            v3_protocol_parameters: self.v3_protocol_parameters.or(lower.v3_protocol_parameters),
            api_body_limit: self.api_body_limit.or(lower.api_body_limit),
            public_routes: self.public_routes.or(lower.public_routes),
            protected_routes: self.protected_routes.or(lower.protected_routes),
        }
    }
}
