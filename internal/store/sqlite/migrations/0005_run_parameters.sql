-- fathom results store, schema 5: every run parameter that can change a result is a
-- field of its own, so that `compare` lists it among the differences (before, query
-- mode, --max-tries and -L were only inside the command string), and an experiment
-- keeps the transaction type or client group its cells are judged by.
ALTER TABLE runs ADD COLUMN query_mode TEXT NOT NULL DEFAULT '';       -- prepared|simple; '' for runs from before schema 5
ALTER TABLE runs ADD COLUMN max_tries INTEGER NOT NULL DEFAULT 0;      -- tries per transaction; 0: not recorded
ALTER TABLE runs ADD COLUMN latency_limit_ns INTEGER NOT NULL DEFAULT 0; -- open loop -L; 0: none
ALTER TABLE experiments ADD COLUMN judge TEXT NOT NULL DEFAULT '';     -- transaction type or group ('' every transaction)
