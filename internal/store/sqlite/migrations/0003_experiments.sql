-- fathom results store, schema 3: experiments (plans run over a matrix of cells).
CREATE TABLE experiments (
    id           INTEGER PRIMARY KEY,
    uuid         TEXT NOT NULL UNIQUE,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    plan_path    TEXT NOT NULL,              -- as given on the command line
    plan_dir     TEXT NOT NULL,              -- absolute: workload files and hooks are relative to it
    plan         TEXT NOT NULL,              -- the plan file's text, passwords masked
    axes         TEXT NOT NULL DEFAULT '[]', -- JSON [{"name", "values": [...]}] in plan order
    repetitions  INTEGER NOT NULL,
    run_order    TEXT NOT NULL,              -- interleaved|random|sequential
    target       TEXT NOT NULL,              -- redacted DSN, or "instance postgres 15.14"
    tool_version TEXT NOT NULL,
    host         TEXT NOT NULL DEFAULT '',   -- hostname of the process running it
    pid          INTEGER NOT NULL DEFAULT 0, -- that process, while status is running
    created_at   INTEGER NOT NULL,           -- unix ns, UTC
    ended_at     INTEGER,
    status       TEXT NOT NULL,              -- running|complete|failed|interrupted
    reason       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX experiments_name ON experiments (name, id);

-- One row per combination of axis values.
CREATE TABLE experiment_cells (
    experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    cell          INTEGER NOT NULL,           -- from 0, in matrix order (last axis fastest)
    key           TEXT NOT NULL,              -- "clients=4 synchronous_commit=off"
    coords        TEXT NOT NULL DEFAULT '[]', -- JSON [{"axis", "value"}] in axis order
    params        TEXT NOT NULL DEFAULT '{}', -- JSON: resolved run options, workload options, settings
    PRIMARY KEY (experiment_id, cell)
) WITHOUT ROWID;

-- The schedule: one row per cell and repetition, in the order they run.
CREATE TABLE experiment_slots (
    experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,            -- position in the schedule, from 0
    cell          INTEGER NOT NULL,
    repetition    INTEGER NOT NULL,            -- from 1
    status        TEXT NOT NULL DEFAULT 'planned', -- planned|running|complete|failed|interrupted
    reason        TEXT NOT NULL DEFAULT '',
    attempts      INTEGER NOT NULL DEFAULT 0,  -- a resumed experiment runs an interrupted slot again
    started_at    INTEGER,
    ended_at      INTEGER,
    server_change TEXT NOT NULL DEFAULT '',    -- what was done to the server: started, reloaded, restarted (why)
    effective     TEXT NOT NULL DEFAULT '[]',  -- JSON: settings read back from the server before the run
    PRIMARY KEY (experiment_id, seq),
    FOREIGN KEY (experiment_id, cell) REFERENCES experiment_cells (experiment_id, cell)
) WITHOUT ROWID;

-- The runs of each slot. With several instances a slot has one run per instance
-- (instance 1..N) and their aggregate (instance 0); otherwise one run (instance 0).
CREATE TABLE experiment_runs (
    run_id        INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    experiment_id INTEGER NOT NULL,
    seq           INTEGER NOT NULL,
    attempt       INTEGER NOT NULL,
    instance      INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (experiment_id, seq) REFERENCES experiment_slots (experiment_id, seq) ON DELETE CASCADE
);
CREATE INDEX experiment_runs_slot ON experiment_runs (experiment_id, seq, attempt);

-- What each hook did: before/after the experiment (seq NULL) or around a slot's run.
CREATE TABLE experiment_hooks (
    id            INTEGER PRIMARY KEY,
    experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    seq           INTEGER,
    attempt       INTEGER NOT NULL DEFAULT 0,
    phase         TEXT NOT NULL,              -- before_experiment|before_run|after_run|after_experiment
    idx           INTEGER NOT NULL,           -- position in its phase, from 1
    kind          TEXT NOT NULL,              -- sql|shell
    command       TEXT NOT NULL,
    server        TEXT NOT NULL DEFAULT '',   -- where SQL ran (redacted)
    exit_code     INTEGER NOT NULL,
    ok            INTEGER NOT NULL,
    output        TEXT NOT NULL DEFAULT '',
    error         TEXT NOT NULL DEFAULT '',
    started_at    INTEGER NOT NULL,
    elapsed_ns    INTEGER NOT NULL
);
CREATE INDEX experiment_hooks_slot ON experiment_hooks (experiment_id, seq);
