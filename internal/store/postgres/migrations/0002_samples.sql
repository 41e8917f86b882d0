-- fathom results store on PostgreSQL, schema 2: server and OS samples, and stalls
-- (the SQLite store's 0002, translated).
CREATE TABLE sample_sources (
    run_id      bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    server      text NOT NULL DEFAULT '{}',
    interval_ns bigint NOT NULL DEFAULT 0,
    skipped     bigint NOT NULL DEFAULT 0
);

CREATE TABLE metrics (
    run_id    bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    id        bigint NOT NULL,
    name      text NOT NULL,
    collector text NOT NULL,
    kind      text NOT NULL,
    unit      text NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, id),
    UNIQUE (run_id, name)
);

CREATE TABLE samples (
    run_id    bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx       bigint NOT NULL,
    collector text NOT NULL,
    source    text NOT NULL,
    at_ns     bigint NOT NULL,
    took_ns   bigint NOT NULL,
    status    text NOT NULL,
    error     text NOT NULL DEFAULT '',
    reset     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (run_id, idx, collector)
);

CREATE TABLE metric_points (
    run_id    bigint NOT NULL,
    metric_id bigint NOT NULL,
    idx       bigint NOT NULL,
    value     double precision NOT NULL,
    rate      double precision,
    reset     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (run_id, metric_id, idx),
    FOREIGN KEY (run_id, metric_id) REFERENCES metrics (run_id, id) ON DELETE CASCADE
);

CREATE TABLE stalls (
    run_id    bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    num       bigint NOT NULL,
    first_idx bigint NOT NULL,
    last_idx  bigint NOT NULL,
    start_ns  bigint NOT NULL,
    end_ns    bigint NOT NULL,
    stall     text NOT NULL,
    PRIMARY KEY (run_id, num)
);

CREATE TABLE stall_params (
    run_id bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    params text NOT NULL
);
