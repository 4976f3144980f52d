#!/usr/bin/env python3
"""Lists the dependencies that only run at compile time: proc macros, build scripts' crates and
what only they depend on (syn, quote, cc, ...).

Cargo.toml builds every dependency with opt-level 2 (`[profile.dev.package."*"]`, so that the
test suite's node runs its crypto and HTTP at speed), and that setting takes precedence over
`[profile.dev.build-override]`: without named overrides the compile-time crates are optimized
too, which costs build time and saves nothing at run time. Cargo.toml names each of them with
opt-level 0; run this after a dependency change and compare:

    python3 scripts/compile-time-crates.py            # the names, one line
    python3 scripts/compile-time-crates.py --check    # exit 1 if Cargo.toml's list differs

A second, hand-made list below it in Cargo.toml names run-time crates that the tests barely
run (the benchmark harness, command-line parsing, start-up code): they too are built with
opt-level 0. `--check` makes sure each of those is still a run-time dependency, and that none is
linked by the codec's library (with the workspace's features unified, as `cargo metadata`
resolves them): the codec is built with opt-level 1 for the tests, which shares generic code
with the crates below it, so it would call their unoptimized copies of the standard library's
generics (`Range::next` in the proof of work: the codec's tests ran 7x slower when the JWT
library's `der` was listed here, reached through `ed25519`'s `pkcs8` feature).

Crates in the lock file that are never built for Linux (windows-*, wasm-*) are left out.
Standard library only.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "# compile-time crates (scripts/compile-time-crates.py)"
COLD_MARK = "# cold run-time crates (scripts/compile-time-crates.py)"


def compile_time_and_runtime_crates():
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked",
         "--filter-platform", "x86_64-unknown-linux-gnu"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout)
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}

    def is_proc_macro(pid):
        return any("proc-macro" in t["kind"] for t in packages[pid]["targets"])

    # Everything the workspace's code links at run time: normal and dev edges, never into a
    # proc macro, never through a build dependency.
    runtime = reachable(nodes, meta["workspace_members"], lambda dep: any(
        k["kind"] in (None, "dev") for k in dep["dep_kinds"]) and not is_proc_macro(dep["pkg"]))
    # What the codec's library links: its normal dependencies, transitively.
    codec = next(p for p in meta["workspace_members"] if packages[p]["name"] == "ledger-codec")
    codec_links = reachable(nodes, [codec], lambda dep: any(
        k["kind"] is None for k in dep["dep_kinds"])) - {codec}
    names = lambda ids: sorted({packages[p]["name"] for p in ids})
    return names(p for p in nodes if p not in runtime), names(runtime), names(codec_links)


def reachable(nodes, starts, follow):
    """The packages reachable from `starts` along the resolve graph's edges that `follow` takes."""
    seen, stack = set(), list(starts)
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        stack.extend(dep["pkg"] for dep in nodes[pid]["deps"] if follow(dep))
    return seen


def listed_in_cargo_toml(start, end=None):
    """The opt-level 0 overrides between the marker line `start` and `end` (or the file's end)."""
    text = (ROOT / "Cargo.toml").read_text()
    text = text[text.index(start):]
    if end is not None:
        text = text[:text.index(end)]
    return sorted(re.findall(r'^\[profile\.dev\.package\.([A-Za-z0-9_-]+)\]\nopt-level = 0$',
                             text, re.M))


def main():
    names, runtime, codec_links = compile_time_and_runtime_crates()
    if "--check" in sys.argv[1:]:
        listed = listed_in_cargo_toml(MARK, COLD_MARK)
        if names != listed:
            missing = sorted(set(names) - set(listed))
            extra = sorted(set(listed) - set(names))
            print(f"Cargo.toml's opt-level 0 list differs: add {missing}, remove {extra}")
            return 1
        cold = listed_in_cargo_toml(COLD_MARK)
        gone = sorted(set(cold) - set(runtime))
        if gone:
            print(f"Cargo.toml's cold run-time crates are no run-time dependency: remove {gone}")
            return 1
        hot = sorted(set(cold) & set(codec_links))
        if hot:
            print(f"Cargo.toml's cold run-time crates include what the codec links (it would call "
                  f"their unoptimized generics): remove {hot}")
            return 1
        print(f"{len(names)} compile-time crates and {len(cold)} cold run-time crates, "
              "as listed in Cargo.toml")
        return 0
    print(" ".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
