"""A publisher that holds: where a record's sends go when its outputs leave in its transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from pmflow_gateway.streams.codec import encode, output_headers
from pmflow_gateway.streams.delivery import check_size
from pmflow_gateway.tracing import publishing


@dataclass(frozen=True, slots=True)
class Output:
    topic: str
    key: bytes | None
    value: bytes
    headers: list[tuple[str, bytes]]


class Outbox:
    """The `Publisher` port for one record: each send is encoded and checked now (an output no
    request could carry raises `Unpublishable` at once, as a real send would) and kept, in
    order, for whoever sends the record's outputs later."""

    def __init__(self) -> None:
        self.outputs: list[Output] = []

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def send(self, topic: str, key: str | None, event: BaseModel, *,
                   headers: Sequence[tuple[str, bytes]] = ()) -> None:
        value = encode(event)
        key_bytes = key.encode() if key else None
        with publishing(topic, key) as trace_headers:
            all_headers = output_headers(event, trace_headers, headers)
            check_size(key_bytes, value, all_headers)
            self.outputs.append(Output(topic, key_bytes, value, all_headers))
