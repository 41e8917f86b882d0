-- fathom results store, schema 5: the process writing a run, and a run's warnings.
-- A run (or experiment) left "running" by a process that is gone is shown as
-- interrupted (process gone): host and pid say which process, process tells it apart
-- from a later one given the same pid (boot id and start time).
ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN process TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]'; -- JSON array of one-line warnings
ALTER TABLE experiments ADD COLUMN process TEXT NOT NULL DEFAULT '';
