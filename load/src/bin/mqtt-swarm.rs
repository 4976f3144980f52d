//! `mqtt-swarm`: opens many MQTT-over-WebSocket subscribers on a running node's event API
//! (loopback only), posts probe blocks and reports their delivery latency to the `blocks`
//! subscribers (see `ledger_load::swarm` and BENCHMARKS.md).

#![forbid(unsafe_code)]

use std::{io::Write, process::ExitCode, time::Duration};

use clap::Parser;
use ledger_load::{
    indexer_address,
    swarm::{connect_all, measure, plan_for, Role},
    tool_args::ToolArgs,
};

/// Connect --subscribers MQTT clients to a node's event API (ws://HOST/api/mqtt/v1),
/// --blocks-subscribers of them on `blocks` and each other one on its own
/// `outputs/unlock/address/<bech32>` topic; then post --probe-rate JSON tagged-data blocks a
/// second for --duration seconds and report the time from each probe's 201 to its delivery
/// to every `blocks` subscriber (a delivery before the 201 counts 0 ms), the messages
/// received and the clients the node dropped.
///
/// "mqtt-swarm: N subscribers connected; probing for D s" is written to stderr once every
/// client is subscribed, when probing starts. A client that cannot connect or subscribe ends
/// the run (exit 1) before any probe. The probe runs on a thread of its own beside the
/// subscribers' --threads.
#[derive(Debug, Parser)]
#[command(name = "mqtt-swarm", version)]
struct SwarmArgs {
    /// Base URL of the node's API; its host must resolve to loopback addresses only.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:14265")]
    url: String,
    /// MQTT clients to connect in total (the node's --mqtt-max-clients must allow them).
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u32).range(0..=100_000))]
    subscribers: u32,
    /// How many of them subscribe to `blocks` (at most --subscribers).
    #[arg(long, value_name = "N", default_value_t = 100)]
    blocks_subscribers: u32,
    /// Seconds of probing (1..=600).
    #[arg(long, value_name = "SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=600))]
    duration: u64,
    /// Probe blocks posted per second, one at a time.
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    probe_rate: u32,
    /// Seconds to keep listening after the last probe, for late deliveries (0..=60).
    #[arg(long, value_name = "SECS", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(0..=60))]
    drain: u64,
    /// MQTT keep-alive in seconds sent in CONNECT; a PINGREQ goes out every half of it.
    #[arg(long, value_name = "SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u16).range(2..))]
    keep_alive: u16,
    #[command(flatten)]
    tool: ToolArgs,
}

fn main() -> ExitCode {
    let args = SwarmArgs::parse();
    if args.blocks_subscribers > args.subscribers {
        eprintln!(
            "mqtt-swarm: --blocks-subscribers {} exceeds --subscribers {}",
            args.blocks_subscribers, args.subscribers
        );
        return ExitCode::from(2);
    }
    let runtime = match args.tool.runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mqtt-swarm: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(args))
}

async fn run(args: SwarmArgs) -> ExitCode {
    let plan = match plan_for(&args.url, args.tool.token).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("mqtt-swarm: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    let duration = Duration::from_secs(args.duration);
    let roles = (0..args.subscribers)
        .map(|i| {
            if i < args.blocks_subscribers {
                Role::Blocks
            } else {
                Role::Address(indexer_address(u64::from(i)))
            }
        })
        .collect();
    let subscribers = match connect_all(&plan, roles, args.keep_alive).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mqtt-swarm: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "mqtt-swarm: {} subscribers connected; probing for {} s",
        subscribers.len(),
        args.duration
    );
    let _ = std::io::stderr().flush();
    let report = measure(
        &plan,
        subscribers,
        args.keep_alive,
        args.probe_rate,
        duration,
        Duration::from_secs(args.drain),
    )
    .await;
    if args.tool.json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("mqtt-swarm: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        println!("{report}");
    }
    ExitCode::SUCCESS
}
