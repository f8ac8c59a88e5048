-- Engram analytics schema: history, audit and observability read model.
--
-- Written by engram.projections.clickhouse (ClickHouseProjector) through
-- clickhouse-connect, to the in-process chDB engine (embedded runtime) or a
-- ClickHouse server (distributed runtime). Tables are unqualified: they are
-- created in the client's current database (default `engram`).
--
-- Rules for every fact table:
--   * append-only; one row per event, keyed by the event's deterministic id;
--   * ReplacingMergeTree whose sorting key ends in event_id and whose other
--     key columns are pure functions of the event, so a replayed or duplicated
--     event collapses into one row (read with FINAL, as queries/ do);
--   * partitioned by month of the event time (never the wall clock);
--   * no secret reaches a row: free text is passed through engram.core.pii.redact.
-- Column order here is the insert order of the projector (checked by a test).

CREATE TABLE IF NOT EXISTS event_log
(
    event_id        String,
    type            LowCardinality(String),
    schema_version  UInt16,
    occurred_at     DateTime64(3, 'UTC'),
    tenant_id       LowCardinality(String),
    user_id         String,
    causation_ids   Array(String),
    correlation_id  String
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, type, event_id);

-- L0: every chat message; content and metadata values redacted.
CREATE TABLE IF NOT EXISTS turns
(
    event_id        String,
    occurred_at     DateTime64(3, 'UTC'),
    tenant_id       LowCardinality(String),
    user_id         String,
    agent_id        LowCardinality(String),
    session_id      String,
    message_id      String,
    parent_id       String,
    role            LowCardinality(String),
    content         String,
    content_chars   UInt32,
    redacted        Bool,
    metadata        Map(String, String),
    correlation_id  String
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, user_id, session_id, event_id);

