//! `ledger-node`: the node binary.

use clap::Parser;

/// A node for the block-DAG ledger (v2 Stardust and v3 Nova blocks).
#[derive(Debug, Parser)]
#[command(name = "ledger-node", version, about)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
    println!("ledger-node: the node is not built yet; see --help");
}
