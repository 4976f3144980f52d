"""Posts a tagged-data block with the official client (iota-sdk) to node A every 5 s for
DURATION seconds, reads it back on A at once and on B one second later, and at the end asks A
for each block's metadata and B for each block.

    poster.py DURATION [A_URL] [B_URL]

A block posted while B is down is missing on B within 1 s; on nodes that prune, blocks below the
pruning index are gone at the end (counted apart from the missing ones)."""
import json
import sys
import time
import urllib.error
import urllib.request

from iota_sdk import Client, TaggedDataPayload, utf8_to_hex

duration = float(sys.argv[1])
A = sys.argv[2] if len(sys.argv) > 2 else "http://127.0.0.1:14265"
B = sys.argv[3] if len(sys.argv) > 3 else "http://127.0.0.1:14266"
client = Client(nodes=[A])


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None
    except Exception as e:  # refused while the node is down
        return str(e), None


posted, on_a, on_b = 0, 0, 0
ids = []
end = time.time() + duration
while time.time() < end:
    tag = utf8_to_hex(f"user-run-{posted}")
    block_id, _ = client.submit_payload(TaggedDataPayload(tag, utf8_to_hex("hello")))
    posted += 1
    ids.append(block_id)
    st, body = get(f"{A}/api/core/v2/blocks/{block_id}")
    on_a += st == 200 and body["payload"]["tag"] == tag
    time.sleep(1)
    st, _ = get(f"{B}/api/core/v2/blocks/{block_id}")
    on_b += st == 200
    time.sleep(4)

referenced, pruned_a, missing_b, pruned_b = 0, 0, 0, 0
pruning = {n: get(f"{u}/api/core/v2/info")[1]["status"]["pruningIndex"] for n, u in (("A", A), ("B", B))}
for block_id in ids:
    st, meta = get(f"{A}/api/core/v2/blocks/{block_id}/metadata")
    if st == 200 and meta.get("referencedByMilestoneIndex"):
        referenced += 1
    elif st == 404 and pruning["A"] > 0:
        pruned_a += 1
    st, _ = get(f"{B}/api/core/v2/blocks/{block_id}")
    if st == 404 and pruning["B"] > 0:
        pruned_b += 1
    elif st != 200:
        missing_b += 1
print(f"poster: {posted} posted, {on_a} read back on A, {on_b} on B within 1 s; at the end "
      f"{referenced} referenced on A and {pruned_a} pruned there (pruning index {pruning['A']}), "
      f"{missing_b} missing on B and {pruned_b} pruned there")