CREATE TABLE IF NOT EXISTS skipped_turns
(
    event_id        String,
    occurred_at     DateTime64(3, 'UTC'),
    tenant_id       LowCardinality(String),
    user_id         String,
    session_id      String,
    message_id      String,
    role            LowCardinality(String),
    reason          LowCardinality(String),
    causation_ids   Array(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, reason, event_id);

-- Candidates that passed the guard (the step between L0 and a memory change).
CREATE TABLE IF NOT EXISTS memory_proposals
(
    event_id            String,
    occurred_at         DateTime64(3, 'UTC'),
    tenant_id           LowCardinality(String),
    user_id             String,
    agent_id            LowCardinality(String),
    session_id          String,
    memory_type         LowCardinality(String),
    slot                LowCardinality(String),
    topic               String,
    negated             Bool,
    content             String,
    confidence          Float64,
    importance          Float64,
    extractor           LowCardinality(String),
    source_message_ids  Array(String),
    causation_ids       Array(String),
    correlation_id      String
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, user_id, event_id);

-- Every change of every memory (full history), the state before and after.
CREATE TABLE IF NOT EXISTS memory_changes
(
    event_id                 String,
    occurred_at              DateTime64(3, 'UTC'),
    tenant_id                LowCardinality(String),
    user_id                  String,
    memory_id                String,
    change                   LowCardinality(String),
    relation                 LowCardinality(String),
    judge                    LowCardinality(String),
    reason                   String,
    memory_type              LowCardinality(String),
    layer                    LowCardinality(String),
    slot                     LowCardinality(String),
    topic                    String,
    agent_id                 LowCardinality(String),
    session_id               String,
    before_status            LowCardinality(String),
    after_status             LowCardinality(String),
    before_content           String,
    after_content            String,
    before_version           UInt32,
    after_version            UInt32,
    before_confidence        Float64,
    after_confidence         Float64,
    before_importance        Float64,
    after_importance         Float64,
    before_source_count      UInt32,
    after_source_count       UInt32,
    before_pinned            Bool,
    after_pinned             Bool,
    before_conflict_with     Array(String),
    after_conflict_with      Array(String),
    source_message_ids       Array(String),
    source_event_ids         Array(String),
    memory_created_at        DateTime64(3, 'UTC'),
    causation_ids            Array(String),
    correlation_id           String
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, user_id, memory_id, occurred_at, event_id);

-- L2: every versioned session summary; section items redacted.
CREATE TABLE IF NOT EXISTS summary_snapshots
(
    event_id                String,
    occurred_at             DateTime64(3, 'UTC'),
    tenant_id               LowCardinality(String),
    user_id                 String,
    agent_id                LowCardinality(String),
    session_id              String,
    summary_id              String,
    version                 UInt32,
    range_start_message_id  String,
    range_end_message_id    String,
    source_message_count    UInt32,
    total_message_count     UInt32,
    source_message_ids      Array(String),
    current_topic           Array(String),
    confirmed_facts         Array(String),
    todo_items              Array(String),
    user_constraints        Array(String),
    open_questions          Array(String),
    latency_ms              Float64,
    status                  LowCardinality(String),
    error                   String,
    summarizer              LowCardinality(String),
    causation_ids           Array(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, user_id, session_id, version, event_id);

-- Guard audit: which rule fired, what it did; a hash of the original, never the secret.
CREATE TABLE IF NOT EXISTS guard_audit
(
    event_id         String,
    occurred_at      DateTime64(3, 'UTC'),
    tenant_id        LowCardinality(String),
    user_id          String,
    session_id       String,
    message_id       String,
    rule             LowCardinality(String),
    action           LowCardinality(String),
    memory_type      LowCardinality(String),
    original_sha256  String,
    detail           String,
    causation_ids    Array(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, rule, event_id);

-- One row per recall (every field of RecallServed); feedback joins on recall_id.
CREATE TABLE IF NOT EXISTS recalls
(
    event_id                  String,
    occurred_at               DateTime64(3, 'UTC'),
    tenant_id                 LowCardinality(String),
    user_id                   String,
    agent_id                  LowCardinality(String),
    session_id                String,
    message_id                String,
    recall_id                 String,
    question                  String,
    memory_enabled            Bool,
    memory_injected           Bool,
    retrieved_count           UInt32,
    injected_count            UInt32,
    retrieved_ids             Array(String),
    injected_ids              Array(String),
    retrieval_latency_ms      Float64,
    context_build_latency_ms  Float64,
    recent_message_count      UInt32,
    long_term_count           UInt32,
    global_count              UInt32,
    summary_present           Bool,
    top_relevance             Float64,
    avg_relevance             Float64,
    deadline_exceeded         Bool,
    correlation_id            String
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, agent_id, occurred_at, event_id);

-- Verdicts on recalls: 0 none, 1 good, 2 bad. The latest per recall wins.
CREATE TABLE IF NOT EXISTS feedback
(
    event_id        String,
    occurred_at     DateTime64(3, 'UTC'),
    tenant_id       LowCardinality(String),
    user_id         String,
    recall_id       String,
    rating          UInt8,
    reason          String,
    remark          String,
    causation_ids   Array(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, user_id, recall_id, event_id);

-- One row per model request attempt.
CREATE TABLE IF NOT EXISTS llm_calls
(
    event_id        String,
    occurred_at     DateTime64(3, 'UTC'),
    tenant_id       LowCardinality(String),
    user_id         String,
    agent_id        LowCardinality(String),
    session_id      String,
    processor       LowCardinality(String),
    task            LowCardinality(String),
    model           LowCardinality(String),
    attempt         UInt16,
    outcome         LowCardinality(String),
    tokens_in       UInt32,
    tokens_out      UInt32,
    latency_ms      Float64,
    error           String,
    dropped_items   UInt32,
    causation_ids   Array(String),
    correlation_id  String
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, model, occurred_at, event_id);

-- Inputs that could not be processed. The raw payload is redacted (and hashed).
CREATE TABLE IF NOT EXISTS dead_letters
(
    event_id        String,
    occurred_at     DateTime64(3, 'UTC'),
    tenant_id       LowCardinality(String),
    user_id         String,
    source_topic    LowCardinality(String),
    reason          String,
    raw             String,
    raw_chars       UInt32,
    raw_sha256      String,
    causation_ids   Array(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (source_topic, occurred_at, event_id);

-- How far into an event log the tables are complete (max seq wins). Not an analyst table.
-- One row per forget: what was erased (counts, ids, who asked, when), never any content.
-- keys_destroyed > 0: the owner's data key is gone, every sealed text of theirs is unreadable.
CREATE TABLE IF NOT EXISTS erasures
(
    event_id         String,
    occurred_at      DateTime64(3, 'UTC'),
    tenant_id        LowCardinality(String),
    user_id          String,
    request_id       String,
    scope            LowCardinality(String),
    requested_by     String,
    memories_erased  UInt32,
    memory_ids       Array(String),
    keys_destroyed   UInt32,
    causation_ids    Array(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, user_id, event_id);

CREATE TABLE IF NOT EXISTS projection_cursor
(
    source  String,
    seq     UInt64
)
ENGINE = ReplacingMergeTree(seq)
ORDER BY source;

-- Each recall with its latest feedback (rating 0 and empty reason when none was given).
CREATE VIEW IF NOT EXISTS recall_observations AS
SELECT
    r.*,
    f.feedback_rating,
    f.feedback_reason,
    f.feedback_remark,
    f.feedback_at
FROM recalls AS r FINAL
LEFT JOIN
(
    SELECT
        tenant_id,
        user_id,
        recall_id,
        argMax(rating, (occurred_at, event_id)) AS feedback_rating,
        argMax(reason, (occurred_at, event_id)) AS feedback_reason,
        argMax(remark, (occurred_at, event_id)) AS feedback_remark,
        max(occurred_at) AS feedback_at
    FROM feedback FINAL
    GROUP BY tenant_id, user_id, recall_id
) AS f ON f.tenant_id = r.tenant_id AND f.user_id = r.user_id AND f.recall_id = r.recall_id;

-- Consolidation's decision for each guarded candidate: the relation it judged, by whom,
-- why, and what it did to which memory (user commands and decay are not merge decisions).
CREATE VIEW IF NOT EXISTS merge_decisions AS
SELECT
    c.event_id AS decision_event_id,
    c.occurred_at AS occurred_at,
    c.tenant_id AS tenant_id,
    c.user_id AS user_id,
    c.causation_ids[1] AS proposal_event_id,
    p.content AS candidate_content,
    p.extractor AS extractor,
    c.memory_id AS memory_id,
    c.memory_type AS memory_type,
    c.relation AS relation,
    c.judge AS judge,
    c.reason AS reason,
    c.change AS change,
    c.before_content AS before_content,
    c.after_content AS after_content
FROM memory_changes AS c FINAL
LEFT JOIN memory_proposals AS p FINAL
    ON p.tenant_id = c.tenant_id AND p.user_id = c.user_id AND p.event_id = c.causation_ids[1]
WHERE c.relation NOT IN ('user', 'decay');
