-- fathom results store, schema 9: a run's first distinct errors (distinct by class,
-- code and message; issue 24), in the order the run first met them, each with where
-- and when it was first met and how often it happened (count: in the measured
-- intervals; warmup_count: in the warm-up). Written as each is first met, and again
-- with the final counts when the run ends.
CREATE TABLE run_errors (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    class        TEXT NOT NULL,
    code         TEXT NOT NULL DEFAULT '',
    message      TEXT NOT NULL,
    txn          TEXT NOT NULL DEFAULT '',
    place        TEXT NOT NULL DEFAULT '',
    client       INTEGER NOT NULL DEFAULT 0,
    at_ns        INTEGER NOT NULL DEFAULT 0,
    count        INTEGER NOT NULL DEFAULT 0,
    warmup_count INTEGER NOT NULL DEFAULT 0,
    aborted      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, seq)
);
