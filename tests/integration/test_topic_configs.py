"""Topics are created with their configs on the real broker: `min.insync.replicas` on every
topic (explicit, not the broker's default) and the dead-letter topic's retention; the other
topics keep the broker's retention."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from pmflow_gateway.schemas import Topics

pytestmark = pytest.mark.kafka
FOURTEEN_DAYS_MS = 14 * 24 * 3600 * 1000


async def described(bootstrap: str, names: list[str]) -> dict[str, dict[str, tuple[str, bool]]]:
    """topic -> config name -> (value, set on the topic itself)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        responses = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, name) for name in names])
    finally:
        await admin.close()
    found: dict[str, dict[str, tuple[str, bool]]] = {}
    for response in responses:
        for _, _, _, name, entries in response.resources:
            # (name, value, read_only, config_source, is_sensitive, synonyms): source 1 is a
            # dynamic topic config, i.e. one given when the topic was created.
            found[name] = {e[0]: (e[1], e[3] == 1) for e in entries}
    return found


def test_topics_create_sets_min_insync_replicas_and_dead_letter_retention(
        kafka_bootstrap: str, topics: Topics, tmp_path: Path) -> None:
    env = {**os.environ, "PMFLOW_KAFKA_BOOTSTRAP": kafka_bootstrap,
           "PMFLOW_DATA_DIR": str(tmp_path), "PMFLOW_TOPIC_PREFIX": topics.prefix,
           "PMFLOW_DEAD_LETTER_RETENTION_MS": str(FOURTEEN_DAYS_MS)}
    done = subprocess.run([sys.executable, "-m", "pmflow_gateway.cli", "topics", "create"],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    configs = asyncio.run(described(kafka_bootstrap, topics.all()))
    assert set(configs) == set(topics.all())
    for name, config in configs.items():
        assert config["min.insync.replicas"] == ("1", True), name  # RF 1 here: 1 of 1
    assert configs[topics.dead_letter]["retention.ms"] == (str(FOURTEEN_DAYS_MS), True)
    assert not configs[topics.route_decided]["retention.ms"][1]  # the broker's default
