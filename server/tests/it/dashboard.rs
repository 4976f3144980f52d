//! The dashboard (issue 27) on the real binary: the page and its files with their content
//! types and Content-Security-Policy, the stats it polls following the node, `--no-dashboard`
//! (flag and environment) and the access-control route lists. The page itself is driven in a
//! real browser by `server/tests/python/test_dashboard.py`.

use crate::common;

use common::{Reply, TestNode};
use serde_json::{json, Value};

const STATS: &str = "/api/dashboard/v1/stats";

/// Every dashboard route, one per kind: the page (twice), a file and the stats.
const ROUTES: &[&str] = &["/", "/dashboard", "/dashboard/app.js", STATS];

/// Asserts the headers every dashboard file carries.
fn assert_locked_down(path: &str, reply: &Reply) {
    let csp = reply
        .header("content-security-policy")
        .unwrap_or_else(|| panic!("{path}: no Content-Security-Policy"));
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{path}: {directive} not in {csp}");
    }
    assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
    assert_eq!(
        reply.header("x-content-type-options"),
        Some("nosniff"),
        "{path}"
    );
    assert_eq!(
        reply.header("referrer-policy"),
        Some("no-referrer"),
        "{path}"
    );
}

/// The local files the page names in `src="…"` and `href="…"` (links within the page and to
/// the stats excepted).
fn referenced_files(page: &str) -> Vec<String> {
    let mut files = Vec::new();
    for attr in ["src=\"", "href=\""] {
        for (at, _) in page.match_indices(attr) {
            let rest = &page[at + attr.len()..];
            let value = &rest[..rest.find('"').unwrap()];
            if value.starts_with("/dashboard/") {
                files.push(value.to_owned());
            }
        }
    }
    files
}

#[test]
fn the_page_and_its_files_are_served_with_their_types_and_a_strict_policy() {
    let node = TestNode::start_with(&["--coordinator-interval", "0"], &[]);
    for path in ["/", "/dashboard"] {
        let reply = node.get(path);
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(
            reply.content_type.as_deref(),
            Some("text/html; charset=utf-8"),
            "{path}"
        );
        assert_locked_down(path, &reply);
        let page = String::from_utf8(reply.body).expect("UTF-8 page");
        assert!(
            page.contains("<title>ledger-node dashboard</title>"),
            "{page}"
        );
    }
    let page = String::from_utf8(node.get("/").body).expect("UTF-8 page");
    let files = referenced_files(&page);
    for expected in [
        "/dashboard/app.js",
        "/dashboard/uPlot.iife.min.js",
        "/dashboard/style.css",
        "/dashboard/uPlot.min.css",
        "/dashboard/favicon.svg",
        "/dashboard/uPlot.LICENSE",
    ] {
        assert!(
            files.iter().any(|f| f == expected),
            "{expected} not in {files:?}"
        );
    }
    // The script modules the entry module imports, and theirs.
    let mut files = files;
    let mut i = 0;
    while i < files.len() {
        if files[i].ends_with(".js") && !files[i].contains("uPlot") {
            let text = String::from_utf8(node.get(&files[i]).body).expect("UTF-8 script");
            for (at, _) in text.match_indices("from \"./") {
                let rest = &text[at + "from \"./".len()..];
                let module = format!("/dashboard/{}", &rest[..rest.find('"').unwrap()]);
                if !files.contains(&module) {
                    files.push(module);
                }
            }
        }
        i += 1;
    }
    assert!(files.len() >= 12, "{files:?}");
    for file in &files {
        let reply = node.get(file);
        assert_eq!(reply.status, 200, "{file}");
        assert!(!reply.body.is_empty(), "{file}");
        let expected = match file.rsplit('.').next() {
            Some("js") => "text/javascript; charset=utf-8",
            Some("css") => "text/css; charset=utf-8",
            Some("svg") => "image/svg+xml",
            _ => "text/plain; charset=utf-8",
        };
        assert_eq!(reply.content_type.as_deref(), Some(expected), "{file}");
        assert_locked_down(file, &reply);
    }
    let license = String::from_utf8(node.get("/dashboard/uPlot.LICENSE").body).expect("UTF-8");
    assert!(license.contains("MIT License"), "{license}");
    // Unknown names and paths that try to leave the folder are 404s in the JSON envelope.
    for path in [
        "/dashboard/nope.js",
        "/dashboard/..%2FCargo.toml",
        "/dashboard/app.js/x",
    ] {
        let message = node.get(path).assert_error(404);
        assert!(!message.is_empty(), "{path}");
    }
}

