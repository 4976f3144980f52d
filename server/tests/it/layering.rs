//! The layers of the node, checked from its sources and manifests (a failure names the file
//! and the rule it breaks):
//!
//! - crates depend one way: `codec ← engine ← p2p ← api ← server`, and `events ← api` (the
//!   MQTT broker, which knows neither the engine nor HTTP: the API feeds it); peering knows
//!   nothing of HTTP (no axum, tower or hyper anywhere below it, as `cargo tree` resolves it),
//!   the API never names the binary's crate;
//! - no import cycle between the modules of `server`, `server/api`, `server/p2p` or
//!   `server/events`: a module
//!   that names another (`crate::a::b`, `super::b`, a `use crate::{…}` tree) depends on it,
//!   and the graph of those dependencies has no cycle (test modules and the crate root, which
//!   only declares and re-exports, are left out);
//! - the node's crates see the engine only through its facade: its component modules are
//!   private, reachable only under `ledger_engine::internals` (and the log through
//!   `Engine::internal_log`) for the engine's own tests, benches and fuzz targets.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The node's crates above the engine, by folder.
const NODE_CRATES: [&str; 4] = ["server", "server/api", "server/p2p", "server/events"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

// --- crate arrows -----------------------------------------------------------------------------

/// The `[dependencies]` (not dev) of the crate in `folder`.
fn dependencies(folder: &str) -> BTreeSet<String> {
    let path = root().join(folder).join("Cargo.toml");
    let text = fs::read_to_string(&path).expect("manifest");
    let manifest: toml::Table = toml::from_str(&text).expect("TOML");
    manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|deps| deps.keys().cloned().collect())
        .unwrap_or_default()
}

/// Every package the crate `package` depends on through normal dependencies, as
/// `cargo tree` resolves them for it (features as it alone enables them).
fn resolved(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = std::process::Command::new(cargo)
        .current_dir(root())
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}", "-p", package])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(' ').next())
        .map(str::to_owned)
        .collect()
}

/// What each crate may not depend on, and why.
fn forbidden(folder: &str) -> Vec<(&'static str, &'static str)> {
    const HTTP: [&str; 5] = ["axum", "tower", "tower-http", "hyper", "hyper-util"];
    let no_http = HTTP.map(|c| (c, "peering and below know nothing of HTTP"));
    match folder {
        "codec" => vec![
            ("ledger-engine", "the codec is the bottom layer"),
            ("ledger-p2p", "the codec is the bottom layer"),
            ("ledger-api", "the codec is the bottom layer"),
            ("ledger-server", "the codec is the bottom layer"),
        ]
        .into_iter()
        .chain(no_http)
        .collect(),
        "engine" => vec![
            ("ledger-p2p", "the engine never names its users"),
            ("ledger-api", "the engine never names its users"),
            ("ledger-server", "the engine never names its users"),
        ]
        .into_iter()
        .chain(no_http)
        .collect(),
        "server/p2p" => vec![
            (
                "ledger-api",
                "peering hands plain values to the API, never the reverse",
            ),
            ("ledger-server", "peering does not know the binary"),
        ]
        .into_iter()
        .chain(no_http)
        .collect(),
        "server/api" => vec![("ledger-server", "the API does not know the binary")],
        "server/events" => ["ledger-engine", "ledger-p2p", "ledger-api", "ledger-server"]
            .map(|c| {
                (
                    c,
                    "the broker knows no engine, peering, API or binary: the API feeds it",
                )
            })
            .into_iter()
            .chain(HTTP.map(|c| (c, "the broker knows nothing of HTTP: the API carries it")))
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn crates_depend_one_way_and_peering_knows_no_http() {
    let mut broken = Vec::new();
    for (folder, package) in [
        ("codec", "ledger-codec"),
        ("engine", "ledger-engine"),
        ("server/p2p", "ledger-p2p"),
        ("server/api", "ledger-api"),
        ("server/events", "ledger-events"),
    ] {
        let direct = dependencies(folder);
        assert!(
            !direct.is_empty(),
            "{folder}/Cargo.toml lists no dependencies"
        );
        let all = resolved(package);
        assert!(
            all.contains(package),
            "cargo tree -p {package} lists: {all:?}"
        );
        for (crate_name, why) in forbidden(folder) {
            if direct.contains(crate_name) {
                broken.push(format!(
                    "{folder}/Cargo.toml depends on {crate_name}: {why}"
                ));
            } else if all.contains(crate_name) {
                broken.push(format!(
                    "{folder} depends on {crate_name} through its dependencies (cargo tree): {why}"
                ));
            }
        }
    }
    // The arrows that must exist, so the check above cannot pass on a misread manifest.
    for (folder, needs) in [
        ("engine", "ledger-codec"),
        ("server/p2p", "ledger-engine"),
        ("server/api", "ledger-p2p"),
        ("server/api", "ledger-events"),
        ("server", "ledger-api"),
    ] {
        assert!(
            dependencies(folder).contains(needs),
            "{folder}/Cargo.toml does not depend on {needs}"
        );
    }
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
}

// --- module cycles ----------------------------------------------------------------------------

/// `text` without comments, string and char literals' contents, and `#[cfg(test)]` items.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if rest.starts_with('"') {
            // Skip to the closing quote, past escapes.
            let mut j = 1;
            while j < rest.len() {
                match rest.as_bytes()[j] {
                    b'\\' => j += 2,
                    b'"' => break,
                    _ => j += 1,
                }
            }
            out.push_str("\"\"");
            i += (j + 1).min(rest.len());
        } else if rest.starts_with("#[cfg(test)]") {
            // The test item: up to the end of its braced body, or its `;`.
            let open = rest.find('{');
            let semi = rest.find(';');
            match (open, semi) {
                (Some(o), Some(s)) if s < o => i += s + 1,
                (Some(o), _) => {
                    let mut depth = 0usize;
                    let mut j = o;
                    for (k, c) in rest[o..].char_indices() {
                        match c {
                            '{' => depth += 1,
                            '}' => {
                                depth -= 1;
                                if depth == 0 {
                                    j = o + k + 1;
                                    break;
                                }
                            }
                            _ => {}
                        }
                    }
                    i += j;
                }
                _ => i = bytes.len(),
            }
        } else {
            let c = rest.chars().next().expect("char");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The paths of a use tree or path starting at `text` (after `crate::` or `super::`):
/// `a::b`, `a::{b, c::d}` → `a::b`, `a::c::d`.
fn expand(text: &str) -> Vec<String> {
    let text = text.trim_start();
    let ident_end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    if text.starts_with('{') {
        let mut depth = 0usize;
        let mut start = 1;
        let mut out = Vec::new();
        for (k, c) in text.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        out.extend(expand(&text[start..k]));
                        return out;
                    }
                }
                ',' if depth == 1 => {
                    out.extend(expand(&text[start..k]));
                    start = k + 1;
                }
                _ => {}
            }
        }
        return out;
    }
    if ident_end == 0 {
        return Vec::new();
    }
    let ident = &text[..ident_end];
    let rest = &text[ident_end..];
    match rest.strip_prefix("::") {
        Some(tail) => {
            let inner = expand(tail);
            if inner.is_empty() {
                vec![ident.to_owned()]
            } else {
                inner.into_iter().map(|p| format!("{ident}::{p}")).collect()
            }
        }
        None => vec![ident.to_owned()],
    }
}

