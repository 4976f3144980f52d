//! Shared helpers for tests that run the real `ledger-node` binary.
//!
//! `TestNode::start()` spawns `ledger-node run` on `127.0.0.1:0` (the API and the metrics
//! endpoint) with a fresh temp data dir, waits for the `listening on http://ADDR` line (after
//! `metrics on http://ADDR/metrics`, unless metrics are off) and kills the process on drop. Requests go
//! through [`TestNode::get`] / [`TestNode::post`] etc., which never turn an HTTP error status
//! into a Rust error, so tests can assert on any status.

use std::{
    fs,
    io::{BufRead, BufReader, Read},
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    sync::mpsc,
    time::Duration,
};

/// Path of the binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_ledger-node");

/// How long to wait for the node to print its address; generous for a loaded machine (this
/// bounds a hang, it asserts nothing about speed).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// A running `ledger-node` process with its own data dir.
pub struct TestNode {
    child: Child,
    /// The bound API address.
    pub addr: SocketAddr,
    /// The bound metrics address (`None` with `--no-metrics`).
    pub metrics_addr: Option<SocketAddr>,
    /// Temp dir holding the data dir and the log; removed on drop.
    pub dir: tempfile::TempDir,
    agent: ureq::Agent,
}

/// An HTTP answer: status, headers we look at, body.
#[derive(Debug)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// `Content-Type`, if any.
    pub content_type: Option<String>,
    /// All headers, lower-case names.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as JSON (panics with the body text if it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): status {} {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// Asserts 201 and returns the `blockId` of the body.
    pub fn created_id(&self) -> String {
        assert_eq!(self.status, 201, "{}", String::from_utf8_lossy(&self.body));
        self.json()["blockId"].as_str().expect("blockId").to_owned()
    }

    /// The value of header `name` (lower case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Asserts this status with a JSON body and returns the body.
    pub fn assert_json(&self, status: u16) -> serde_json::Value {
        assert_eq!(
            self.status,
            status,
            "body: {}",
            String::from_utf8_lossy(&self.body)
        );
        assert!(
            self.content_type
                .as_deref()
                .is_some_and(|c| c.starts_with("application/json")),
            "Content-Type {:?}",
            self.content_type
        );
        self.json()
    }

    /// Asserts the JSON error envelope `{"error":{"code":status,"message":...}}` with this
    /// status and returns the message.
    pub fn assert_error(&self, status: u16) -> String {
        let json = self.assert_json(status);
        assert_eq!(json["error"]["code"], serde_json::json!(status), "{json}");
        let message = json["error"]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("no message in {json}"));
        assert!(!message.is_empty(), "{json}");
        assert_eq!(json.as_object().map(|o| o.len()), Some(1), "{json}");
        message.to_owned()
    }
}