/// Posts a tagged-data block without parents or nonce (the node fills them in).
fn post_block(node: &TestNode, tag: &str) -> String {
    node.post_json(
        "/api/core/v2/blocks",
        &json!({"protocolVersion": 2, "payload": {"type": 5, "tag": tag, "data": "0x01"}}),
    )
    .created_id()
}

fn stats(node: &TestNode) -> Value {
    let reply = node.get(STATS);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    reply.assert_json(200)
}

#[test]
fn the_stats_follow_the_node() {
    let node = TestNode::start_with(&["--coordinator-interval", "0"], &[]);
    let before = stats(&node);
    assert_eq!(before["milestones"]["recent"], json!([]), "{before}");
    assert_eq!(before["refusals"], json!([]), "{before}");

    let posted: Vec<String> = (0..3)
        .map(|i| post_block(&node, &format!("0x0{i}")))
        .collect();
    let first = node.issue_milestone();
    post_block(&node, "0x10");
    let second = node.issue_milestone();
    // Two refusals of one reason, one of another.
    let bad_version = json!({"protocolVersion": 1, "parents": [format!("0x{}", "00".repeat(32))],
        "payload": {"type": 5, "tag": "0x", "data": "0x"}});
    for _ in 0..2 {
        node.post_json("/api/core/v2/blocks", &bad_version)
            .assert_error(400);
    }
    node.post_json(
        "/api/core/v2/blocks",
        &json!({"protocolVersion": 2, "nonce": "7", "payload": {"type": 5, "tag": "0x", "data": "0x"}}),
    )
    .assert_error(400);

    let now = stats(&node);
    let info = node.get("/api/core/v2/info").assert_json(200);
    let confirmed = &info["status"]["confirmedMilestone"]["index"];
    assert_eq!(&now["milestones"]["confirmed"], confirmed, "{now}");
    assert_eq!(&now["milestones"]["latest"], confirmed, "{now}");
    assert_eq!(&now["milestones"]["confirmed"], &second["index"], "{now}");

    let recent = now["milestones"]["recent"].as_array().expect("recent");
    let indexes: Vec<&Value> = recent.iter().map(|c| &c["index"]).collect();
    assert_eq!(indexes, vec![&first["index"], &second["index"]], "{now}");
    // The first milestone referenced the three blocks posted before it; the second the block
    // after it and the first milestone's block. Every block but the last milestone's own is
    // referenced, and the counter agrees with the confirmations.
    assert_eq!(recent[0]["referenced"], json!(posted.len()), "{now}");
    assert_eq!(recent[1]["referenced"], json!(2), "{now}");
    for c in recent {
        assert!(c["confirmationUs"].as_u64().is_some(), "{c}");
        assert!(c["timestamp"].as_u64() > Some(0), "{c}");
    }
    assert_eq!(now["blocks"]["received"], json!(6), "{now}");
    assert_eq!(now["blocks"]["referenced"], json!(5), "{now}");
    for key in ["perSecond", "referencedPerSecond"] {
        assert!(
            now["blocks"][key].as_f64().is_some_and(|v| v >= 0.0),
            "{now}"
        );
    }
    for key in ["healthy", "semiLazy", "lazy"] {
        assert!(now["tips"][key].as_u64().is_some(), "{now}");
    }
    // Memory as /proc says, disk as the data directory takes: both plausible, not speed.
    let rss = now["resources"]["residentMemoryBytes"]
        .as_u64()
        .expect("rss");
    let kib = node.rss_kib();
    assert!(
        rss > 1 << 20 && rss / 1024 < kib * 4 && kib < rss / 1024 * 4,
        "{rss} vs {kib} KiB"
    );
    let data = now["resources"]["dataDirBytes"].as_u64().expect("data dir");
    assert!(data > 0, "{now}");

    let refusals = now["refusals"].as_array().expect("refusals");
    assert_eq!(refusals.len(), 2, "{now}");
    assert!(
        refusals
            .iter()
            .all(|r| r["status"] == 400 && r["reason"].as_str().is_some_and(|s| !s.is_empty())),
        "{now}"
    );
    let mut counts: Vec<u64> = refusals
        .iter()
        .filter_map(|r| r["count"].as_u64())
        .collect();
    counts.sort_unstable();
    assert_eq!(counts, vec![1, 2], "{now}");
}

