#!/usr/bin/env bash
# How the server's threads wait under each tool: sysbench 1.0 and fathom run the same
# Lua script on the same MariaDB (on this host, the CPUs shared as they come), taking
# turns, and for each run this prints the events per second (events / SECONDS_PER_RUN), each tool's CPU time per
# event, the server's, and the server's context switches per event, voluntary (a
# thread went to sleep: its next query had not arrived, so it polled and waited) and
# involuntary (a thread was preempted, as when the reply it wrote wakes a client
# thread that runs at once, sends the next query and sleeps again before the server's
# thread resumes). The server's counters come from /proc/PID/task/*/status, summed over
# its threads, before and after each run; use a server of its own.
#
# This is the measurement behind docs/from-sysbench.md's account of the shared rows of
# bench/sysbench-lua.sh: a run is one line, and runs of the same tool differ by tens of
# percent on a shared 2-CPU machine, so read the rounds together.
#
# Environment: MYSQL_HOST=127.0.0.1 MYSQL_PORT=3306 MYSQL_USER=root MYSQL_DB=sbbench
# (created; the script's tables prepared and dropped at the end), SCRIPTS="oltp_point_select
# oltp_read_only", THREADS=32, SECONDS_PER_RUN=8, TABLES=4, TABLE_SIZE=10000, ROUNDS=3.
set -euo pipefail
cd "$(dirname "$0")/.."

H=${MYSQL_HOST:-127.0.0.1} P=${MYSQL_PORT:-3306} U=${MYSQL_USER:-root} DB=${MYSQL_DB:-sbbench}
SCRIPTS=${SCRIPTS:-"oltp_point_select oltp_read_only"}
THREADS=${THREADS:-32}
SECS=${SECONDS_PER_RUN:-8}
TABLES=${TABLES:-4}
SIZE=${TABLE_SIZE:-10000}
ROUNDS=${ROUNDS:-3}
DIR=/usr/share/sysbench

# shellcheck source=bench/lib.sh
. bench/lib.sh
SERVER_PID=$(listener_pid "$H" "$P")
if [ -z "$SERVER_PID" ]; then
	echo "server-switches: no server listening on $H:$P on this host: its threads' switches cannot be read" >&2
	exit 2
fi
WORK=$(mktemp -d)
FATHOM=./bin/fathom
go build -o "$FATHOM" ./cmd/fathom
mysql -h "$H" -P "$P" -u "$U" -e "CREATE DATABASE IF NOT EXISTS $DB"
TARGET="mysql://$U@$H:$P/$DB"
SB=(sysbench --db-driver=mysql --mysql-host="$H" --mysql-port="$P" --mysql-user="$U" --mysql-db="$DB")
cleanup() {
	"${SB[@]}" "$DIR/oltp_common.lua" --tables="$TABLES" cleanup >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT

# server: user+system ticks, voluntary and involuntary switches of every thread.
server() {
	local ticks
	ticks=$(awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat")
	cat /proc/"$SERVER_PID"/task/*/status 2>/dev/null |
		awk -v t="$ticks" '/^voluntary_ctxt/ { v += $2 } /^nonvoluntary_ctxt/ { n += $2 } END { print t, v, n }'
}

"${SB[@]}" "$DIR/oltp_common.lua" --tables="$TABLES" cleanup >/dev/null
"${SB[@]}" "$DIR/oltp_common.lua" --tables="$TABLES" --table-size="$SIZE" --threads=2 prepare >/dev/null
printf '%-18s %7s %-8s %5s %9s %9s %9s %12s %12s\n' script threads tool round ev/s 'µs/ev' 'server' 'server vol' 'server invol'
for s in $SCRIPTS; do
	for r in $(seq "$ROUNDS"); do
		# Take turns going first.
		order="sysbench fathom"
		[ $((r % 2)) = 0 ] && order="fathom sysbench"
		for tool in $order; do
			read -r t0 v0 n0 < <(server)
			if [ "$tool" = sysbench ]; then
				/usr/bin/time -f '%U %S' -o "$WORK/time" "${SB[@]}" "$DIR/$s.lua" --tables="$TABLES" --table-size="$SIZE" \
					--threads="$THREADS" --time="$SECS" run >"$WORK/out"
				n=$(awk '/total number of events/ { print $NF }' "$WORK/out")
			else
				/usr/bin/time -f '%U %S' -o "$WORK/time" "$FATHOM" run -w "$DIR/$s.lua" --tables "$TABLES" --table-size "$SIZE" \
					--threads "$THREADS" --time "$SECS" --json -q --target "$TARGET" --store "$WORK/store.db" --no-collect >"$WORK/out" 2>/dev/null || true
				n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["transactions"])' "$WORK/out")
			fi
			read -r t1 v1 n1 < <(server)
			awk -v s="$s" -v th="$THREADS" -v tool="$tool" -v r="$r" -v n="$n" -v secs="$SECS" -v hz="$(getconf CLK_TCK)" \
				-v st=$((t1 - t0)) -v v=$((v1 - v0)) -v iv=$((n1 - n0)) \
				'{ if (n == 0) { printf "%-18s %7s %-8s %5d no events\n", s, th, tool, r; next }
				   printf "%-18s %7s %-8s %5d %9.0f %9.1f %9.1f %12.2f %12.2f\n", s, th, tool, r, n / secs, ($1 + $2) * 1e6 / n, st * 1e6 / hz / n, v / n, iv / n }' "$WORK/time"
		done
	done
done
