//! `ledger-node`: the node binary.

#![forbid(unsafe_code)]

use std::process::ExitCode;

/// mimalloc: per-thread free lists suit the many short-lived request allocations (measured in
/// BENCHMARKS.md against the system allocator).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use ledger_api::jwt::JwtAuth;
use ledger_codec::stardust::ProtocolParameters;
use ledger_server::{
    cli::{Cli, CodecArgs, Command, Tool},
    config::NodeConfig,
    run, snapshot_tools,
    tools::{self, ToolError},
};

fn main() -> ExitCode {
    match Cli::parse().into_command() {
        Command::Run(args) => {
            let config = match NodeConfig::resolve(*args) {
                Ok(config) => config,
                Err(e) => {
                    eprintln!("ledger-node: {e}");
                    return ExitCode::from(2);
                }
            };
            run::init_tracing(config.log_format);
            let runtime = match tokio::runtime::Runtime::new() {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("ledger-node: cannot start the runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let result = runtime.block_on(run::run(config));
            // A snapshot still being written on a blocking thread has seen the engine shut
            // down and gives up (its temporary file removed); the exit does not wait longer.
            runtime.shutdown_timeout(run::BLOCKING_TASKS_GRACE);
            match result {
                Ok(()) => ExitCode::SUCCESS,
                // Once on stderr (where the log goes too), not twice.
                Err(e) => {
                    eprintln!("ledger-node: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Tools(Tool::Jwt(args)) => {
            match JwtAuth::load_or_create(&args.data_dir).and_then(|auth| auth.issue()) {
                Ok(token) => {
                    println!("{token}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("ledger-node: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Tools(Tool::Salvage(args)) => match tools::salvage(&args.data_dir, &args.into) {
            Ok(report) => print_out(&report),
            Err(e) => {
                eprintln!("ledger-node: {e}");
                ExitCode::from(e.exit_code())
            }
        },
        Command::Tools(Tool::Decode(args)) => codec_tool(&args, tools::decode),
        Command::Tools(Tool::Encode(args)) => codec_tool(&args, tools::encode),
        Command::Tools(Tool::Id(args)) => codec_tool(&args, tools::id),
        Command::Tools(Tool::SnapshotInfo(args)) => report(snapshot_tools::snapshot_info(
            &args.full,
            args.delta.as_deref(),
            args.json,
        )),
        Command::Tools(Tool::SnapHash(args)) => match (&args.data_dir, &args.full) {
            (Some(dir), _) => report(snapshot_tools::snap_hash_data_dir(
                dir,
                args.genesis.as_deref(),
            )),
            (None, Some(full)) => report(snapshot_tools::snap_hash(full, args.delta.as_deref())),
            (None, None) => report(Err(ToolError::Usage(
                "snap-hash needs FULL_FILE or --data-dir DIR".into(),
            ))),
        },
    }
}

/// Runs a stdin-to-stdout codec tool: 0 and the result on stdout, or the tool's exit code
/// and the reason on stderr.
fn codec_tool(
    args: &CodecArgs,
    tool: fn(&[u8], Option<&ProtocolParameters>) -> Result<String, ToolError>,
) -> ExitCode {
    let result = tools::parameters_from(args.protocol_parameters.as_ref()).and_then(|params| {
        let input = tools::read_input(std::io::stdin().lock())?;
        tool(&input, params.as_ref())
    });
    match result {
        Ok(out) => print_out(&out),
        Err(e) => {
            eprintln!("ledger-node: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Prints a tool's result: 0 and the text on stdout, or its exit code and the reason on
/// stderr.
fn report(result: Result<String, ToolError>) -> ExitCode {
    match result {
        Ok(out) => print_out(&out),
        Err(e) => {
            eprintln!("ledger-node: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Writes `text` and a newline to stdout. A reader that went away (`| head`) ends the
/// output quietly with success; another write error is reported.
fn print_out(text: &str) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ledger-node: cannot write the output: {e}");
            ExitCode::FAILURE
        }
    }
}
