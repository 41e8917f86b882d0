#!/usr/bin/env bash
# The Lua path's cache footprint per sysbench event, counted instead of timed.
#
# In a 32-thread run fathom's interpreter costs two to four times what it costs in a
# hot loop: between two events of one client, the kernel, the other clients and the
# server push its data out of the CPU's caches, so what an event costs is mostly how
# many cache lines it touches. Timing that on a shared machine moves by more than a
# change to the interpreter does; cachegrind's simulated caches do not. This runs
# BenchmarkScriptEvent/oltp_point_select/stepped-nowire-32-cold (32 clients' Lua states
# stepped in turn, each event answered at once without the wire, 1 MB of memory walked
# before each event, as a run's other work does) under cachegrind at two event counts,
# and prints the difference divided by the difference in events: L1 data-read misses
# (D1mr) and last-level read misses (DLmr, a 1 MB 16-way cache: about an L2) per event,
# by package, with the walk's own lines left out. Start-up (32 states, the script
# compiled, the tables prepared) cancels out.
#
# Needs valgrind (apt-get install valgrind), sysbench's scripts in /usr/share/sysbench
# and a MariaDB or MySQL in FATHOM_TEST_MYSQL_DSN (default
# mysql://root@127.0.0.1:3306/test; the benchmark prepares a 1,000-row table there).
# Environment: EVENTS="2000 4000", TOP=25 (the hottest source lines listed),
# WALK=1: WALK=0 runs stepped-nowire-32 instead, nothing walked between events: then
# the misses are the lines of one client's state that the other 31 clients' events
# pushed out of the L1 cache (the shared code and prototypes stay), a floor for what
# an event misses in a run.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null; then
	echo "lua-cachelines: valgrind is not installed: apt-get install valgrind" >&2
	exit 2
fi
export FATHOM_TEST_MYSQL_DSN=${FATHOM_TEST_MYSQL_DSN:-mysql://root@127.0.0.1:3306/test}
read -r N1 N2 <<<"${EVENTS:-2000 4000}"
TOP=${TOP:-25}
BENCH='BenchmarkScriptEvent/oltp_point_select/stepped-nowire-32-cold$'
WHAT="1 MB walked between events"
if [ "${WALK:-1}" = 0 ]; then
	BENCH='BenchmarkScriptEvent/oltp_point_select/stepped-nowire-32$'
	WHAT="nothing between them"
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

go test -c -o "$WORK/sblua.test" ./internal/workload/sblua/
ROOT=$(pwd)

# count N: cachegrind's per-line read misses for a run of N events, as "D1mr DLmr file:line".
count() {
	GOGC=off valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64 \
		--cachegrind-out-file="$WORK/cg.$1" "$WORK/sblua.test" -test.run '^$' \
		-test.bench "$BENCH" \
		-test.benchtime "${1}x" >"$WORK/out.$1" 2>&1 || { cat "$WORK/out.$1" >&2; exit 1; }
	if ! grep -q 'stepped-nowire-32' "$WORK/out.$1" || grep -q -- '--- SKIP' "$WORK/out.$1"; then
		echo "lua-cachelines: the benchmark did not run:" >&2
		cat "$WORK/out.$1" >&2
		exit 1
	fi
	# cachegrind's file format: "events:" names the columns; "fl=" a file; then lines
	# "line Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw".
	awk '
		/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i; next }
		/^fl=/ { fl = substr($0, 4); next }
		/^fn=/ { next }
		/^[0-9]/ { d1 = $(col["D1mr"]); dl = $(col["DLmr"]); if (d1 + dl > 0) { k = fl ":" $1; a[k] += d1; b[k] += dl } }
		END { for (k in a) print a[k], b[k], k }
	' "$WORK/cg.$1" >"$WORK/lines.$1"
}
count "$N1"
count "$N2"

# The per-event difference, per line; the walk's loop (the benchmark's own file) left out.
awk -v n="$((N2 - N1))" '
	FNR == NR { a[$3] = $1; b[$3] = $2; next }
	{ d1 = ($1 - a[$3]) / n; dl = ($2 - b[$3]) / n; print d1, dl, $3 }
' "$WORK/lines.$N1" "$WORK/lines.$N2" | grep -v 'event_bench_test.go' >"$WORK/per"

group() {
	case "$1" in
	"$ROOT"/internal/lua/*) echo "internal/lua (the interpreter)" ;;
	"$ROOT"/internal/workload/sblua/*) echo "internal/workload/sblua (sysbench's API)" ;;
	"$ROOT"/*) echo "other fathom code" ;;
	*/src/runtime/* | */src/internal/runtime/*) echo "Go runtime (allocation, GC)" ;;
	*) echo "Go standard library" ;;
	esac
}
echo "read misses per event, oltp_point_select stepped over 32 clients' states, $WHAT, $((N2 - N1)) events (cachegrind: 32 KB L1d, 1 MB last level)"
printf '%-42s %8s %8s\n' "" "L1d" "LL"
while read -r d1 dl fl; do
	printf '%s\t%s\t%s\n' "$(group "${fl%:*}")" "$d1" "$dl"
done <"$WORK/per" >"$WORK/grouped"
awk -F'\t' '{ a[$1] += $2; b[$1] += $3 } END { for (k in a) printf "%-42s %8.1f %8.1f\n", k, a[k], b[k] }' "$WORK/grouped" | sort
awk -F'\t' '{ a += $2; b += $3 } END { printf "%-42s %8.1f %8.1f\n", "total", a, b }' "$WORK/grouped"
echo
echo "hottest lines (L1d read misses per event):"
sort -gr "$WORK/per" | head -"$TOP" | while read -r d1 dl fl; do
	printf '%6.1f %6.1f  %s\n' "$d1" "$dl" "${fl#"$ROOT"/}"
done
