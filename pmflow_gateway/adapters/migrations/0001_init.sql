-- QA records, route memories and the applied-events ledger: what the memory writer keeps of
-- every answered question so later questions can learn from it. __JSON__ and __TIMESTAMP__
-- are replaced per dialect by the runner: JSONB/TIMESTAMPTZ on PostgreSQL, TEXT on SQLite.

-- One row per question of a tenant: what was answered, from which sources, and the feedback.
CREATE TABLE qa_records (
    tenant_id         TEXT NOT NULL,
    question_id       TEXT NOT NULL,
    question_key      TEXT NOT NULL,
    thread_id         TEXT,
    question          TEXT NOT NULL,
    locale            TEXT NOT NULL,
    status            TEXT NOT NULL,
    reason            TEXT,
    answer            TEXT NOT NULL,
    routing_snapshot  __JSON__ NOT NULL,
    plan              __JSON__ NOT NULL,
    planner           __JSON__ NOT NULL,
    verdict           __JSON__ NOT NULL,
    citations         __JSON__ NOT NULL,
    sources_used      __JSON__ NOT NULL,
    attempts          __JSON__ NOT NULL,
    stage_timings_ms  __JSON__ NOT NULL,
    composer          TEXT NOT NULL,
    execution_id      TEXT,
    answer_event_id   TEXT NOT NULL,
    answered_at       __TIMESTAMP__ NOT NULL,
    feedback_outcome  TEXT,
    feedback_comment  TEXT,
    feedback_at       __TIMESTAMP__,
    feedback_event_id TEXT,
    created_at        __TIMESTAMP__ NOT NULL,
    updated_at        __TIMESTAMP__ NOT NULL,
    PRIMARY KEY (tenant_id, question_id)
);

-- One row per tenant and normalised question: the similar-sample prior the route gateway reads.
CREATE TABLE query_route_memories (
    tenant_id        TEXT NOT NULL,
    question_key     TEXT NOT NULL,
    sample_question  TEXT NOT NULL,
    route_mode       TEXT NOT NULL,
    query_kind       TEXT NOT NULL,
    hit_count        INTEGER NOT NULL,
    outcome_counts   __JSON__ NOT NULL,
    feedback_counts  __JSON__ NOT NULL,
    feedback_outcome TEXT,
    feedback_at      __TIMESTAMP__,
    good_domains     __JSON__ NOT NULL,
    last_question_id TEXT NOT NULL,
    created_at       __TIMESTAMP__ NOT NULL,
    updated_at       __TIMESTAMP__ NOT NULL,
    PRIMARY KEY (tenant_id, question_key)
);

-- Every event the memory writer applied: a redelivery finds its row and changes nothing.
-- Keyed by tenant too, because answer event ids derive from question ids, which tenants
-- choose independently.
CREATE TABLE applied_events (
    tenant_id   TEXT NOT NULL,
    kind        TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    question_id TEXT NOT NULL,
    applied_at  __TIMESTAMP__ NOT NULL,
    PRIMARY KEY (tenant_id, kind, event_id)
);
