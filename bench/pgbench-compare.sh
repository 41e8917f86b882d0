#!/usr/bin/env bash
# fathom beside pgbench on the same scripts, one after the other on the same
# PostgreSQL (the tools take turns going first): throughput, latency average and
# standard deviation, and -r's average latency of every command.
#
# tps and the latency average are each tool's own report. The standard deviation is
# computed the same way for both, from their -l per-transaction logs (pgbench's format,
# which fathom writes too), because fathom's summary gives percentiles, not a standard
# deviation. Before each run, what pgbench does before its own: vacuum the branches and
# tellers and empty the history; both then run with -n.
#
# Each case runs ROUNDS times per tool, alternating, and every figure is the median
# over the rounds: on a busy machine single runs swing by several times.
#
# Environment: PGURL (default: a throwaway instance), CLIENTS=2, SECONDS_PER_RUN=10,
# SCALE=10, MODE=prepared, JOBS=$CLIENTS (pgbench -j), ROUNDS=3.
set -euo pipefail
cd "$(dirname "$0")/.."

CLIENTS=${CLIENTS:-2}
SECS=${SECONDS_PER_RUN:-10}
SCALE=${SCALE:-10}
MODE=${MODE:-prepared}
JOBS=${JOBS:-$CLIENTS}
ROUNDS=${ROUNDS:-3}
WORK=$(mktemp -d); chmod 755 "$WORK"
export FATHOM_INSTANCE_DIR=$WORK/instances
FATHOM=./bin/fathom
go build -o "$FATHOM" ./cmd/fathom

if [ -z "${PGURL:-}" ]; then
	$FATHOM instance start --kind postgres --name cmp --set max_connections=100 >/dev/null
	PGURL=$($FATHOM instance dsn cmp)
	trap '$FATHOM instance stop cmp >/dev/null; rm -rf "$WORK"' EXIT
else
	trap 'rm -rf "$WORK"' EXIT
fi
PSQL=(psql -X -q -At -d "$PGURL")
pgbench -q -i -s "$SCALE" "$PGURL" >/dev/null 2>&1

fresh() {
	"${PSQL[@]}" -c 'VACUUM pgbench_branches' -c 'VACUUM pgbench_tellers' -c 'TRUNCATE pgbench_history' >/dev/null
}
# sd FILES…: the standard deviation of the latencies (ms) of a pgbench-format log.
sd() {
	cat "$@" | awk '$3 ~ /^[0-9]+$/ { n++; s += $3; q += $3 * $3 } END { if (n > 1) printf "%.3f", sqrt((q - s * s / n) / (n - 1)) / 1000 }'
}
run_pgbench() { # prints "tps avg sd", then the -r averages one a line
	fresh
	rm -f "$WORK"/p.*
	local out
	out=$(pgbench -n -r -l --log-prefix "$WORK/p" -M "$MODE" -c "$CLIENTS" -j "$JOBS" -T "$SECS" "$@" "$PGURL" 2>/dev/null)
	echo "$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out") $(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out") $(sd "$WORK"/p.*)"
	sed -n '/^statement latencies/,$p' <<<"$out" | sed -n 's/^ *\([0-9.][0-9.]*\)  *[0-9][0-9]*  *\(.*\)$/\1\t\2/p'
}
run_fathom() {
	fresh
	rm -f "$WORK"/f.*
	local js
	js=$($FATHOM run -n -r -l --log-prefix "$WORK/f" -M "$MODE" -c "$CLIENTS" -T "$SECS" "$@" --target "$PGURL" \
		--store "$WORK/f.db" --no-collect --json -q 2>/dev/null)
	echo "$(jq -r '.tps' <<<"$js") $(jq -r '.latency_ms.mean' <<<"$js") $(sd "$WORK"/f.*)"
	jq -r '.per_command[] | "\(.latency_ms.mean)"' <<<"$js"
}

LOAD0=$(cut -d" " -f1-3 /proc/loadavg)
turn=0
mkdir "$WORK/res"
run_case() { # name, then the script flags (the same for both tools)
	local name=$1; shift
	for r in $(seq "$ROUNDS"); do
		if [ $((turn++ % 2)) = 0 ]; then
			run_pgbench "$@" >"$WORK/res/$name.p.$r"; run_fathom "$@" >"$WORK/res/$name.f.$r"
		else
			run_fathom "$@" >"$WORK/res/$name.f.$r"; run_pgbench "$@" >"$WORK/res/$name.p.$r"
		fi
	done
}
# med: the median of the numbers on stdin, one a line.
med() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# median NAME TOOL LINE: the median over the rounds of the first figure of a line.
median() { for r in $(seq "$ROUNDS"); do sed -n "${3}p" "$WORK/res/$1.$2.$r" | cut -f1; done | med; }
# median1 NAME TOOL K: the median over the rounds of the K-th figure of the first line.
median1() { for r in $(seq "$ROUNDS"); do head -1 "$WORK/res/$1.$2.$r" | awk -v k="$3" '{print $k}'; done | med; }
CASES=(tpcb-like select-only branchy gset pipeline)
run_case tpcb-like -b tpcb-like
run_case select-only -S
run_case branchy -f bench/pgbench-scripts/branchy.sql
run_case gset -f bench/pgbench-scripts/gset.sql
run_case pipeline -f bench/pgbench-scripts/pipeline.sql

echo "load average before and after: $LOAD0 / $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "median of $ROUNDS rounds of ${SECS}s per tool and case, $CLIENTS clients, -M $MODE, scale $SCALE"
echo
echo '| case | pgbench tps | fathom tps | pgbench latency avg / sd (ms) | fathom latency avg / sd (ms) |'
echo '|---|---|---|---|---|'
for name in "${CASES[@]}"; do
	pt=() ft=()
	for k in 1 2 3; do
		pt+=("$(median1 "$name" p "$k")")
		ft+=("$(median1 "$name" f "$k")")
	done
	printf '| %s | %.0f | %.0f | %.3f / %.3f | %.3f / %.3f |\n' "$name" "${pt[0]}" "${ft[0]}" "${pt[1]}" "${pt[2]}" "${ft[1]}" "${ft[2]}"
done
echo
echo '| case | command | pgbench -r avg (ms) | fathom -r mean (ms) |'
echo '|---|---|---|---|'
for name in "${CASES[@]}"; do
	n=$(wc -l <"$WORK/res/$name.p.1")
	for line in $(seq 2 "$n"); do
		text=$(sed -n "${line}p" "$WORK/res/$name.p.1" | cut -f2)
		printf '| %s | `%s` | %.3f | %.3f |\n' "$name" "${text%;}" "$(median "$name" p "$line")" "$(median "$name" f "$line")"
	done
done
