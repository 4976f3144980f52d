//! The options `ledger-load` and `mqtt-swarm` both take beside their own.

use clap::Args;

/// The runtime's threads, the token for protected routes and the report's form.
#[derive(Debug, Args)]
pub struct ToolArgs {
    /// Worker threads of the tool's runtime [default: all cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Token for protected routes, sent as `Authorization: Bearer TOKEN`.
    #[arg(
        long,
        env = "LEDGER_NODE_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

impl ToolArgs {
    /// The tool's multi-threaded runtime with [`Self::threads`] workers.
    ///
    /// # Errors
    /// The runtime cannot be started.
    pub fn runtime(&self) -> std::io::Result<tokio::runtime::Runtime> {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        if let Some(n) = self.threads {
            builder.worker_threads(usize::from(n));
        }
        builder.enable_all().build()
    }
}
