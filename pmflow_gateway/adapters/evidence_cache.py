"""`ports.EvidenceCache` in this process's memory: bounded in entries and in age."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from pmflow_gateway.schemas import ExternalEvidence, ExternalQueryPlan


class RecentEvidence:
    """The evidence of the last `max_entries` plans looked up, each for `ttl_s` seconds; the
    oldest goes first when full. Keyed by tenant and the whole plan: the same question planned
    the same way, so one tenant's look-up never serves another's."""

    def __init__(self, *, ttl_s: float, max_entries: int = 1024,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._ttl_s = ttl_s
        self._max = max_entries
        self._now = monotonic
        self._kept: OrderedDict[tuple[str, str], tuple[float, list[ExternalEvidence]]] = (
            OrderedDict())

    @staticmethod
    def _key(tenant_id: str, plan: ExternalQueryPlan) -> tuple[str, str]:
        return tenant_id, plan.model_dump_json()

    def get(self, tenant_id: str, plan: ExternalQueryPlan) -> list[ExternalEvidence] | None:
        key = self._key(tenant_id, plan)
        found = self._kept.get(key)
        if found is None:
            return None
        if self._now() - found[0] > self._ttl_s:
            del self._kept[key]
            return None
        return list(found[1])

    def put(self, tenant_id: str, plan: ExternalQueryPlan,
            items: Sequence[ExternalEvidence]) -> None:
        key = self._key(tenant_id, plan)
        self._kept.pop(key, None)
        self._kept[key] = (self._now(), list(items))
        while len(self._kept) > self._max:
            self._kept.popitem(last=False)