/// The modules of the crate whose sources are in `src`: module path (`a::b`, empty for the
/// root) → file. `main.rs` beside a `lib.rs` is a crate of its own and left out.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let has_lib = src.join("lib.rs").exists();
    files
        .into_iter()
        .filter(|f| !(has_lib && f == &src.join("main.rs")))
        .map(|f| {
            let rel = f.strip_prefix(src).expect("inside").with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            (parts.join("::"), f)
        })
        .collect()
}

/// The module a path names: its longest prefix that is a module.
fn owner<'a>(path: &str, modules: &'a BTreeMap<String, PathBuf>) -> Option<&'a String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len()).rev().find_map(|n| {
        modules
            .get_key_value(&parts[..n].join("::"))
            .map(|(k, _)| k)
    })
}

/// Module → the modules it names.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules(src);
    let mut graph = BTreeMap::new();
    for (module, file) in &modules {
        if module.is_empty() {
            continue; // The root declares and re-exports; it depends on everything.
        }
        let code = code_only(&fs::read_to_string(file).expect("source"));
        // `super` of `a::b` in `a/b.rs` is `a`; of `a` in `a/mod.rs` the root.
        let mut parent: Vec<&str> = module.split("::").collect();
        parent.pop();
        let mut named = BTreeSet::new();
        for (marker, base) in [("crate::", String::new()), ("super::", parent.join("::"))] {
            let mut from = 0;
            while let Some(at) = code[from..].find(marker) {
                let start = from + at;
                from = start + marker.len();
                // `ledger_api::crate::` cannot occur; a preceding identifier char means
                // another word (`my_crate::`).
                if code[..start]
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
                {
                    continue;
                }
                for path in expand(&code[from..]) {
                    let full = if base.is_empty() {
                        path
                    } else {
                        format!("{base}::{path}")
                    };
                    if let Some(target) = owner(&full, &modules) {
                        if target != module && !target.is_empty() {
                            named.insert(target.clone());
                        }
                    }
                }
            }
        }
        graph.insert(module.clone(), named);
    }
    graph
}

