#!/usr/bin/env bash
# fathom beside sysbench 1.0 on the same Lua scripts and the same MariaDB: each
# tool runs the script sysbench ships (fathom with `-w script.lua`, unchanged), the
# tools taking turns going first, and the figures are medians over ROUNDS.
#
# Per case: events per second (each tool's own report) and the client's CPU time
# per event (user + system of the tool's process, from /usr/bin/time, divided by the
# events it ran), for THREADS clients.
#
# On a shared 2-CPU machine the client and the server compete for the CPUs: set
# PIN=1 to run the tool on CPU 1 (taskset) and report both ways (see DESIGN.md).
# "start ms" is each tool's CPU time for a run of one event per thread, measured once
# per row: the fixed part of its µs/ev. Each row ends with the 1-minute load average when it was finished: quote it with
# the figures. Both tools' CPU per event include their start-up (fathom's is tens of
# ms: the store, the target's settings, a Lua state per client), so short runs at low
# event rates weigh it more.
#
# Environment: MYSQL_HOST=127.0.0.1 MYSQL_PORT=3306 MYSQL_USER=root MYSQL_DB=sbbench
# (created, and its sbtest tables dropped at the end), SCRIPTS="oltp_point_select
# oltp_read_only", THREADS="1 32 128", SECONDS_PER_RUN=10, TABLES=4, TABLE_SIZE=10000,
# ROUNDS=3, PIN=0.
set -euo pipefail
cd "$(dirname "$0")/.."

H=${MYSQL_HOST:-127.0.0.1} P=${MYSQL_PORT:-3306} U=${MYSQL_USER:-root} DB=${MYSQL_DB:-sbbench}
SCRIPTS=${SCRIPTS:-"oltp_point_select oltp_read_only"}
THREADS=${THREADS:-"1 32 128"}
SECS=${SECONDS_PER_RUN:-10}
TABLES=${TABLES:-4}
SIZE=${TABLE_SIZE:-10000}
ROUNDS=${ROUNDS:-3}
PIN=${PIN:-0}
DIR=/usr/share/sysbench
WORK=$(mktemp -d)
FATHOM=./bin/fathom
go build -o "$FATHOM" ./cmd/fathom
trap 'rm -rf "$WORK"' EXIT

mysql -h "$H" -P "$P" -u "$U" -e "CREATE DATABASE IF NOT EXISTS $DB"
TARGET="mysql://$U@$H:$P/$DB"
SB=(sysbench --db-driver=mysql --mysql-host="$H" --mysql-port="$P" --mysql-user="$U" --mysql-db="$DB")
PINNED=()
[ "$PIN" = 1 ] && PINNED=(taskset -c 1)

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }

run_sysbench() { # script threads -> "eps cpu_us_per_event"
	local out cpu ev
	out=$(/usr/bin/time -f '%U %S' -o "$WORK/time" "${PINNED[@]}" "${SB[@]}" "$DIR/$1.lua" --tables="$TABLES" --table-size="$SIZE" \
		--threads="$2" --time="$SECS" run)
	ev=$(sed -n 's/^ *transactions: *[0-9]* *(\([0-9.]*\) per sec.)/\1/p' <<<"$out")
	local total; total=$(sed -n 's/^ *total number of events: *\([0-9]*\).*/\1/p' <<<"$out")
	cpu=$(awk '{ print $1 + $2 }' "$WORK/time")
	echo "$ev $(awk -v c="$cpu" -v n="$total" 'BEGIN { printf "%.1f", n ? c * 1e6 / n : 0 }')"
}
run_fathom() {
	local js cpu
	js=$(/usr/bin/time -f '%U %S' -o "$WORK/time" "${PINNED[@]}" "$FATHOM" run -w "$DIR/$1.lua" --tables "$TABLES" --table-size "$SIZE" \
		--threads "$2" --time "$SECS" --json -q --target "$TARGET" --store "$WORK/store.db" --no-collect 2>/dev/null || true)
	cpu=$(awk '{ print $1 + $2 }' "$WORK/time")
	python3 -c 'import json,sys; s=json.loads(sys.argv[1]); c=float(sys.argv[2]); n=s["transactions"]; print("%.2f %.1f" % (s["tps"], c*1e6/n if n else 0))' "$js" "$cpu"
}

start_cpu() { # tool script threads -> CPU ms of a run of one event per thread
	if [ "$1" = sysbench ]; then
		/usr/bin/time -f '%U %S' -o "$WORK/time" "${PINNED[@]}" "${SB[@]}" "$DIR/$2.lua" --tables="$TABLES" --table-size="$SIZE" \
			--threads="$3" --events="$3" run >/dev/null
	else
		/usr/bin/time -f '%U %S' -o "$WORK/time" "${PINNED[@]}" "$FATHOM" run -w "$DIR/$2.lua" --tables "$TABLES" --table-size "$SIZE" \
			--threads "$3" --events "$3" --json -q --target "$TARGET" --store "$WORK/store.db" --no-collect >/dev/null 2>&1 || true
	fi
	awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$WORK/time"
}

printf '%-20s %7s  %12s %12s  %14s %14s  %9s %9s  %s\n' script threads 'sysbench eps' 'fathom eps' 'sysbench µs/ev' 'fathom µs/ev' 'sb start' 'fa start' load
for s in $SCRIPTS; do
	"${SB[@]}" "$DIR/$s.lua" --tables="$TABLES" cleanup >/dev/null
	"${SB[@]}" "$DIR/$s.lua" --tables="$TABLES" --table-size="$SIZE" --threads=2 prepare >/dev/null
	for t in $THREADS; do
		: >"$WORK/sb"; : >"$WORK/fa"
		for r in $(seq "$ROUNDS"); do
			if [ $((r % 2)) = 1 ]; then
				run_sysbench "$s" "$t" >>"$WORK/sb"; run_fathom "$s" "$t" >>"$WORK/fa"
			else
				run_fathom "$s" "$t" >>"$WORK/fa"; run_sysbench "$s" "$t" >>"$WORK/sb"
			fi
		done
		printf '%-20s %7s  %12s %12s  %14s %14s  %9s %9s  %s\n' "$s" "$t" \
			"$(cut -d' ' -f1 "$WORK/sb" | median)" "$(cut -d' ' -f1 "$WORK/fa" | median)" \
			"$(cut -d' ' -f2 "$WORK/sb" | median)" "$(cut -d' ' -f2 "$WORK/fa" | median)" \
			"$(start_cpu sysbench "$s" "$t")ms" "$(start_cpu fathom "$s" "$t")ms" \
			"$(cut -d' ' -f1 /proc/loadavg)"
	done
	"${SB[@]}" "$DIR/$s.lua" --tables="$TABLES" cleanup >/dev/null
done
