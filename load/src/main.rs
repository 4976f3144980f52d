//! `ledger-load`: drives a running ledger-node's REST API on loopback and reports throughput,
//! latency percentiles and status codes (see the library docs and BENCHMARKS.md).

#![forbid(unsafe_code)]

use std::{process::ExitCode, time::Duration};

use clap::Parser;
use ledger_load::{run_at_rate, tool_args::ToolArgs, Scenario};

/// Load a running node's REST API (loopback only) with many keep-alive connections and report
/// throughput, latency percentiles and status codes.
#[derive(Debug, Parser)]
#[command(name = "ledger-load", version)]
struct LoadArgs {
    /// Base URL of the node's API; its host must resolve to loopback addresses only.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:14265")]
    url: String,
    /// Concurrent keep-alive connections (one request in flight on each).
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::value_parser!(u16).range(1..=4096))]
    connections: u16,
    /// Length of the run in seconds (1..=600) [default: 10, or up to 600 with --requests].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=600))]
    duration: Option<u64>,
    /// Stop after this many requests (and at the latest after --duration).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    requests: Option<u64>,
    /// Start this many requests per second in total over all connections, on a fixed
    /// schedule; a start time missed because every connection was busy is dropped, never made
    /// up in a burst [default: unlimited, back to back on every connection].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    rate: Option<u32>,
    /// The load to generate.
    #[arg(long, value_enum)]
    scenario: Scenario,
    #[command(flatten)]
    tool: ToolArgs,
}

fn main() -> ExitCode {
    let args = LoadArgs::parse();
    let runtime = match args.tool.runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ledger-load: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let report = runtime.block_on(run_at_rate(
        &args.url,
        usize::from(args.connections),
        args.duration.map(Duration::from_secs),
        args.requests,
        args.rate,
        args.scenario,
        args.tool.token,
    ));
    match report {
        Ok(report) if args.tool.json => match serde_json::to_string_pretty(&report) {
            Ok(text) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("ledger-load: {e}");
                ExitCode::FAILURE
            }
        },
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ledger-load: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
