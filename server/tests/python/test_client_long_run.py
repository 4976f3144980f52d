"""The official client keeps working on a node that runs for many milestones.

A node with the built-in coordinator at 0.2 s runs through more than 40 milestones (past the
16th, where a node that never refreshed its cone root indexes refused every block) while the
official client posts through its own flows: `build_and_post_block` (tips from `/tips`,
client-side PoW, binary submit) and `submit_payload`. Every post is accepted and every block is
referenced by a milestone soon after.
"""

from __future__ import annotations

import time

import pytest
from iota_sdk import Client, TaggedDataPayload, utf8_to_hex

from conftest import module_node

MILESTONES = 40
# Bounds a hang on a loaded machine; asserts no speed.
RUN_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def busy_node(tmp_path_factory):
    """A node whose coordinator issues a milestone every 0.2 s."""
    yield from module_node(tmp_path_factory, coordinator_interval="0.2")


def confirmed_index(client: Client) -> int:
    return client.get_info().nodeInfo.status.confirmedMilestone.index


def test_client_posts_through_many_milestones(busy_node):
    client = Client(nodes=[busy_node.url])
    started = time.time()
    posted = []
    round_ = 0
    while confirmed_index(client) < MILESTONES:
        assert time.time() - started < RUN_TIMEOUT_S, "milestones stopped"
        round_ += 1
        at = confirmed_index(client)
        block_id, _ = client.build_and_post_block(
            tag=utf8_to_hex("long run"), data=utf8_to_hex(f"build {round_}")
        )
        posted.append((block_id, at))
        payload = TaggedDataPayload(utf8_to_hex("long run"), utf8_to_hex(f"submit {round_}"))
        block_id, _ = client.submit_payload(payload)
        posted.append((block_id, at))
        time.sleep(0.1)
    end = confirmed_index(client) + 3
    while confirmed_index(client) < end:
        assert time.time() - started < RUN_TIMEOUT_S, "milestones stopped"
        time.sleep(0.1)
    assert len(posted) >= MILESTONES, len(posted)
    for block_id, at in posted:
        meta = client.get_block_metadata(block_id)
        assert meta.referencedByMilestoneIndex is not None, (block_id, at)
        assert at < meta.referencedByMilestoneIndex <= at + 3, (block_id, at, meta)
