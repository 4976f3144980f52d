//! The integration tests of ledger-load, in one test binary (one link instead of one per file):
//! each former `tests/<name>.rs` is the module `<name>` here, so a test's full name is
//! `<name>::<test>` (e.g. `cargo test -p ledger-load --test it cli::`).

#![forbid(unsafe_code)]

mod cli;
mod swarm_cli;
