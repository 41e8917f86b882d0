-- fathom results store on PostgreSQL, schema 10: a run's first distinct errors
-- (distinct by class, code and message; issue 24), in the order the run first met
-- them, each with where and when it was first met and how often it happened (count:
-- in the measured intervals; warmup_count: in the warm-up). Written as each is first
-- met, and again with the final counts when the run ends.
CREATE TABLE run_errors (
    run_id       bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq          integer NOT NULL,
    class        text NOT NULL,
    code         text NOT NULL DEFAULT '',
    message      text NOT NULL,
    txn          text NOT NULL DEFAULT '',
    place        text NOT NULL DEFAULT '',
    client       integer NOT NULL DEFAULT 0,
    at_ns        bigint NOT NULL DEFAULT 0,
    count        bigint NOT NULL DEFAULT 0,
    warmup_count bigint NOT NULL DEFAULT 0,
    aborted      boolean NOT NULL DEFAULT false,
    PRIMARY KEY (run_id, seq)
);
