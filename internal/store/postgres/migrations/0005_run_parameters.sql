-- fathom results store on PostgreSQL, schema 5: run parameters as fields (the SQLite
-- store's 0005).
ALTER TABLE runs ADD COLUMN query_mode text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN max_tries bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN latency_limit_ns bigint NOT NULL DEFAULT 0;
ALTER TABLE experiments ADD COLUMN judge text NOT NULL DEFAULT '';
