//! The `ledger-node` command line: help, tools, config errors, startup and shutdown.

use crate::common;

use common::{run_cli, TestNode};

const RUN_FLAGS: &[&str] = &[
    "--data-dir",
    "--genesis",
    "--api-bind",
    "--metrics-bind",
    "--no-metrics",
    "--coordinator-interval",
    "--no-coordinator",
    "--coordinator-key",
    "--coordinator-public-keys",
    "--milestone-threshold",
    "--pow-workers",
    "--no-pow",
    "--v3-protocol-parameters",
    "--config",
    "--api-body-limit",
    "--public-routes",
    "--protected-routes",
    "--p2p-bind",
    "--peer",
    "--peer-alias",
    "--p2p-unknown-peers-limit",
    "--p2p-reconnect-interval",
    "--p2p-read-timeout",
    "--p2p-heartbeat-max-age",
    "--no-p2p",
];

#[test]
fn help_explains_every_run_flag_and_its_env_var() {
    for args in [&["run", "--help"][..], &["--help"][..]] {
        let (status, out, err) = run_cli(args);
        assert!(status.success(), "{args:?}: {err}");
        for flag in RUN_FLAGS {
            let line = out
                .lines()
                .position(|l| l.trim_start().starts_with(flag))
                .unwrap_or_else(|| panic!("{args:?}: {flag} missing in\n{out}"));
            // The explanation follows on the same or the next lines (clap's long help).
            let text: String = out.lines().skip(line).take(4).collect::<Vec<_>>().join(" ");
            assert!(
                text.split_whitespace().count() > 6,
                "{flag} is not explained: {text}"
            );
            let var = format!(
                "LEDGER_NODE_{}",
                flag.trim_start_matches("--")
                    .replace('-', "_")
                    .to_uppercase()
            );
            assert!(out.contains(&var), "{args:?}: {var} missing in\n{out}");
        }
    }
}

#[test]
fn top_level_help_lists_subcommands() {
    let (status, out, _) = run_cli(&["--help"]);
    assert!(status.success());
    for word in ["run", "tools"] {
        assert!(out.contains(word), "{word} missing in\n{out}");
    }
    let (status, out, _) = run_cli(&["tools", "--help"]);
    assert!(status.success());
    for word in [
        "jwt",
        "decode",
        "encode",
        "id",
        "snapshot-info",
        "snap-hash",
    ] {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(word)),
            "{word} missing in\n{out}"
        );
    }
}

#[test]
fn tools_refuse_unknown_flags_with_exit_code_2() {
    for tool in [
        "decode",
        "encode",
        "id",
        "salvage",
        "snapshot-info",
        "snap-hash",
    ] {
        let (status, _, err) = run_cli(&["tools", tool, "--anything", "0x00"]);
        assert_eq!(status.code(), Some(2), "tools {tool}");
        assert!(err.contains("--anything"), "tools {tool}: {err}");
    }
}

#[test]
fn unknown_flag_and_bad_values_are_usage_errors() {
    for args in [
        &["run", "--no-such-flag"][..],
        &["run", "--api-bind", "localhost"][..],
        &["run", "--pow-workers", "many"][..],
        &["run", "--coordinator-interval", "-1"][..],
    ] {
        let (status, _, err) = run_cli(args);
        assert_eq!(status.code(), Some(2), "{args:?}: {err}");
    }
}

#[test]
fn bad_config_file_stops_with_a_message() {
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("bad.toml");
    std::fs::write(&config, "api-bind = 14265\n").expect("write");
    let config = config.to_str().expect("utf-8 path");
    let (status, _, err) = run_cli(&["run", "--config", config]);
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("bad.toml"), "{err}");

    let (status, _, err) = run_cli(&["run", "--pow-workers", "0", "--api-bind", "127.0.0.1:0"]);
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("pow-workers"), "{err}");
}

#[test]
fn busy_port_is_reported() {
    let node = TestNode::start();
    let dir = tempfile::tempdir().expect("dir");
    let addr = node.addr.to_string();
    let data_dir = dir.path().join("data");
    let data = data_dir.to_str().expect("utf-8 path");
    let (status, _, err) = run_cli(&["run", "--data-dir", data, "--api-bind", &addr]);
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("cannot listen on"), "{err}");
    assert!(
        !data_dir.exists(),
        "a refused start created {}",
        data_dir.display()
    );
}

#[test]
fn boolean_env_vars_take_the_usual_spellings() {
    let node = TestNode::start_with(&[], &[("LEDGER_NODE_NO_COORDINATOR", "1")]);
    let log = node.log();
    assert!(log.contains("no coordinator"), "{log}");
    assert!(!log.contains("built-in coordinator"), "{log}");
}

#[test]
fn sigterm_stops_the_node_with_exit_code_0() {
    let mut node = TestNode::start();
    assert_eq!(node.get("/health").status, 200);
    let status = node.terminate();
    let log = node.log();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("SIGTERM"), "{log}");
}

#[test]
fn sigint_stops_the_node_with_exit_code_0() {
    let mut node = TestNode::start();
    assert_eq!(node.get("/health").status, 200);
    assert_eq!(node.interrupt().code(), Some(0), "{}", node.log());
}

#[test]
fn secret_is_created_in_the_data_dir_on_first_start() {
    let node = TestNode::start();
    let secret = std::fs::read_to_string(node.data_dir().join("jwt-secret")).expect("secret");
    assert_eq!(secret.trim().len(), 64);
    // `tools jwt` on that data dir keeps the same secret.
    let _token = node.jwt();
    let again = std::fs::read_to_string(node.data_dir().join("jwt-secret")).expect("secret");
    assert_eq!(secret, again);
}

#[test]
fn a_second_node_on_the_same_data_dir_is_refused() {
    let node = TestNode::start();
    let err = common::run_fails(&node.data_dir(), &[]);
    assert!(err.contains("in use by another process"), "{err}");
    // The first node is unharmed.
    assert_eq!(node.get("/health").status, 200);
}

/// Long flags of `run --help`, in order.
fn help_flags() -> Vec<String> {
    let (status, out, err) = run_cli(&["run", "--help"]);
    assert_eq!(status.code(), Some(0), "{err}");
    out.lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .filter_map(|l| {
            l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .next()
        })
        .filter(|f| *f != "help")
        .map(|f| format!("--{f}"))
        .collect()
}

#[test]
fn the_readme_flag_table_lists_exactly_the_run_flags() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let table: Vec<String> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("| `--"))
        .filter_map(|l| {
            l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .next()
        })
        .map(|f| format!("--{f}"))
        .collect();
    let help = help_flags();
    assert!(help.len() > 10, "{help:?}");
    for flag in &help {
        assert!(
            table.contains(flag),
            "{flag} is in --help but not in README's table"
        );
    }
    for flag in &table {
        assert!(
            help.contains(flag),
            "{flag} is in README's table but not in --help"
        );
    }
}
