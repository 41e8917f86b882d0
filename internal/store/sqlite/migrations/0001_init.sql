-- fathom results store, schema 1.
CREATE TABLE runs (
    id             INTEGER PRIMARY KEY,
    uuid           TEXT NOT NULL UNIQUE,
    tool_version   TEXT NOT NULL,
    command        TEXT NOT NULL,
    workload       TEXT NOT NULL,
    options        TEXT NOT NULL DEFAULT '{}',  -- JSON object
    seed           INTEGER NOT NULL,
    target_kind    TEXT NOT NULL,
    target         TEXT NOT NULL,               -- redacted DSN
    server_version TEXT NOT NULL DEFAULT '',
    settings       TEXT NOT NULL DEFAULT '{}',  -- JSON object
    host           TEXT NOT NULL DEFAULT '{}',  -- JSON object
    clients        INTEGER NOT NULL,
    rate           REAL NOT NULL DEFAULT 0,
    duration_ns    INTEGER NOT NULL DEFAULT 0,
    transactions   INTEGER NOT NULL DEFAULT 0,
    warmup_ns      INTEGER NOT NULL DEFAULT 0,
    interval_ns    INTEGER NOT NULL,
    txn_types      TEXT NOT NULL DEFAULT '[]',  -- JSON array
    started_at     INTEGER NOT NULL,            -- unix ns, UTC
    ended_at       INTEGER,                     -- unix ns, NULL while running
    status         TEXT NOT NULL,               -- running|complete|interrupted|failed
    reason         TEXT NOT NULL DEFAULT '',
    summary        TEXT                         -- JSON, written at the end
);
CREATE INDEX runs_workload ON runs (workload, started_at);

CREATE TABLE run_labels (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX run_labels_kv ON run_labels (key, value);

CREATE TABLE intervals (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx        INTEGER NOT NULL,
    start_ns   INTEGER NOT NULL,  -- since the run's start
    end_ns     INTEGER NOT NULL,
    warmup     INTEGER NOT NULL,
    reconnects INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;

CREATE TABLE interval_types (
    run_id         INTEGER NOT NULL,
    idx            INTEGER NOT NULL,
    type           TEXT NOT NULL,
    ok             INTEGER NOT NULL,
    failed         INTEGER NOT NULL,
    retries        INTEGER NOT NULL,
    statements     INTEGER NOT NULL,
    late           INTEGER NOT NULL,
    dropped        INTEGER NOT NULL,
    errors         TEXT NOT NULL DEFAULT '{}',  -- JSON object class -> count, zero classes omitted
    latency        BLOB,                        -- HdrHistogram V2 compressed, response time
    service        BLOB,                        -- open loop service time
    failed_latency BLOB,
    PRIMARY KEY (run_id, idx, type),
    FOREIGN KEY (run_id, idx) REFERENCES intervals (run_id, idx) ON DELETE CASCADE
) WITHOUT ROWID;
