-- Ratings that arrived before the QA record they rate: kept here, keyed by tenant and event,
-- and applied (then deleted) when the record lands; deleted unapplied once they have waited
-- longer than the store's feedback wait (orphans: their question never got a record).
CREATE TABLE pending_feedback (
    tenant_id   TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    question_id TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    comment     TEXT,
    occurred_at __TIMESTAMP__ NOT NULL,
    received_at __TIMESTAMP__ NOT NULL,
    PRIMARY KEY (tenant_id, event_id)
);
CREATE INDEX ix_pending_feedback_question ON pending_feedback (tenant_id, question_id);
CREATE INDEX ix_pending_feedback_received ON pending_feedback (received_at);
