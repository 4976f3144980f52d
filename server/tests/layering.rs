//! The server sees the engine only through its facade: `Engine`, its config and the view and
//! error types re-exported at the crate root, never an internal module (`tangle`, `log`,
//! `utxo`, …). A change that reaches into one fails here, naming the file and line.

use std::{fs, path::Path};

/// The engine's modules, from its `lib.rs`.
fn engine_modules(root: &Path) -> Vec<String> {
    let lib = fs::read_to_string(root.join("engine/src/lib.rs")).expect("engine/src/lib.rs");
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_owned())
        .collect()
}

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

#[test]
fn the_server_uses_only_the_engines_facade() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let modules = engine_modules(&root);
    assert!(modules.iter().any(|m| m == "tangle"), "{modules:?}");
    let mut files = Vec::new();
    rust_files(&root.join("server/src"), &mut files);
    assert!(files.len() > 20);
    let mut reaching = Vec::new();
    let mut seen = 0;
    for file in files {
        let text = fs::read_to_string(&file).expect("source");
        for (line, path) in engine_paths(&text) {
            seen += 1;
            let inner = path.trim_start_matches("ledger_engine::");
            for m in &modules {
                let needle = format!("{m}::");
                let hit = inner.starts_with(&needle)
                    || inner.contains(&format!("{{{needle}"))
                    || inner.contains(&format!(" {needle}"));
                if hit {
                    reaching.push(format!("{}:{line}: {path}", file.display()));
                }
            }
        }
    }
    assert!(
        seen > 10,
        "found only {seen} engine paths: the scan is broken"
    );
    assert!(
        reaching.is_empty(),
        "the server reaches into engine modules (re-export what it needs from \
         engine/src/lib.rs):\n{}",
        reaching.join("\n")
    );
}

#[test]
fn the_scan_finds_a_module_path() {
    let text =
        "use ledger_engine::{Engine, tangle::BlockId};\nlet x = ledger_engine::log::salvage(a);";
    let paths = engine_paths(text);
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert!(paths[0].1.contains("tangle::BlockId"));
    assert_eq!(paths[1].0, 2);
    assert!(paths[1].1.starts_with("ledger_engine::log::salvage"));
}
