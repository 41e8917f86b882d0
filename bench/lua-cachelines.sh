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
# Environment: EVENTS="2000 4000", REPEAT=3 (passes), TOP=25 (the hottest source
# lines listed),
# WALK=1: WALK=0 runs stepped-nowire-32 instead, nothing walked between events: then
# the misses are the lines of one client's state that the other 31 clients' events
# pushed out of the L1 cache (the shared code and prototypes mostly stay), a floor for what
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
REPEAT=${REPEAT:-3}
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
# Go randomises its maps' hash seeds and the runtime's own work lands differently
# from one process to the next, so the lines an event shares a cache set with, and
# the count, move by several lines between passes: REPEAT passes, and the median.
for r in $(seq "$REPEAT"); do
	count "$N1"
	count "$N2"
	# The per-event difference, per line; the walk's loop (the benchmark's own file)
	# left out.
	awk -v n="$((N2 - N1))" '
		FNR == NR { a[$3] = $1; b[$3] = $2; next }
		{ d1 = ($1 - a[$3]) / n; dl = ($2 - b[$3]) / n; print d1, dl, $3 }
	' "$WORK/lines.$N1" "$WORK/lines.$N2" | grep -v 'event_bench_test.go' >"$WORK/per.$r"
	# Per package: "package<TAB>L1d<TAB>LL".
	awk -v root="$ROOT/" '
		{
			f = $3
			if (index(f, root "internal/lua/") == 1) g = "internal/lua (the interpreter)"
			else if (index(f, root "internal/workload/sblua/") == 1) g = "internal/workload/sblua (sysbench API)"
			else if (index(f, root) == 1) g = "other fathom code"
			else if (f ~ /\/src\/(internal\/)?runtime\//) g = "Go runtime"
			else g = "Go standard library"
			a[g] += $1; b[g] += $2; ta += $1; tb += $2
		}
		END { for (g in a) printf "%s\t%.1f\t%.1f\n", g, a[g], b[g]; printf "total\t%.1f\t%.1f\n", ta, tb }
	' "$WORK/per.$r" >"$WORK/sums.$r"
done

echo "read misses per event, oltp_point_select stepped over 32 clients' states, $WHAT"
echo "($((N2 - N1)) events; cachegrind: 32 KB L1d, 1 MB last level; median of $REPEAT passes, range)"
printf '%-40s %22s %22s\n' "" "L1d" "LL"
cat "$WORK"/sums.* | awk -F'\t' '
	{ k = $1; n[k]++; d[k, n[k]] = $2; l[k, n[k]] = $3 }
	function med(arr, k, m,   i, j, t, v) {
		for (i = 1; i <= m; i++) v[i] = arr[k, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return sprintf("%.1f (%.1f-%.1f)", v[int((m + 1) / 2)], v[1], v[m])
	}
	END { for (k in n) printf "%-40s %22s %22s\n", k, med(d, k, n[k]), med(l, k, n[k]) }
' | sort -k1,1 | awk '/^total/ { t = $0; next } { print } END { print t }'
echo
echo "hottest lines (read misses per event, the mean of the passes):"
cat "$WORK"/per.* | awk -v r="$REPEAT" '{ a[$3] += $1; b[$3] += $2 } END { for (k in a) printf "%.1f %.1f %s\n", a[k] / r, b[k] / r, k }' |
	sort -gr | head -"$TOP" | while read -r d1 dl fl; do
		printf '%6.1f %6.1f  %s\n' "$d1" "$dl" "${fl#"$ROOT"/}"
	done
