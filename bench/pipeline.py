"""Feeding the whole pipeline in rounds and waiting until every stage has finished and committed."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer

from bench import kafka
from bench.fixtures import route_decided
from pmflow_gateway.schemas import Topics
from pmflow_gateway.streams.stages import STAGES

ALL_STAGES = ("plan", "evidence", "verify", "answer", "render", "memory")


def groups(topics: Topics, stages: tuple[str, ...] = ALL_STAGES) -> dict[str, str]:
    """Consumer group -> the topic it reads, as `StageRunner` names them."""
    return {f"{topics.prefix}gateway-{name}": STAGES[name].source(topics) for name in stages}


@dataclass
class Pipeline:
    bootstrap: str
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    sent: int = 0
    replies: int = 0
    topics: Topics = field(init=False)
    _replies: AIOKafkaConsumer | None = None

    def __post_init__(self) -> None:
        self.topics = Topics(prefix=f"bench{self.run}.")

    async def setup(self, partitions: int = 3) -> None:
        await kafka.create_topics(self.bootstrap, self.topics, partitions=partitions)
        self._replies = await kafka.tail(self.bootstrap, [self.topics.reply_rendered])

    async def feed(self, count: int, *, timeout_s: float) -> dict[str, Any]:
        """Send `count` more questions and wait for their replies and every stage's commit."""
        messages = [route_decided(self.run, self.sent + i) for i in range(count)]
        started = time.monotonic()
        await kafka.produce_all(self.bootstrap, self.topics.route_decided, messages)
        self.sent += count
        assert self._replies is not None
        target = self.sent - self.replies
        records = await kafka.read_until(self._replies, lambda rs: len(rs) >= target,
                                         timeout_s=timeout_s)
        self.replies += len(records)
        replied = time.monotonic()
        state = await kafka.wait_committed(self.bootstrap, groups(self.topics), timeout_s=30)
        return {"replies": len(records), "seconds_to_replies": round(replied - started, 3),
                "committed_all": all(s["committed"] == s["end"] for s in state.values())}

    async def close(self) -> None:
        if self._replies is not None:
            await self._replies.stop()
        await kafka.delete_topics(self.bootstrap, self.topics.all())
