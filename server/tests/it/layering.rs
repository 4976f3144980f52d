//! The server sees the engine only through its facade: `Engine`, its config and the view and
//! error types re-exported at the crate root. The engine's component modules (`tangle`,
//! `log`, `utxo`, …) are private, so the compiler refuses a path into them; they are reachable
//! only under `ledger_engine::internals` (and the log through `Engine::internal_log`), for the
//! engine's own tests, benches and fuzz targets. A server file that uses either fails here,
//! naming the file and line.

use std::{fs, path::Path};

/// What the server must not name.
const INTERNAL: [&str; 2] = ["internals", "internal_log"];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

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
fn the_server_uses_only_the_engines_facade() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let lib = fs::read_to_string(root.join("engine/src/lib.rs")).expect("engine/src/lib.rs");
    assert!(
        lib.contains("pub mod internals") && lib.contains("\nmod tangle;"),
        "engine/src/lib.rs no longer has private components behind `internals`"
    );
    let mut files = Vec::new();
    rust_files(&root.join("server/src"), &mut files);
    assert!(files.len() > 20);
    let mut reaching = Vec::new();
    let mut seen = 0;
    for file in files {
        let text = fs::read_to_string(&file).expect("source");
        seen += engine_paths(&text).len();
        for (line, what) in internal_uses(&text) {
            reaching.push(format!("{}:{line}: {what}", file.display()));
        }
    }
    assert!(
        seen > 10,
        "found only {seen} engine paths: the scan is broken"
    );
    assert!(
        reaching.is_empty(),
        "the server reaches into the engine's internals (re-export what it needs from \
         engine/src/lib.rs):\n{}",
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
