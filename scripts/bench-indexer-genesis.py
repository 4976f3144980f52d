#!/usr/bin/env python3
"""Writes a genesis for the indexer benchmark: OUTPUTS basic outputs spread over ADDRESSES
Ed25519 addresses (address i has pubKeyHash = i as 8 bytes little-endian, then zeros: the
addresses `ledger-load --scenario indexer-address` asks for), 1 Mi each, on the
dev network's parameters (network `ledger-dev`, bech32 `rms`).

    scripts/bench-indexer-genesis.py 1000000 100000 > /tmp/indexer-genesis.json
    ledger-node --genesis /tmp/indexer-genesis.json --data-dir /tmp/ix ...
"""

import json
import sys

AMOUNT = 1_000_000


def main() -> None:
    outputs, addresses = (int(a) for a in sys.argv[1:3])
    w = sys.stdout.write
    params = {
        "version": 2,
        "networkName": "ledger-dev",
        "bech32Hrp": "rms",
        "minPowScore": 0,
        "belowMaxDepth": 15,
        "rentStructure": {"vByteCost": 100, "vByteFactorData": 1, "vByteFactorKey": 10},
        "tokenSupply": str(outputs * AMOUNT),
    }
    w('{"protocolParameters":' + json.dumps(params))
    w(',"milestoneIndex":0,"milestoneTimestamp":0')
    w(',"solidEntryPoints":["0x' + "00" * 32 + '"],"outputs":[')
    for i in range(outputs):
        address = (i % addresses).to_bytes(8, "little").hex() + "00" * 24
        # Transaction id: i as 8 bytes, so ids are unique and not in address order.
        output_id = i.to_bytes(8, "big").hex() + "00" * 24 + "0000"
        w(
            ("," if i else "")
            + '{"outputId":"0x' + output_id + '","output":{"type":3,"amount":"'
            + str(AMOUNT) + '","unlockConditions":[{"type":0,"address":{"type":0,"pubKeyHash":"0x'
            + address + '"}}]}}'
        )
    w("]}\n")


if __name__ == "__main__":
    main()
