-- 70% point selects, 20% updates, 10% history counts, on zipfian keys
\set aid random_zipfian(1, 100000 * :scale, 1.1)
\set r random(1, 100)
\if :r <= 70
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
\elif :r <= 90
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
\else
SELECT count(*) FROM pgbench_history WHERE aid = :aid;
\endif
