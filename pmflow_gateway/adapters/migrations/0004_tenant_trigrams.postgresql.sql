-- Every similarity lookup is for one tenant. With the trigram index alone the planner
-- prefers the tenant's btree index and computes trigram similarity for every memory the
-- tenant has; one GIN index over (tenant, trigrams) answers both conditions at once. The
-- tenant column needs btree_gin's GIN operator class (trusted, ships with PostgreSQL).
CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public;
CREATE INDEX ix_query_route_memories_tenant_trgm ON query_route_memories
    USING gin (tenant_id, question_key public.gin_trgm_ops);
DROP INDEX ix_query_route_memories_trgm;