#[test]
fn no_dashboard_by_flag_or_environment_leaves_every_route_out() {
    let by_flag = TestNode::start_with(&["--coordinator-interval", "0", "--no-dashboard"], &[]);
    let by_env = TestNode::start_with(
        &["--coordinator-interval", "0"],
        &[("LEDGER_NODE_NO_DASHBOARD", "true")],
    );
    for node in [&by_flag, &by_env] {
        for path in ROUTES {
            let message = node.get(path).assert_error(404);
            assert!(
                message.contains(path.trim_end_matches('/')),
                "{path}: {message}"
            );
        }
        node.get("/api/core/v2/info").assert_json(200);
        let routes = node.get("/api/routes").assert_json(200);
        assert!(
            !routes["routes"]
                .as_array()
                .expect("routes")
                .contains(&serde_json::json!("dashboard/v1")),
            "{routes}"
        );
    }
    // And `false` keeps it on.
    let on = TestNode::start_with(
        &["--coordinator-interval", "0"],
        &[("LEDGER_NODE_NO_DASHBOARD", "false")],
    );
    assert_eq!(on.get("/").status, 200);
    let routes = on.get("/api/routes").assert_json(200);
    assert!(
        routes["routes"]
            .as_array()
            .expect("routes")
            .contains(&serde_json::json!("dashboard/v1")),
        "{routes}"
    );
}

#[test]
fn the_route_lists_apply_to_the_dashboard() {
    // Off the public list and on the protected one: a token is needed.
    let node = TestNode::start_with(
        &[
            "--coordinator-interval",
            "0",
            "--public-routes",
            "/api/core/v2/info",
            "--protected-routes",
            "/,/dashboard*,/api/*",
        ],
        &[],
    );
    let auth = format!("Bearer {}", node.jwt());
    for path in ROUTES {
        node.get(path).assert_error(403);
        let reply = node.get_with(path, &[("authorization", &auth)]);
        assert_eq!(reply.status, 200, "{path}");
    }
    // On neither list: 403 even with a token.
    let closed = TestNode::start_with(
        &[
            "--coordinator-interval",
            "0",
            "--public-routes",
            "/api/core/v2/info",
        ],
        &[],
    );
    let auth = format!("Bearer {}", closed.jwt());
    closed.get("/").assert_error(403);
    closed
        .get_with("/", &[("authorization", &auth)])
        .assert_error(403);
    // Protected by default only under /api/*: the stats then need a token, the page not.
    let stats_closed = TestNode::start_with(
        &[
            "--coordinator-interval",
            "0",
            "--public-routes",
            "/,/dashboard,/dashboard/*",
        ],
        &[],
    );
    assert_eq!(stats_closed.get("/").status, 200);
    stats_closed.get(STATS).assert_error(403);
    let auth = format!("Bearer {}", stats_closed.jwt());
    assert_eq!(
        stats_closed
            .get_with(STATS, &[("authorization", &auth)])
            .status,
        200
    );
}
