//! Running the workspace's binaries in tests: a finished run's exit code and output, and a
//! loopback port to hand a process.

use std::net::TcpListener;

use serde_json::Value;

/// A finished process: its exit code (none when killed by a signal) and its output as
/// (lossy) UTF-8.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl From<std::process::Output> for Run {
    fn from(out: std::process::Output) -> Self {
        Self {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Run {
    /// Standard output as JSON, after asserting exit code 0 (`what` names the run in a
    /// failure).
    ///
    /// # Panics
    /// When the run failed or its output is not JSON.
    pub fn json(&self, what: &str) -> Value {
        assert_eq!(self.code, Some(0), "{what}: stderr {}", self.stderr);
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{what}: stdout not JSON ({e}): {}", self.stdout))
    }
}

/// A loopback TCP port that was free a moment ago.
///
/// # Panics
/// When no port can be bound.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}
