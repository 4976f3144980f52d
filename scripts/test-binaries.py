#!/usr/bin/env python3
"""Lists what `cargo test --no-run --message-format=json…` built, for scripts/test-all.

Reads cargo's JSON messages on stdin and prints one tab-separated line per executable to run:
`node <TAB> <package dir> <TAB> <path>` for the ledger-node binary that the black-box tests and
the official client start, `suite <TAB> …` for the server's black-box suite (server/tests/it,
the longest test binary, run beside the others), and `test <TAB> …` for every other test
binary (unit tests, integration tests, benchmarks in test mode), in cargo's order. Exits 1
when the build failed (quietly: cargo has said why) or the node binary or the suite is missing.

(cargo-nextest runs test binaries side by side too, but a clean CI machine would first compile
it from crates.io, several minutes on two cores: more than running them side by side saves.)
"""

import json
import os
import sys


def main() -> int:
    node, suite, tests = None, None, []
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("reason") == "build-finished" and not message.get("success"):
            return 1  # cargo has printed why
        if message.get("reason") != "compiler-artifact" or not message.get("executable"):
            continue
        target, exe = message["target"], message["executable"]
        package_dir = os.path.dirname(message["manifest_path"])
        if not message["profile"]["test"]:
            if target["name"] == "ledger-node" and "bin" in target["kind"]:
                node = (package_dir, exe)
            continue
        if target["name"] == "it" and os.path.basename(package_dir) == "server":
            suite = (package_dir, exe)
        else:
            tests.append((package_dir, exe))
    if node is None or suite is None:
        print("test-binaries: cargo built no ledger-node binary or no server test suite", file=sys.stderr)
        return 1
    for role, (package_dir, exe) in [("node", node), ("suite", suite)] + [("test", t) for t in tests]:
        print(f"{role}\t{package_dir}\t{exe}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
