#!/usr/bin/env bash
# Runs fathom beside the anchor tools on the same server, data, clients and duration:
#   pgbench -S -M prepared          vs  fathom run --workload tpcb-select   (PostgreSQL)
#   sysbench oltp_point_select      vs  fathom run --workload oltp_point_select (MariaDB/MySQL)
# and prints each pair's throughput ratio and client CPU per transaction (user+sys of
# the client process, from /usr/bin/time). Runs alternate (anchor, fathom, anchor,
# fathom …) so that drift on a shared machine hits both.
#
# Environment (defaults suit the development machine):
#   PGURL      postgres://postgres@127.0.0.1:5432/fathom_bench   (database created if missing)
#   MYURL      mysql://root@127.0.0.1:3306/fathom_bench
#   CLIENTS=4  SECONDS_PER_RUN=20  ROUNDS=2  SCALE=10  TABLE_SIZE=100000
#   PGBENCH_JOBS=1   pgbench's -j: 1 is its default (one thread for all clients);
#                    set it to CLIENTS for one thread per client, as fathom runs
#   ONLY=pg|mysql   to run one pair
set -euo pipefail
cd "$(dirname "$0")/.."

PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432/fathom_bench}
MYURL=${MYURL:-mysql://root@127.0.0.1:3306/fathom_bench}
CLIENTS=${CLIENTS:-4}
SECS=${SECONDS_PER_RUN:-20}
ROUNDS=${ROUNDS:-2}
SCALE=${SCALE:-10}
TABLE_SIZE=${TABLE_SIZE:-100000}
ONLY=${ONLY:-}
PGBENCH_JOBS=${PGBENCH_JOBS:-1}
STORE=$(mktemp -d)/bench.db
FATHOM=./bin/fathom
go build -o "$FATHOM" ./cmd/fathom

# timed CMD… : runs CMD, saves its stdout in $out and its client CPU seconds in $cpu.
timed() {
  local tf; tf=$(mktemp)
  out=$(/usr/bin/time -f '%U %S' -o "$tf" "$@")
  cpu=$(awk '{print $1+$2}' "$tf"); rm -f "$tf"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b>0) printf "%.3f", a/b; else print "n/a" }'; }
per_tx_us() { awk -v c="$1" -v t="$2" 'BEGIN{ if (t>0) printf "%.2f", c*1e6/t; else print "n/a" }'; }

report() { # name anchor_tps anchor_cpu anchor_tx fathom_tps fathom_cpu fathom_tx
  echo
  printf '%-28s %12s %12s %16s\n' "$1" "tps" "tx" "client CPU µs/tx"
  printf '%-28s %12.1f %12d %16s\n' "  anchor" "$2" "$4" "$(per_tx_us "$3" "$4")"
  printf '%-28s %12.1f %12d %16s\n' "  fathom" "$5" "$7" "$(per_tx_us "$6" "$7")"
  echo "  throughput ratio fathom/anchor: $(ratio "$5" "$2")   CPU-per-tx ratio fathom/anchor: $(ratio "$(per_tx_us "$6" "$7")" "$(per_tx_us "$3" "$4")")"
}

json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

