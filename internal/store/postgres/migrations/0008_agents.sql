-- fathom results store on PostgreSQL, schema 8: agents on several machines making one
-- run (issue 17). Times are nanoseconds since the epoch on the store's clock; agents
-- read it rather than their own.
CREATE TABLE agent_jobs (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text NOT NULL,
    agents      integer NOT NULL CHECK (agents > 0),
    spec        text NOT NULL,
    state       text NOT NULL DEFAULT 'waiting',
    run_id      bigint REFERENCES runs (id) ON DELETE SET NULL,
    start_ns    bigint,
    reason      text NOT NULL DEFAULT '',
    created_ns  bigint NOT NULL,
    beat_ns     bigint NOT NULL
);
-- At most one unfinished job of a name: agents started with --run NAME find it.
CREATE UNIQUE INDEX agent_jobs_open_name ON agent_jobs (name) WHERE state <> 'finished';

CREATE TABLE agent_members (
    job_id      bigint NOT NULL REFERENCES agent_jobs (id) ON DELETE CASCADE,
    idx         integer NOT NULL,
    host        text NOT NULL,
    version     text NOT NULL,
    pid         integer NOT NULL,
    offset_ns   bigint NOT NULL,
    rtt_ns      bigint NOT NULL,
    clients     integer NOT NULL,
    rate        double precision NOT NULL,
    seed        bigint NOT NULL,
    state       text NOT NULL DEFAULT 'registered',
    reason      text NOT NULL DEFAULT '',
    joined_ns   bigint NOT NULL,
    beat_ns     bigint NOT NULL,
    ended_ns    bigint,
    PRIMARY KEY (job_id, idx)
);

CREATE TABLE agent_intervals (
    job_id      bigint NOT NULL,
    agent       integer NOT NULL,
    idx         bigint NOT NULL,
    start_ns    bigint NOT NULL,
    end_ns      bigint NOT NULL,
    warmup      boolean NOT NULL,
    reconnects  bigint NOT NULL DEFAULT 0,
    types       bytea NOT NULL,
    PRIMARY KEY (job_id, idx, agent),
    FOREIGN KEY (job_id, agent) REFERENCES agent_members (job_id, idx) ON DELETE CASCADE
);