/// Runs `ledger-node` with `args` to completion; returns status, stdout, stderr.
pub fn run_cli(args: &[&str]) -> (ExitStatus, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("run ledger-node");
    (
        out.status,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `ledger-node run` on a loopback ephemeral port in `data_dir` with `args`, asserts
/// that it refuses to start, and returns its stderr.
pub fn run_fails(data_dir: &Path, args: &[&str]) -> String {
    let mut all = vec![
        "run",
        "--api-bind=127.0.0.1:0",
        "--data-dir",
        data_dir.to_str().expect("utf-8"),
    ];
    if !sets_metrics_bind(args) {
        all.push("--metrics-bind=127.0.0.1:0");
    }
    if !sets_p2p(args) {
        all.push("--p2p-bind=/ip4/127.0.0.1/tcp/0");
    }
    all.extend_from_slice(args);
    let (status, _out, err) = run_cli(&all);
    assert!(!status.success(), "started with {args:?}: {err}");
    err
}

/// Whether `args` choose the metrics address themselves (a flag may be given once only).
fn sets_p2p(args: &[&str]) -> bool {
    args.iter()
        .any(|a| a.starts_with("--p2p-bind") || a.starts_with("--no-p2p"))
}

fn sets_metrics_bind(args: &[&str]) -> bool {
    args.iter().any(|a| a.starts_with("--metrics-bind"))
}

/// Prints a token with `ledger-node tools jwt --data-dir DIR`.
pub fn jwt_for(data_dir: &Path) -> String {
    let dir = data_dir.to_str().expect("utf-8 path");
    let (status, out, err) = run_cli(&["tools", "jwt", "--data-dir", dir]);
    assert!(status.success(), "tools jwt failed: {err}");
    let token = out.trim().to_owned();
    assert_eq!(token.split('.').count(), 3, "not a JWT: {out:?}");
    token
}

impl TestNode {
    /// Starts a node with default settings (plus `--data-dir` and `--api-bind 127.0.0.1:0`).
    pub fn start() -> Self {
        Self::start_with(&[], &[])
    }

    /// Starts a node with extra `run` flags and environment variables.
    pub fn start_with(args: &[&str], env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        Self::start_in(dir, args, env)
    }

    /// Starts a node whose data dir is `dir/data`, with extra flags and environment.
    pub fn start_in(dir: tempfile::TempDir, args: &[&str], env: &[(&str, &str)]) -> Self {
        let log = fs::File::create(dir.path().join("node.log")).expect("log file");
        Self::start_logging_to(dir, args, env, log)
    }

    /// Starts a node with extra flags whose stderr (its log) is `stderr` instead of
    /// `node.log` ([`TestNode::log`] is then empty).
    pub fn start_with_stderr(args: &[&str], stderr: fs::File) -> Self {
        Self::start_logging_to(tempfile::tempdir().expect("temp dir"), args, &[], stderr)
    }

    /// Whether the node's process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn start_logging_to(
        dir: tempfile::TempDir,
        args: &[&str],
        env: &[(&str, &str)],
        log: fs::File,
    ) -> Self {
        let data_dir = dir.path().join("data");
        let mut command = Command::new(BIN);
        command
            .arg("run")
            .arg("--data-dir")
            .arg(&data_dir)
            .args(["--api-bind", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        // A free port for metrics, unless the test picks one (the default 9311 would clash
        // between nodes running at once).
        if !sets_metrics_bind(args) {
            command.args(["--metrics-bind", "127.0.0.1:0"]);
        }
        // Likewise a free loopback port for peering (the default 15600 on every interface
        // would clash), unless the test sets its own or turns peering off.
        if !sets_p2p(args) {
            command.args(["--p2p-bind", "/ip4/127.0.0.1/tcp/0"]);
        }
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn ledger-node");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        // Read stdout until the API address line (the metrics line comes before it), then
        // keep draining so the pipe never blocks.
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let mut metrics = None;
            for line in lines.by_ref() {
                let Ok(line) = line else { break };
                let line = line.trim();
                if let Some(addr) = line
                    .strip_prefix("metrics on http://")
                    .and_then(|a| a.strip_suffix("/metrics"))
                {
                    metrics = Some(addr.to_owned());
                }
                if let Some(addr) = line.strip_prefix("listening on http://") {
                    let _ = tx.send((addr.to_owned(), metrics));
                    break;
                }
            }
            for _ in lines {}
        });
        let (addr, metrics_addr) = match rx.recv_timeout(STARTUP_TIMEOUT) {
            Ok((addr, metrics)) => (
                addr.parse().expect("printed address parses"),
                metrics.map(|m| m.parse().expect("printed metrics address parses")),
            ),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                let log = fs::read_to_string(dir.path().join("node.log")).unwrap_or_default();
                panic!("ledger-node did not print its address; log:\n{log}");
            }
        };
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        Self {
            child,
            addr,
            metrics_addr,
            dir,
            agent,
        }
    }

    /// `POST /api/core/v2/control/milestone` with the node's own token; asserts 200 and
    /// returns `{"index","milestoneId","blockId"}`.
    pub fn issue_milestone(&self) -> serde_json::Value {
        self.issue_milestone_with(&self.jwt())
    }

    /// [`TestNode::issue_milestone`] with a token made before (by [`TestNode::jwt`]), for
    /// tests that issue many milestones.
    pub fn issue_milestone_with(&self, token: &str) -> serde_json::Value {
        let token = format!("Bearer {token}");
        let reply = self.post(
            "/api/core/v2/control/milestone",
            &[("authorization", &token)],
            b"",
        );
        assert_eq!(
            reply.status,
            200,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        reply.json()
    }

    /// Issues milestones (with one token) until one with index `index` or above is issued.
    pub fn issue_until(&self, index: u64) {
        let token = self.jwt();
        while self.issue_milestone_with(&token)["index"]
            .as_u64()
            .expect("index")
            < index
        {}
    }

    /// The node's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The node's resident memory in KiB (`VmRSS`).
    pub fn rss_kib(&self) -> u64 {
        let status = fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// The node's data dir.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The node's log (stderr) so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("node.log")).unwrap_or_default()
    }

    /// The answer, or a panic naming the transport error with the end of the node's log
    /// (whether the node or the connection went).
    fn reply(&self, result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Reply {
        try_reply(result).unwrap_or_else(|e| {
            let log = self.log();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            panic!(
                "HTTP request: {e}\nthe node's log, last lines:\n{}",
                tail.join("\n")
            )
        })
    }

    /// `http://ADDR` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A token for this node's protected routes, made by `tools jwt`.
    pub fn jwt(&self) -> String {
        jwt_for(&self.data_dir())
    }

    /// `GET path` with extra headers.
    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut request = self.agent.get(&self.url(path));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        self.reply(request.call())
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Reply {
        self.get_with(path, &[])
    }

    /// `GET path` like [`TestNode::get`], `None` when the connection fails (a node being
    /// killed).
    pub fn try_get(&self, path: &str) -> Option<Reply> {
        self.try_get_with(path, &[])
    }

    /// [`TestNode::try_get`] with extra headers.
    pub fn try_get_with(&self, path: &str, headers: &[(&str, &str)]) -> Option<Reply> {
        let mut request = self.agent.get(&self.url(path));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        try_reply(request.call()).ok()
    }

    /// A `POST path` request with extra headers.
    fn post_request(
        &self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
        let mut request = self.agent.post(&self.url(path));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request
    }

    /// `POST path` with a body and extra headers (set `content-type` there).
    pub fn post(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        self.reply(self.post_request(path, headers).send(body))
    }

    /// `POST path` with `value` as its JSON body.
    pub fn post_json(&self, path: &str, value: &serde_json::Value) -> Reply {
        self.post(
            path,
            &[("content-type", "application/json")],
            value.to_string().as_bytes(),
        )
    }

    /// `POST path` like [`TestNode::post`], `None` when the connection fails (a node being
    /// killed).
    pub fn try_post(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Option<Reply> {
        try_reply(self.post_request(path, headers).send(body)).ok()
    }

    /// `POST path` with a body sent chunked (no `Content-Length`) and extra headers.
    pub fn post_chunked(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        let mut reader = body;
        self.reply(
            self.post_request(path, headers)
                .send(ureq::SendBody::from_reader(&mut reader)),
        )
    }

    /// A request with any method and no body.
    pub fn request(&self, method: &str, path: &str) -> Reply {
        let request = ureq::http::Request::builder()
            .method(method)
            .uri(self.url(path))
            .body(())
            .expect("request");
        self.reply(self.agent.run(request))
    }

    /// A request with any method, extra headers and no body.
    pub fn request_with(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut builder = ureq::http::Request::builder()
            .method(method)
            .uri(self.url(path));
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        self.reply(self.agent.run(builder.body(()).expect("request")))
    }

    /// Kills the process if it still runs (a no-op after [`TestNode::terminate`]) and returns
    /// its directory for a restart with [`TestNode::start_in`].
    pub fn into_dir(mut self) -> tempfile::TempDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::replace(&mut self.dir, tempfile::tempdir().expect("temp dir"))
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        self.signal("TERM");
        self.child.wait().expect("wait for ledger-node")
    }

    /// Kills the process with SIGKILL (no flush, no shutdown) and returns its directory for a
    /// restart with [`TestNode::start_in`].
    pub fn kill_9(mut self) -> tempfile::TempDir {
        self.send_kill_9();
        self.child.wait().expect("wait for ledger-node");
        std::mem::replace(&mut self.dir, tempfile::tempdir().expect("temp dir"))
    }

    /// Sends SIGKILL without waiting (other threads may still be talking to the node).
    pub fn send_kill_9(&self) {
        self.signal("KILL");
    }

    /// Sends SIGINT and waits for the exit status.
    pub fn interrupt(&mut self) -> ExitStatus {
        self.signal("INT");
        self.child.wait().expect("wait for ledger-node")
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} failed");
    }
}

impl Drop for TestNode {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn try_reply(
    result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> Result<Reply, String> {
    let mut response = result.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let content_type = headers
        .iter()
        .find(|(n, _)| n == "content-type")
        .map(|(_, v)| v.clone());
    let mut body = Vec::new();
    response
        .body_mut()
        .as_reader()
        .read_to_end(&mut body)
        .map_err(|e| e.to_string())?;
    Ok(Reply {
        status,
        content_type,
        headers,
        body,
    })
}