pg_pair() {
  local db=${PGURL##*/}; db=${db%%\?*}
  psql -X -q "${PGURL%/*}/postgres" -c "CREATE DATABASE $db" 2>/dev/null || true
  echo "== PostgreSQL: pgbench -S -M prepared -j $PGBENCH_JOBS vs fathom tpcb-select, scale $SCALE, $CLIENTS clients, ${SECS}s x $ROUNDS"
  pgbench -q -i -s "$SCALE" "$PGURL" >/dev/null 2>&1
  local at=0 ac=0 an=0 ft=0 fc=0 fn=0
  for r in $(seq "$ROUNDS"); do
    timed pgbench -n -S -M prepared -c "$CLIENTS" -j "$PGBENCH_JOBS" -T "$SECS" "$PGURL"
    local tps n; tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -1)
    n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
    echo "  round $r pgbench: $tps tps, $n tx, cpu ${cpu}s = $(per_tx_us "$cpu" "$n") µs/tx"
    at=$(awk -v a="$at" -v b="$tps" 'BEGIN{print a+b}'); ac=$(awk -v a="$ac" -v b="$cpu" 'BEGIN{print a+b}'); an=$((an+n))
    timed "$FATHOM" run --store "$STORE" --target "$PGURL" --workload tpcb-select -c "$CLIENTS" -T "$SECS" --json -q
    tps=$(json_field tps <<<"$out"); n=$(json_field transactions <<<"$out")
    echo "  round $r fathom:  $tps tps, $n tx, cpu ${cpu}s = $(per_tx_us "$cpu" "$n") µs/tx"
    ft=$(awk -v a="$ft" -v b="$tps" 'BEGIN{print a+b}'); fc=$(awk -v a="$fc" -v b="$cpu" 'BEGIN{print a+b}'); fn=$((fn+n))
  done
  report "PostgreSQL select-only" "$(awk -v a="$at" -v r="$ROUNDS" 'BEGIN{print a/r}')" "$ac" "$an" \
    "$(awk -v a="$ft" -v r="$ROUNDS" 'BEGIN{print a/r}')" "$fc" "$fn"
}

my_pair() {
  local rest=${MYURL#mysql://} userinfo host db user
  userinfo=${rest%%@*}; rest=${rest#*@}; host=${rest%%/*}; db=${rest#*/}; db=${db%%\?*}
  user=${userinfo%%:*}
  local hostname=${host%%:*} port=${host##*:}; [ "$port" = "$host" ] && port=3306
  mariadb -u"$user" -h"$hostname" -P"$port" -e "CREATE DATABASE IF NOT EXISTS $db"
  local sb=(sysbench --db-driver=mysql --mysql-user="$user" --mysql-host="$hostname" --mysql-port="$port" --mysql-db="$db" --tables=1 --table-size="$TABLE_SIZE")
  echo "== MariaDB: sysbench oltp_point_select vs fathom oltp_point_select, $TABLE_SIZE rows, $CLIENTS clients, ${SECS}s x $ROUNDS"
  "${sb[@]}" oltp_point_select cleanup >/dev/null 2>&1 || true
  "${sb[@]}" oltp_point_select prepare >/dev/null
  local at=0 ac=0 an=0 ft=0 fc=0 fn=0
  for r in $(seq "$ROUNDS"); do
    timed "${sb[@]}" oltp_point_select run --threads="$CLIENTS" --time="$SECS"
    local tps n; n=$(sed -n 's/^ *transactions: *\([0-9]*\) *(\([0-9.]*\) per sec.*/\1/p' <<<"$out")
    tps=$(sed -n 's/^ *transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' <<<"$out")
    echo "  round $r sysbench: $tps tps, $n tx, cpu ${cpu}s = $(per_tx_us "$cpu" "$n") µs/tx"
    at=$(awk -v a="$at" -v b="$tps" 'BEGIN{print a+b}'); ac=$(awk -v a="$ac" -v b="$cpu" 'BEGIN{print a+b}'); an=$((an+n))
    timed "$FATHOM" run --store "$STORE" --target "$MYURL" --workload oltp_point_select -c "$CLIENTS" -T "$SECS" --json -q
    tps=$(json_field tps <<<"$out"); n=$(json_field transactions <<<"$out")
    echo "  round $r fathom:   $tps tps, $n tx, cpu ${cpu}s = $(per_tx_us "$cpu" "$n") µs/tx"
    ft=$(awk -v a="$ft" -v b="$tps" 'BEGIN{print a+b}'); fc=$(awk -v a="$fc" -v b="$cpu" 'BEGIN{print a+b}'); fn=$((fn+n))
  done
  report "MariaDB point select" "$(awk -v a="$at" -v r="$ROUNDS" 'BEGIN{print a/r}')" "$ac" "$an" \
    "$(awk -v a="$ft" -v r="$ROUNDS" 'BEGIN{print a/r}')" "$fc" "$fn"
  "${sb[@]}" oltp_point_select cleanup >/dev/null 2>&1 || true
}

[ "$ONLY" = mysql ] || pg_pair
[ "$ONLY" = pg ] || my_pair