/// The cycles of `graph`: its strongly connected components of more than one module
/// (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn the_cycle_check_finds_a_cycle_and_parses_use_trees() {
    assert_eq!(
        expand("{a::B, b::{c, d::E}, f} rest"),
        ["a::B", "b::c", "b::d::E", "f"]
    );
    assert_eq!(expand("state::AppState;"), ["state::AppState"]);
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(cycles(&graph), [["a", "b", "c"]]);
    let code = code_only("use crate::x; // crate::y\n#[cfg(test)]\nmod tests { use crate::z; }\n");
    assert!(code.contains("crate::x") && !code.contains("crate::y") && !code.contains("crate::z"));
}

#[test]
fn no_module_cycle_in_the_node_crates() {
    let mut found = Vec::new();
    for folder in NODE_CRATES {
        let src = root().join(folder).join("src");
        let graph = module_graph(&src);
        assert!(graph.len() >= 5, "{folder}: too few modules read");
        assert!(
            graph.values().any(|named| !named.is_empty()),
            "{folder}: no module names another (the parser is broken)"
        );
        for cycle in cycles(&graph) {
            let edges: Vec<String> = cycle
                .iter()
                .map(|m| {
                    let inside: Vec<&str> = graph[m]
                        .iter()
                        .filter(|n| cycle.contains(n))
                        .map(String::as_str)
                        .collect();
                    format!("  {m} names {}", inside.join(", "))
                })
                .collect();
            found.push(format!(
                "{folder}: these modules import each other in a cycle:\n{}",
                edges.join("\n")
            ));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

// --- the engine's facade ----------------------------------------------------------------------

/// What the node's crates must not name.
const INTERNAL: [&str; 2] = ["internals", "internal_log"];

/// Every `ledger_engine::` path in `text` (a use statement up to its `;`, or an inline path),
/// with the line it starts on.
fn engine_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut offset = 0;
    while let Some(at) = rest.find("ledger_engine::") {
        let start = offset + at;
        let tail = &text[start..];
        // A braced use list runs to its `}`; any other path to the end of the path.
        let end = if tail.starts_with("ledger_engine::{") {
            tail.find('}').map_or(tail.len(), |e| e + 1)
        } else {
            tail.find([';', '(', '=', '\n', ' ', ','])
                .unwrap_or(tail.len())
        };
        let line = text[..start].matches('\n').count() + 1;
        out.push((line, tail[..end].to_owned()));
        offset = start + "ledger_engine::".len();
        rest = &text[offset..];
    }
    out
}

/// The uses of the engine's internals in `text`: its `ledger_engine::` paths that name
/// `internals`, and calls of `internal_log`, with their lines.
fn internal_uses(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = engine_paths(text)
        .into_iter()
        .filter(|(_, path)| path.contains(INTERNAL[0]))
        .collect();
    for (i, line) in text.lines().enumerate() {
        if line.contains(&format!(".{}(", INTERNAL[1])) {
            out.push((i + 1, line.trim().to_owned()));
        }
    }
    out
}

#[test]
fn the_node_crates_use_only_the_engines_facade() {
    let lib = fs::read_to_string(root().join("engine/src/lib.rs")).expect("engine/src/lib.rs");
    assert!(
        lib.contains("pub mod internals") && lib.contains("\nmod tangle;"),
        "engine/src/lib.rs no longer has private components behind `internals`"
    );
    let mut files = Vec::new();
    for folder in NODE_CRATES {
        rust_files(&root().join(folder).join("src"), &mut files);
    }
    assert!(files.len() > 40, "{} files", files.len());
    let mut reaching = Vec::new();
    let mut seen = 0;
    for file in files {
        let text = fs::read_to_string(&file).expect("source");
        seen += engine_paths(&text).len();
        for (line, what) in internal_uses(&text) {
            reaching.push(format!("{}:{line}: {what}", file.display()));
        }
    }
    // The node does use the engine: a scan that finds no path at all is broken.
    assert!(seen > 20, "only {seen} ledger_engine paths found");
    assert!(
        reaching.is_empty(),
        "the node's crates reach into the engine's internals:\n{}",
        reaching.join("\n")
    );
}

#[test]
fn the_scan_finds_internal_uses() {
    let text = "use ledger_engine::{Engine, internals::tangle::BlockId};\n\
                let x = ledger_engine::internals::log::salvage(a);\n\
                let y = ledger_engine::BlockId::V2(z);\n\
                engine.internal_log().sync();";
    let paths = engine_paths(text);
    assert_eq!(paths.len(), 3, "{paths:?}");
    let uses = internal_uses(text);
    assert_eq!(
        uses.iter().map(|(line, _)| *line).collect::<Vec<_>>(),
        [1, 2, 4],
        "{uses:?}"
    );
    assert!(uses[1]
        .1
        .starts_with("ledger_engine::internals::log::salvage"));
}
