#!/usr/bin/env bash
# fathom beside sysbench 1.0 on the same Lua scripts and the same MariaDB: each
# tool runs the script sysbench ships (fathom with `-w script.lua`, unchanged), the
# tools taking turns going first, and the figures are medians over ROUNDS.
#
# Per case: events per second (each tool's own report) and the client's CPU time
# per event (user + system of the tool's process, from /usr/bin/time, divided by the
# events it ran), for THREADS clients. Each round runs both tools one after the
# other, so the "fa/sb" columns divide fathom's figure by sysbench's of the same
# round and give the median of those ratios and their range: on a shared machine
# whose speed drifts by 20% or more within minutes, the pairs are steadier than each
# tool's medians apart, and a range that spans 1 says the rounds did not decide.
# When the server runs on this host, "server sb" and "server fa" are the server
# process's CPU time per event during each tool's runs (/proc/PID/stat, every thread),
# with their ratio: the same queries can cost the server more or less CPU depending on
# when each tool's next query arrives, and with shared CPUs that moves the throughput.
#
# On a shared 2-CPU machine the client and the server compete for the CPUs, and how
# each tool's way of waiting meets the server's threads in the scheduler moves both
# figures by tens of percent. So each case runs twice (see DESIGN.md): "shared", the
# CPUs shared as they come, and "pinned", the server's process (found by its port,
# which must be on this host) on CPU 0 and the tool on CPU 1 (taskset), as if each had
# a host of its own. The server's CPU mask is put back when the script ends. PIN=0
# runs only the shared rows, PIN=1 only the pinned ones.
# "start ms" is each tool's CPU time for a run of one event per thread, measured once
# per row: the fixed part of its µs/ev. Each row ends with the 1-minute load average when it was finished: quote it with
# the figures. Both tools' CPU per event include their start-up (fathom's is tens of
# ms: the store, the target's settings, a Lua state per client), so short runs at low
# event rates weigh it more.
#
# Environment: MYSQL_HOST=127.0.0.1 MYSQL_PORT=3306 MYSQL_USER=root MYSQL_DB=sbbench
# (created, and its sbtest tables dropped at the end), SCRIPTS="oltp_point_select
# oltp_read_only", THREADS="1 32 128", SECONDS_PER_RUN=10, TABLES=4, TABLE_SIZE=10000,
# ROUNDS=3, PIN="0 1".
set -euo pipefail
cd "$(dirname "$0")/.."

H=${MYSQL_HOST:-127.0.0.1} P=${MYSQL_PORT:-3306} U=${MYSQL_USER:-root} DB=${MYSQL_DB:-sbbench}
SCRIPTS=${SCRIPTS:-"oltp_point_select oltp_read_only"}
THREADS=${THREADS:-"1 32 128"}
SECS=${SECONDS_PER_RUN:-10}
TABLES=${TABLES:-4}
SIZE=${TABLE_SIZE:-10000}
ROUNDS=${ROUNDS:-3}
PIN=${PIN:-0 1}
DIR=/usr/share/sysbench

# The server's process: the listener on port P of this host, if it is here. The pinned
# rows need it; the server's CPU per event is measured when it is found.
# shellcheck source=bench/lib.sh
. bench/lib.sh
SERVER_PID=$(listener_pid "$H" "$P")
if [[ " $PIN " == *" 1 "* ]]; then
	if [ -z "$SERVER_PID" ] || [ "$(nproc)" -lt 2 ]; then
		echo "sysbench-lua: no server listening on $H:$P on this host (or fewer than 2 CPUs): cannot pin it; run with PIN=0" >&2
		exit 2
	fi
fi
WORK=$(mktemp -d)
FATHOM=./bin/fathom
go build -o "$FATHOM" ./cmd/fathom

mysql -h "$H" -P "$P" -u "$U" -e "CREATE DATABASE IF NOT EXISTS $DB"
TARGET="mysql://$U@$H:$P/$DB"
SB=(sysbench --db-driver=mysql --mysql-host="$H" --mysql-port="$P" --mysql-user="$U" --mysql-db="$DB")
PINNED=()

# pin_server on|off: the server's process (every thread) on CPU 0, or back on the CPUs
# it had.
SERVER_MASK=""
pin_server() {
	if [ "$1" = off ]; then
		[ -n "$SERVER_MASK" ] && taskset -a -p "$SERVER_MASK" "$SERVER_PID" >/dev/null
		return 0
	fi
	SERVER_MASK=$(taskset -p "$SERVER_PID" | sed 's/.*: //')
	taskset -a -p -c 0 "$SERVER_PID" >/dev/null
}
trap 'pin_server off; rm -rf "$WORK"' EXIT

# median: the middle value; of an even count, the lower of the middle two (a value a
# round gave, not an average of two rounds).
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }

