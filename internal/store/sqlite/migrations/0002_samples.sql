-- fathom results store, schema 2: server and OS samples on the run's clock, and stalls.

-- What the sampler learnt about the server when sampling began (JSON: kind, flavor,
-- version, data directory, local or not, disk devices, governing settings, notes),
-- and the sampling options.
CREATE TABLE sample_sources (
    run_id   INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    server   TEXT NOT NULL DEFAULT '{}',
    interval_ns INTEGER NOT NULL DEFAULT 0,
    skipped  INTEGER NOT NULL DEFAULT 0  -- boundaries where sampling could not keep up
);

-- Every metric a run's collectors reported, numbered per run.
CREATE TABLE metrics (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    id        INTEGER NOT NULL,
    name      TEXT NOT NULL,     -- pg.xact_commit, mysql.Innodb_log_waits, os.disk.await_ms …
    collector TEXT NOT NULL,
    kind      TEXT NOT NULL,     -- counter | gauge
    unit      TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, id),
    UNIQUE (run_id, name)
) WITHOUT ROWID;

-- One row per collector per sample: mysqld_exporter's success flag with the error.
-- idx is the report interval the sample closes (-1: the baseline before the first).
CREATE TABLE samples (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx       INTEGER NOT NULL,
    collector TEXT NOT NULL,
    source    TEXT NOT NULL,     -- server kind or os
    at_ns     INTEGER NOT NULL,  -- since the run's start: when the readings stand
    took_ns   INTEGER NOT NULL,
    status    TEXT NOT NULL,     -- ok | failed | timeout | skipped
    error     TEXT NOT NULL DEFAULT '',
    reset     INTEGER NOT NULL DEFAULT 0,  -- the collector's counters restarted
    PRIMARY KEY (run_id, idx, collector)
) WITHOUT ROWID;

-- Readings. value is the raw value; rate (per second) is set for counters that have
-- one: NULL on a counter's first reading and where reset = 1 (never negative).
CREATE TABLE metric_points (
    run_id    INTEGER NOT NULL,
    metric_id INTEGER NOT NULL,
    idx       INTEGER NOT NULL,
    value     REAL NOT NULL,
    rate      REAL,
    reset     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, metric_id, idx),
    FOREIGN KEY (run_id, metric_id) REFERENCES metrics (run_id, id) ON DELETE CASCADE
) WITHOUT ROWID;

-- Stalls found by analysis (a cache of a pure function of the rows above and the
-- intervals; rewritten when analysis is re-run with other thresholds).
CREATE TABLE stalls (
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    num         INTEGER NOT NULL,   -- 1, 2 … in time order
    first_idx   INTEGER NOT NULL,   -- intervals first_idx..last_idx
    last_idx    INTEGER NOT NULL,
    start_ns    INTEGER NOT NULL,
    end_ns      INTEGER NOT NULL,
    stall       TEXT NOT NULL,      -- JSON: the whole store.Stall
    PRIMARY KEY (run_id, num)
) WITHOUT ROWID;

CREATE TABLE stall_params (
    run_id  INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    params  TEXT NOT NULL       -- JSON: thresholds used
);
