-- fathom results store, schema 8: hooks that fire during a run (during_run, at an
-- offset into it) keep the moment they fired on the run's clock: nanoseconds since the
-- start of its first interval, the origin of its intervals and samples. NULL for hooks
-- before or after runs.
ALTER TABLE experiment_hooks ADD COLUMN at_ns INTEGER;
