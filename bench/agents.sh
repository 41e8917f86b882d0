#!/usr/bin/env bash
# One process against three agents (issue 17): the same workload and total clients on
# the same server, alternating, ROUNDS times. Prints each run's throughput and
# percentiles, and what the coordination costs: the coordinator's CPU time per
# interval and the agents' CPU time per transaction next to the single process's.
#
# Runs on a throwaway PostgreSQL (fathom instance) that holds both the target and the
# results store (as the single process's store too), unless PGURL names a server;
# STORE then defaults to a database "fathom_agents_bench" on it.
#
# Environment: PGURL, WORKLOAD=tpcb-select, CLIENTS=12, SECONDS_PER_RUN=20, ROUNDS=3,
# INTERVAL=1, SCALE=10
set -euo pipefail
cd "$(dirname "$0")/.."

WORKLOAD=${WORKLOAD:-tpcb-select}
CLIENTS=${CLIENTS:-12}
SECS=${SECONDS_PER_RUN:-20}
ROUNDS=${ROUNDS:-3}
INTERVAL=${INTERVAL:-1}
SCALE=${SCALE:-10}
WORK=$(mktemp -d); chmod 755 "$WORK"
export FATHOM_INSTANCE_DIR=$WORK/instances
FATHOM=$WORK/fathom
go build -o "$FATHOM" ./cmd/fathom

if [ -z "${PGURL:-}" ]; then
	$FATHOM instance start --kind postgres --name agents --set max_connections=200 >/dev/null
	PGURL=$($FATHOM instance dsn agents)
	trap '$FATHOM instance stop agents >/dev/null; rm -rf "$WORK"' EXIT
else
	trap 'rm -rf "$WORK"' EXIT
fi
STORE=${STORE:-$(echo "$PGURL" | sed -E 's#^(postgres(ql)?://[^/]*)/[^?]*#\1/fathom_agents_bench#')}
$FATHOM prepare --workload "$WORKLOAD" --scale "$SCALE" --target "$PGURL" >/dev/null

timed() { # out-prefix command…: runs it, keeps stdout, stderr and user+system CPU seconds
	local p=$1; shift
	/usr/bin/time -f '%U %S' -o "$p.cpu" "$@" >"$p.out" 2>"$p.err" || { cat "$p.err" >&2; return 1; }
}
cpu() { awk '{print $1 + $2}' "$1.cpu"; }
field() { # json-file jq-like path (python3, no jq needed)
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$1" "$2"
}

printf '%-7s %5s %10s %8s %8s %8s %10s %14s %14s\n' mode round tps p50_ms p99_ms max_ms intervals "client_us/tx" "coord_ms/intv"
for r in $(seq 1 "$ROUNDS"); do
	common=(--workload "$WORKLOAD" -c "$CLIENTS" -T "$SECS" -P "$INTERVAL" --json --store "$STORE" --target "$PGURL" --label bench=agents)
	timed "$WORK/one" $FATHOM run "${common[@]}" --label mode=one
	n=$(field "$WORK/one.out" "['transactions']")
	printf '%-7s %5s %10s %8s %8s %8s %10s %14.1f %14s\n' one "$r" "$(field "$WORK/one.out" "['tps']")" \
		"$(field "$WORK/one.out" "['latency_ms']['p50']")" "$(field "$WORK/one.out" "['latency_ms']['p99']")" \
		"$(field "$WORK/one.out" "['latency_ms']['max']")" "$(field "$WORK/one.out" "['intervals']")" \
		"$(echo "$(cpu "$WORK/one") * 1000000 / $n" | bc -l)" -

	name="bench-$$-$r"
	pids=()
	for i in 0 1 2; do
		timed "$WORK/agent$i" $FATHOM agent --store "$STORE" --run "$name" --index "$i" --wait 2m &
		pids+=($!)
	done
	timed "$WORK/co" $FATHOM run "${common[@]}" --agents 3 --name "$name" --label mode=agents
	wait "${pids[@]}"
	n=$(field "$WORK/co.out" "['transactions']")
	iv=$(field "$WORK/co.out" "['intervals']")
	acpu=$(echo "$(cpu "$WORK/agent0") + $(cpu "$WORK/agent1") + $(cpu "$WORK/agent2")" | bc -l)
	printf '%-7s %5s %10s %8s %8s %8s %10s %14.1f %14.2f\n' agents "$r" "$(field "$WORK/co.out" "['tps']")" \
		"$(field "$WORK/co.out" "['latency_ms']['p50']")" "$(field "$WORK/co.out" "['latency_ms']['p99']")" \
		"$(field "$WORK/co.out" "['latency_ms']['max']")" "$iv" \
		"$(echo "$acpu * 1000000 / $n" | bc -l)" "$(echo "$(cpu "$WORK/co") * 1000 / $iv" | bc -l)"
done
