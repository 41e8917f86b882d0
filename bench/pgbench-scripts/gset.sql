-- a teller's branch read back with \gset; the update runs when an exponential draw
-- over 1..10 (parameter 2) exceeds 5: P = (e^-1 - e^-2) / (1 - e^-2) = 0.269
\set tid random(1, 10 * :scale)
SELECT bid AS b FROM pgbench_tellers WHERE tid = :tid \gset
\set x random_exponential(1, 10, 2.0)
SELECT sum(abalance) FROM pgbench_accounts WHERE bid = :b AND aid <= :x;
\if :x > 5
UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = :tid;
\endif
