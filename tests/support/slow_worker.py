"""A worker process of every stage whose provider takes `PMFLOW_TEST_SLOW_S` seconds for a
question about 五天 and answers the others at once, for the tests that kill a worker while a
slow record holds its partition: `python -m tests.support.slow_worker`, configured by the
`PMFLOW_*` variables; it runs until SIGTERM (or SIGKILL)."""

from __future__ import annotations

import asyncio
import os
import signal

from pmflow_gateway.schemas import Topics
from pmflow_gateway.settings import Settings
from tests.fakes import WEATHER, SlowAdapter
from tests.support.processors import running


async def main() -> None:
    settings = Settings()
    adapter = SlowAdapter(items=[WEATHER], slow_marker="五天",
                          slow_s=float(os.environ.get("PMFLOW_TEST_SLOW_S", "0")))
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with running(settings.kafka_bootstrap, Topics(prefix=settings.topic_prefix),
                       adapters=[adapter], guarantee=settings.processing_guarantee):
        print("worker ready", flush=True)
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
