-- Indexes for the two read paths that scan more than one row: similar() reads a tenant's most
-- recently updated memories, and the good-domain recount reads a tenant's answers to one key.
CREATE INDEX ix_query_route_memories_recent ON query_route_memories (tenant_id, updated_at);
CREATE INDEX ix_qa_records_key ON qa_records (tenant_id, question_key, status);
