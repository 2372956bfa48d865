"""Two facts about a consumer that aiokafka's public API gives only in part: where it fetches a
partition from, without waiting, and the metadata committed with a partition's offset."""

from __future__ import annotations

from aiokafka import AIOKafkaConsumer, TopicPartition

NO_COMMIT = (-1, "")


def fetch_position(consumer: AIOKafkaConsumer, tp: TopicPartition) -> int:
    """The offset the consumer fetches `tp` from next; -1 when it has none (not assigned,
    awaiting a reset). aiokafka offers only the waiting form (`await consumer.position`), and
    a caller that must not wait (a rewind could slip in; a metrics scrape) reads the same
    state here."""
    subscription = consumer._subscription.subscription
    assignment = subscription.assignment if subscription is not None else None
    state = assignment.state_value(tp) if assignment is not None else None
    return state.position if state is not None and state.has_valid_position else -1


async def committed(consumer: AIOKafkaConsumer, tp: TopicPartition) -> tuple[int, str]:
    """The group's committed offset of `tp` and its metadata; `NO_COMMIT` when there is none.
    `consumer.committed()` makes this very request and returns the offset alone."""
    found = (await consumer._coordinator.fetch_committed_offsets([tp])).get(tp)
    if found is None or found.offset < 0:
        return NO_COMMIT
    return found.offset, found.metadata or ""
