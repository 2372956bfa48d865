-- A trigram index over the memories' question keys, so that similar() finds a tenant's
-- similar questions among all of them. The extension goes into `public` whatever the
-- search_path is, and the store names its functions and operator there, so a connection
-- whose search_path lacks `public` still finds them.
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
CREATE INDEX ix_query_route_memories_trgm ON query_route_memories
    USING gin (question_key public.gin_trgm_ops);