run_sysbench() { # script threads -> "eps cpu_us_per_event server_us_per_event"
	local out cpu ev s0
	s0=$(server_ticks)
	out=$(/usr/bin/time -f '%U %S' -o "$WORK/time" "${PINNED[@]}" "${SB[@]}" "$DIR/$1.lua" --tables="$TABLES" --table-size="$SIZE" \
		--threads="$2" --time="$SECS" run)
	ev=$(sed -n 's/^ *transactions: *[0-9]* *(\([0-9.]*\) per sec.)/\1/p' <<<"$out")
	local total; total=$(sed -n 's/^ *total number of events: *\([0-9]*\).*/\1/p' <<<"$out")
	cpu=$(awk '{ print $1 + $2 }' "$WORK/time")
	echo "$ev $(awk -v c="$cpu" -v n="$total" 'BEGIN { printf "%.1f", n ? c * 1e6 / n : 0 }') $(server_us "$s0" "$total")"
}
run_fathom() {
	local js cpu s0
	s0=$(server_ticks)
	js=$(/usr/bin/time -f '%U %S' -o "$WORK/time" "${PINNED[@]}" "$FATHOM" run -w "$DIR/$1.lua" --tables "$TABLES" --table-size "$SIZE" \
		--threads "$2" --time "$SECS" --json -q --target "$TARGET" --store "$WORK/store.db" --no-collect 2>/dev/null || true)
	cpu=$(awk '{ print $1 + $2 }' "$WORK/time")
	python3 -c 'import json,sys; s=json.loads(sys.argv[1]); c=float(sys.argv[2]); n=s["transactions"]; print("%.2f %.1f %d" % (s["tps"], c*1e6/n if n else 0, n))' "$js" "$cpu" |
		{ read -r eps us n; echo "$eps $us $(server_us "$s0" "$n")"; }
}

# server_ticks: the server process's CPU time so far (user + system, every thread's,
# in clock ticks), or nothing when the server is not on this host. server_us S0 N: the
# server's CPU per event since S0 over N events, "-" without it. It counts whatever else
# the server did meanwhile (its background threads, other clients): use a server of
# its own.
server_ticks() { [ -n "$SERVER_PID" ] && awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat" 2>/dev/null; true; }
server_us() {
	local now; now=$(server_ticks)
	if [ -z "$1" ] || [ -z "$now" ] || [ "${2:-0}" = 0 ]; then echo -; return; fi
	awk -v a="$1" -v b="$now" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (b - a) * 1e6 / hz / n }'
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

# ratios() prints, for column $1 of each round's sysbench and fathom lines (taken in
# the same round, one after the other), the median of fathom / sysbench (as median())
# and its range.
ratios() {
	paste -d' ' <(cut -d' ' -f"$1" "$WORK/fa") <(cut -d' ' -f"$1" "$WORK/sb") |
		awk '$2 > 0 { print $1 / $2 }' | sort -g |
		awk '{ a[NR] = $1 } END { if (NR) printf "%.2f (%.2f-%.2f)", a[int((NR + 1) / 2)], a[1], a[NR]; else printf "-" }'
}

printf '%-20s %7s %6s  %12s %12s  %14s %14s  %18s %18s  %12s %12s %18s  %9s %9s  %s\n' script threads cpus 'sysbench eps' 'fathom eps' 'sysbench µs/ev' 'fathom µs/ev' 'eps fa/sb' 'µs/ev fa/sb' 'server sb' 'server fa' 'server fa/sb' 'sb start' 'fa start' load
for s in $SCRIPTS; do
	"${SB[@]}" "$DIR/$s.lua" --tables="$TABLES" cleanup >/dev/null
	"${SB[@]}" "$DIR/$s.lua" --tables="$TABLES" --table-size="$SIZE" --threads=2 prepare >/dev/null
	for t in $THREADS; do
	for pin in $PIN; do
		cpus=shared PINNED=()
		if [ "$pin" = 1 ]; then
			cpus=pinned PINNED=(taskset -c 1)
			pin_server on
		fi
		: >"$WORK/sb"; : >"$WORK/fa"
		for r in $(seq "$ROUNDS"); do
			if [ $((r % 2)) = 1 ]; then
				run_sysbench "$s" "$t" >>"$WORK/sb"; run_fathom "$s" "$t" >>"$WORK/fa"
			else
				run_fathom "$s" "$t" >>"$WORK/fa"; run_sysbench "$s" "$t" >>"$WORK/sb"
			fi
		done
		printf '%-20s %7s %6s  %12s %12s  %14s %14s  %18s %18s  %12s %12s %18s  %9s %9s  %s\n' "$s" "$t" "$cpus" \
			"$(cut -d' ' -f1 "$WORK/sb" | median)" "$(cut -d' ' -f1 "$WORK/fa" | median)" \
			"$(cut -d' ' -f2 "$WORK/sb" | median)" "$(cut -d' ' -f2 "$WORK/fa" | median)" \
			"$(ratios 1)" "$(ratios 2)" \
			"$(cut -d' ' -f3 "$WORK/sb" | median)" "$(cut -d' ' -f3 "$WORK/fa" | median)" "$(ratios 3)" \
			"$(start_cpu sysbench "$s" "$t")ms" "$(start_cpu fathom "$s" "$t")ms" \
			"$(cut -d' ' -f1 /proc/loadavg)"
		pin_server off
	done
	done
	"${SB[@]}" "$DIR/$s.lua" --tables="$TABLES" cleanup >/dev/null
done
