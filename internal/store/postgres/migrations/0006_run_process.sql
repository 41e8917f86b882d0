-- fathom results store on PostgreSQL, schema 6: the process writing a run, and a
-- run's warnings (the SQLite store's 0006). On PostgreSQL the writer also holds an
-- advisory lock on its run or experiment while it runs, so a writer on another machine
-- that died is seen as gone too.
ALTER TABLE runs ADD COLUMN pid bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN process text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN warnings text NOT NULL DEFAULT '[]';
ALTER TABLE experiments ADD COLUMN process text NOT NULL DEFAULT '';
