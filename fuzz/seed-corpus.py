#!/usr/bin/env python3
"""Regenerate the committed seed corpus under fuzz/corpus/ from the repository's vectors/.

Usage (from anywhere):  python3 fuzz/seed-corpus.py [VECTORS_DIR]

VECTORS_DIR defaults to <repo>/vectors. Each corpus directory is
emptied and refilled (one per target); file names are the sha1 of the content, so the output
is deterministic and duplicates collapse.

Seeds per target:
  v2_block       every "block" byte string in stardust/*.json (valid blocks
                 and the invalid.json block entries), plus every "payload"
                 byte string wrapped in a minimal block (protocol version 2,
                 one parent, payload, nonce 0) so the fuzzer starts inside
                 each payload kind.
  v2_block_json  the JSON text of every stardust block vector, plus every
                 payload JSON wrapped in the same minimal block JSON.
  v3_block       every block byte string in nova/blocks.json and
                 nova/negative_blocks.json (including the
                 bytesIfEncodedNaively encodings of the JSON-only cases).
  gossip_frames  a chunk-size byte (0 = 1-byte reads, 6 = 7-byte reads,
                 255 = one read) followed by a gossip stream: one frame of
                 each type (the Heartbeat and MilestoneRequest vectors of
                 docs/peering.md, a BlockRequest, and a Block frame around the
                 first v2 block vector), all four back to back, and an empty
                 Block frame.
  snapshot_file  Hornet's snapshot fixtures in vectors/hornet-snapshots/: a
                 mode byte 0 and each full file; a mode byte 1, the u16 LE
                 length of snapshot_full_snapshot.bin, that file, then
                 snapshot_delta_snapshot.bin.

Plus, for every target, the inputs committed under fuzz/found/<target>/
(at most ~50 per target that fuzzing found, picked by coverage gain; see
README.md), so the corpus is exactly this script's output.
"""

import hashlib
import json
import struct
import sys
from pathlib import Path

FUZZ_DIR = Path(__file__).resolve().parent
CORPUS = FUZZ_DIR / "corpus"
FOUND = FUZZ_DIR / "found"
# Parent used for wrapped payloads: any 32 bytes will do for syntax.
WRAP_PARENT = bytes(range(32))


def hex_bytes(text):
    text = text[2:] if text[:2] in ("0x", "0X") else text
    return bytes.fromhex(text)


def entries(doc):
    """A vector file is either a list of entries or an object with "vectors"."""
    if isinstance(doc, list):
        return doc
    return doc.get("vectors", [])


def wrap_payload(payload):
    """Minimal v2 block (TIP-24) around payload bytes."""
    return (
        bytes([2, 1])
        + WRAP_PARENT
        + struct.pack("<I", len(payload))
        + payload
        + struct.pack("<Q", 0)
    )


def wrap_payload_json(payload):
    return {
        "protocolVersion": 2,
        "parents": ["0x" + WRAP_PARENT.hex()],
        "payload": payload,
        "nonce": "0",
    }


def json_text(value):
    return json.dumps(value, separators=(",", ":")).encode()


def stardust_seeds(vectors):
    blocks, texts = [], []
    for path in sorted((vectors / "stardust").glob("*.json")):
        for entry in entries(json.loads(path.read_text())):
            if not isinstance(entry, dict):
                continue
            kind = entry.get("kind")
            raw = entry.get("bytes")
            doc = entry.get("json")
            if kind == "block":
                if raw:
                    blocks.append(hex_bytes(raw))
                if doc is not None:
                    texts.append(json_text(doc))
            elif kind == "payload":
                if raw:
                    blocks.append(wrap_payload(hex_bytes(raw)))
                if doc is not None:
                    texts.append(json_text(wrap_payload_json(doc)))
    return blocks, texts


def nova_seeds(vectors):
    blocks = []
    for name in ("blocks.json", "negative_blocks.json"):
        doc = json.loads((vectors / "nova" / name).read_text())
        for entry in entries(doc):
            for key in ("bytes", "bytesIfEncodedNaively"):
                if entry.get(key):
                    blocks.append(hex_bytes(entry[key]))
    return blocks


def gossip_frame(kind, payload):
    """One gossip TLV frame: type u8, length u16 LE, payload."""
    return bytes([kind]) + struct.pack("<H", len(payload)) + payload


def gossip_seeds(v2_blocks):
    heartbeat = bytes.fromhex("040e000700000000000000070000000101")
    milestone_request = bytes.fromhex("01040000000000")
    block_request = gossip_frame(3, WRAP_PARENT)
    block = gossip_frame(2, v2_blocks[0] if v2_blocks else b"")
    streams = [
        heartbeat,
        milestone_request,
        block_request,
        block,
        heartbeat + milestone_request + block_request + block,
        gossip_frame(2, b""),
    ]
    return [bytes([chunk]) + stream for chunk in (0, 6, 255) for stream in streams]


def snapshot_seeds(vectors):
    snaps = vectors / "hornet-snapshots"
    fulls = ["full_snapshot.bin", "migration_full_snapshot.bin", "snapshot_full_snapshot.bin"]
    seeds = [b"\x00" + (snaps / name).read_bytes() for name in fulls]
    full = (snaps / "snapshot_full_snapshot.bin").read_bytes()
    delta = (snaps / "snapshot_delta_snapshot.bin").read_bytes()
    seeds.append(b"\x01" + struct.pack("<H", len(full)) + full + delta)
    return seeds


def found_inputs(target):
    found = FOUND / target
    if not found.is_dir():
        return []
    return [p.read_bytes() for p in sorted(found.iterdir()) if p.is_file()]


def write_corpus(target, seeds):
    found = found_inputs(target)
    seeds = seeds + found
    out = CORPUS / target
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        old.unlink(missing_ok=True)
    names = set()
    for seed in seeds:
        name = hashlib.sha1(seed).hexdigest()
        (out / name).write_bytes(seed)
        names.add(name)
    print(f"{target}: {len(names)} files ({len(seeds) - len(found)} from vectors, {len(found)} found)")


def main():
    default = FUZZ_DIR.parent / "vectors"
    vectors = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    vectors = vectors.resolve()
    if not (vectors / "stardust").is_dir() or not (vectors / "nova").is_dir():
        sys.exit(f"no stardust/ and nova/ under {vectors}")
    v2_blocks, v2_texts = stardust_seeds(vectors)
    write_corpus("v2_block", v2_blocks)
    write_corpus("v2_block_json", v2_texts)
    write_corpus("v3_block", nova_seeds(vectors))
    write_corpus("gossip_frames", gossip_seeds(v2_blocks))
    write_corpus("snapshot_file", snapshot_seeds(vectors))


if __name__ == "__main__":
    main()
