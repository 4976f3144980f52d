//! `ledger-node`: the node binary.

use std::process::ExitCode;

use clap::Parser;
use ledger_server::{
    cli::{Cli, Command, Tool},
    config::NodeConfig,
    jwt::JwtAuth,
    run,
};

fn main() -> ExitCode {
    match Cli::parse().into_command() {
        Command::Run(args) => {
            run::init_tracing();
            let config = match NodeConfig::resolve(args) {
                Ok(config) => config,
                Err(e) => {
                    eprintln!("ledger-node: {e}");
                    return ExitCode::from(2);
                }
            };
            let runtime = match tokio::runtime::Runtime::new() {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("ledger-node: cannot start the runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match runtime.block_on(run::run(config)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("{e}");
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
        Command::Tools(Tool::Decode(_) | Tool::Encode(_) | Tool::Id(_)) => {
            eprintln!("ledger-node: not implemented");
            ExitCode::from(2)
        }
    }
}
