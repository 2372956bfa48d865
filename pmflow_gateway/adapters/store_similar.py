"""How the store finds a tenant's candidate similar questions: the database's trigram index
(`pg_trgm` with a GIN index led by the tenant on PostgreSQL, FTS5 `trigram` on SQLite), or the
most recent memories for a key too short to have a trigram. The store ranks the candidates.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from pmflow_gateway.adapters.store_schema import query_route_memories

# The trigram index's own similarity below which a memory is not even a candidate.
TRIGRAM_THRESHOLD = 0.1
# A long question is looked up by its first trigrams only: enough to find its neighbours.
MAX_QUERY_TRIGRAMS = 64

_MEMORY_COLUMNS = ", ".join(column.name for column in query_route_memories.c)


async def candidates(conn: AsyncConnection, tenant_id: str, key: str, *,
                     limit: int) -> list[Row[Any]]:
    """Up to `limit` of the tenant's memories whose keys share trigrams with `key`."""
    if len(key) < 3:  # no trigram to look up: compare with the most recent
        return await _recent(conn, tenant_id, limit)
    if conn.dialect.name == "postgresql":
        return await _postgres_candidates(conn, tenant_id, key, limit)
    return await _sqlite_candidates(conn, tenant_id, key, limit)


async def _recent(conn: AsyncConnection, tenant_id: str, limit: int) -> list[Row[Any]]:
    return list((await conn.execute(
        select(query_route_memories)
        .where(query_route_memories.c.tenant_id == tenant_id)
        .order_by(query_route_memories.c.updated_at.desc())
        .limit(limit)
    )).all())


async def _postgres_candidates(conn: AsyncConnection, tenant_id: str, key: str,
                               limit: int) -> list[Row[Any]]:
    # Loose on purpose: trigram similarity only preselects, bigram Jaccard decides.
    await conn.execute(text("SELECT set_config('pg_trgm.similarity_threshold', "
                            ":threshold, true)"), {"threshold": str(TRIGRAM_THRESHOLD)})
    return list((await conn.execute(
        text(f"SELECT {_MEMORY_COLUMNS} FROM query_route_memories "
             "WHERE tenant_id = :tenant AND question_key OPERATOR(public.%) :key "
             "ORDER BY public.similarity(question_key, :key) DESC LIMIT :n")
        .columns(*query_route_memories.c),
        {"tenant": tenant_id, "key": key, "n": limit},
    )).all())


async def _sqlite_candidates(conn: AsyncConnection, tenant_id: str, key: str,
                             limit: int) -> list[Row[Any]]:
    grams = list(dict.fromkeys(key[i:i + 3] for i in range(len(key) - 2)))
    match = " OR ".join('"' + gram.replace('"', '""') + '"'
                        for gram in grams[:MAX_QUERY_TRIGRAMS])
    columns = ", ".join(f"m.{c.name}" for c in query_route_memories.c)
    return list((await conn.execute(
        text(f"SELECT {columns} FROM query_route_memories_trgm AS f "
             "JOIN query_route_memories AS m ON m.rowid = f.rowid "
             "WHERE query_route_memories_trgm MATCH :match AND m.tenant_id = :tenant "
             "ORDER BY f.rank LIMIT :n")
        .columns(*query_route_memories.c),
        {"match": match, "tenant": tenant_id, "n": limit},
    )).all())
