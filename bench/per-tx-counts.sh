#!/usr/bin/env bash
# per-tx-counts.sh LABEL COMMAND…
# Runs a benchmark client (pgbench, sysbench or fathom run --json) under perf stat and
# prints, per transaction, its CPU time (task-clock, µs), context switches, CPU
# migrations and the system calls that make up a client's waiting and its socket
# traffic: sendto, recvfrom, read, write, epoll_pwait/epoll_wait, poll/ppoll, futex
# (Go's threads waking each other), nanosleep (Go's sysmon and timers), tgkill (Go's
# preemption signals). The transaction count comes from the client's own output.
# Counts are of the client process and all its threads, nothing else on the machine,
# so they hold better than throughput on a shared machine; still say the load.
# Needs perf with the syscalls tracepoints (root, or perf_event_paranoid ≤ -1).
#   bench/per-tx-counts.sh "pgbench c32" pgbench -n -S -M prepared -c 32 -j 2 -T 10 "$URL"
#   bench/per-tx-counts.sh "fathom c32" fathom run --target "$URL" --workload tpcb-select -c 32 -T 10 --json -q
set -euo pipefail
label=$1; shift
ev=task-clock,context-switches,cpu-migrations
for s in sendto recvfrom write read epoll_wait epoll_pwait poll ppoll futex nanosleep sched_yield tgkill; do
  ev+=",syscalls:sys_enter_$s"
done
stat=$(mktemp); trap 'rm -f "$stat"' EXIT
out=$(perf stat -x, -o "$stat" -e "$ev" "$@")
n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p; s/^ *"transactions": \([0-9]*\),*$/\1/p; s/^ *transactions: *\([0-9]*\) .*/\1/p' <<<"$out" | head -1)
tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p; s/^ *"tps": \([0-9.]*\),*$/\1/p; s/^ *transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' <<<"$out" | head -1)
if [ -z "$n" ] || [ "$n" = 0 ]; then echo "$label: no transaction count in the client's output" >&2; exit 1; fi
awk -F, -v n="$n" -v l="$label" -v tps="${tps:-?}" '
  /^#/ || NF < 3 { next }
  { v = $1; e = $3; sub(/syscalls:sys_enter_/, "", e); if (e == "task-clock") { e = "cpu_us"; v = v * 1000 }
    if (v + 0 > 0) s = s sprintf(" %s=%.3f", e, v / n) }
  END { printf "%s: %d tx, %s tps; per transaction:%s\n", l, n, tps, s }' "$stat"
