#!/usr/bin/env bash
# Runs pgbench and fathom on the same pgbench scripts, one after the other on the same
# PostgreSQL, and compares what the server saw: the calls of each statement from
# pg_stat_statements (joined by queryid) as shares of all script statements, and the
# throughput each tool reports. Cases: the three built-ins, a weighted mix of two, and
# the custom scripts in bench/pgbench-scripts/ (\if branches, random_zipfian,
# random_exponential, \gset).
#
# Runs on a throwaway instance (fathom instance) with pg_stat_statements preloaded,
# unless PGURL names a server that has it (shared_preload_libraries).
#
# Environment: PGURL, CLIENTS=4, SECONDS_PER_RUN=10, SCALE=10, MODE=prepared
set -euo pipefail
cd "$(dirname "$0")/.."

CLIENTS=${CLIENTS:-4}
SECS=${SECONDS_PER_RUN:-10}
SCALE=${SCALE:-10}
MODE=${MODE:-prepared}
WORK=$(mktemp -d); chmod 755 "$WORK"
export FATHOM_INSTANCE_DIR=$WORK/instances
FATHOM=./bin/fathom
go build -o "$FATHOM" ./cmd/fathom

if [ -z "${PGURL:-}" ]; then
	$FATHOM instance start --kind postgres --name pgss --set shared_preload_libraries=pg_stat_statements \
		--set pg_stat_statements.track_utility=off --set max_connections=100 >/dev/null
	PGURL=$($FATHOM instance dsn pgss)
	trap '$FATHOM instance stop pgss >/dev/null; rm -rf "$WORK"' EXIT
else
	trap 'rm -rf "$WORK"' EXIT
fi
# libpq takes the URL too (pgbench and psql accept a connection string as dbname).
PSQL=(psql -X -q -At -d "$PGURL")
"${PSQL[@]}" -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements'
pgbench -q -i -s "$SCALE" -d "$PGURL" >/dev/null 2>&1 || pgbench -i -s "$SCALE" "$PGURL" >/dev/null 2>&1

snapshot() { # table name: keep this run's statement calls
	"${PSQL[@]}" -c "DROP TABLE IF EXISTS $1; CREATE TABLE $1 AS SELECT queryid, query, calls FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND query ~* 'pgbench_' AND query !~* '(count\(\*\) FROM pgbench_branches|vacuum|truncate|pg_stat|information_schema|pg_catalog|to_regclass)'"
}

printf '| case | statement | pgbench share | fathom share | pgbench tps | fathom tps |\n|---|---|---|---|---|---|\n'
# Before each tool's run, what pgbench does before its own (without -n): vacuum the
# branches and tellers and empty the history, so that neither run inherits the other's
# dead rows. The tools take turns going first.
fresh() {
	"${PSQL[@]}" -c 'VACUUM pgbench_branches' -c 'VACUUM pgbench_tellers' -c 'TRUNCATE pgbench_history' \
		-c 'SELECT pg_stat_statements_reset()' >/dev/null
}
run_pgbench() {
	fresh
	ptps=$(pgbench -n -M "$MODE" -c "$CLIENTS" -j 2 -T "$SECS" "$@" "$PGURL" 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p' | tail -1)
	snapshot cmp_pgbench
}
run_fathom() {
	fresh
	ftps=$($FATHOM run -M "$MODE" -c "$CLIENTS" -T "$SECS" "$@" --target "$PGURL" --store "$WORK/f.db" \
		--no-collect --json 2>/dev/null | jq -r '.tps' | head -1)
	snapshot cmp_fathom
}
turn=0
run_case() { # name, then the script flags (the same for both tools)
	local name=$1; shift
	local ptps ftps
	if [ $((turn++ % 2)) = 0 ]; then run_pgbench "$@"; run_fathom "$@"; else run_fathom "$@"; run_pgbench "$@"; fi
	"${PSQL[@]}" -F ' | ' -c "
		WITH p AS (SELECT queryid, query, calls::float8 / sum(calls) OVER () AS s FROM cmp_pgbench),
		     f AS (SELECT queryid, query, calls::float8 / sum(calls) OVER () AS s FROM cmp_fathom)
		SELECT '| $name', left(regexp_replace(coalesce(p.query, f.query), '\s+', ' ', 'g'), 60),
		       to_char(coalesce(p.s, 0) * 100, 'FM990.0') || '%', to_char(coalesce(f.s, 0) * 100, 'FM990.0') || '%',
		       '$ptps', '$ftps |'
		FROM p FULL JOIN f USING (queryid) ORDER BY coalesce(p.s, f.s) DESC"
}

run_case tpcb-like -b tpcb-like
run_case simple-update -N
run_case select-only -S
run_case mix -b select-only@8 -b tpcb-like@2
run_case branchy -f bench/pgbench-scripts/branchy.sql
run_case gset -f bench/pgbench-scripts/gset.sql
