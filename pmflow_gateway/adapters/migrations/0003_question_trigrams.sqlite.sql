-- A trigram full-text index over the memories' question keys, so that similar() finds a
-- tenant's similar questions among all of them. It reads its text from the memories table
-- (external content); the triggers keep it in step: a memory's key never changes, so only
-- inserts and deletes matter.
CREATE VIRTUAL TABLE query_route_memories_trgm USING fts5(
    question_key, content='query_route_memories', content_rowid='rowid', tokenize='trigram'
);
INSERT INTO query_route_memories_trgm (query_route_memories_trgm) VALUES ('rebuild');
CREATE TRIGGER query_route_memories_trgm_insert AFTER INSERT ON query_route_memories BEGIN
    INSERT INTO query_route_memories_trgm (rowid, question_key)
    VALUES (new.rowid, new.question_key);
END;
CREATE TRIGGER query_route_memories_trgm_delete AFTER DELETE ON query_route_memories BEGIN
    INSERT INTO query_route_memories_trgm (query_route_memories_trgm, rowid, question_key)
    VALUES ('delete', old.rowid, old.question_key);
END;
