-- five point reads of neighbouring accounts sent as one pipeline (one round trip)
\set aid random(1, 100000 * :scale - 4)
\startpipeline
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid + 1;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid + 2;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid + 3;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid + 4;
\endpipeline
