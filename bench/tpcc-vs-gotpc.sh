#!/usr/bin/env bash
# Runs fathom's tpcc beside go-tpc's tpcc (the anchor) on one server, the same
# warehouses and clients:
#   KIND=mysql (the default): MariaDB/MySQL, go-tpc v1.0.7 (~/go/bin/go-tpc);
#   KIND=postgres: PostgreSQL, go-tpc v1.0.12 (the first release line with a PostgreSQL
#     driver is v1.0.9; v1.0.12 is the newest tag), built once into
#     ~/.cache/fathom-bench unless GOTPC names a binary.
#   1. load times: `go-tpc tpcc prepare` against `fathom prepare -w tpcc` (same warehouses,
#      LOADERS threads/connections each), each in a database of its own;
#   2. runs, interleaved (go-tpc, fathom, go-tpc, fathom …) so that drift on a shared
#      machine hits both: go-tpc's tpmC against fathom's NOPM and fathom's New-Orders per
#      minute counted as go-tpc counts them, and client CPU per New-Order (user+sys of the
#      client process from /usr/bin/time over the New-Orders it counted);
#   3. fathom check-data after the runs (and go-tpc's check with GOTPC_CHECK=1).
# Neither side has keying or think time. Figures are from one run of the script on
# whatever machine runs it: on a 2-core host shared with the server, quote them with
# that caveat.
#
# What the figures count. go-tpc's tpmC is its new_order transactions that returned no
# error, per minute of the run: the 1% that roll back on the unused item return no
# error, so they are in it (as in the spec's tpmC). fathom's NOPM counts committed
# New-Orders only (HammerDB's definition); its rolled-back ones are the type
# new-order-rollback. The column "fathom NO/min" adds the two, go-tpc's definition, and
# the ratio is taken on it. CPU per New-Order: each tool's CPU over its New-Orders of
# the same definition.
#
# SAME_DATA=1 (the default) runs fathom on go-tpc's database (the same schema and
# table names; fathom's prepare is still timed in a database of its own): both tools
# then read the same rows from the same buffer pool, where two databases would evict
# each other's pages from a small one (128 MB by default on both servers).
# PIN="taskset -c 1" runs both clients on one CPU, the server left where it is.
# ROUNDTRIPS=1 also runs each tool once under strace for 10 s and counts the client's
# write(2) calls, each a statement (or BEGIN/COMMIT) sent to the server, per
# transaction of the mix.
#
# Environment:
#   KIND=mysql|postgres
#   mysql:    MYHOST=127.0.0.1 MYPORT=3306 MYUSER=root (no password: use ~/.my.cnf for
#             fathom and a password-less test user; go-tpc takes a password only on its
#             command line)
#   postgres: PGHOST=127.0.0.1 PGPORT=5432 PGUSER=postgres (no password: trust or
#             ~/.pgpass), sslmode=disable
#   WAREHOUSES=1  CLIENTS="4"  SECONDS_PER_RUN=30  ROUNDS=2  LOADERS=2
#   GOTPC=path of go-tpc  SKIP_PREPARE=1 to reuse the databases of a previous run
#   GOTPC_CHECK=1 to run go-tpc's own check after the runs (minutes on MariaDB)
#   DB_GOTPC=bench_tpcc_gotpc DB_FATHOM=bench_tpcc_fathom: the databases (kept afterwards)
set -euo pipefail
cd "$(dirname "$0")/.."

KIND=${KIND:-mysql}
W=${WAREHOUSES:-1}
CLIENTS=${CLIENTS:-4}
SECS=${SECONDS_PER_RUN:-30}
ROUNDS=${ROUNDS:-2}
LOADERS=${LOADERS:-2}
DB_G=${DB_GOTPC:-bench_tpcc_gotpc}
DB_F=${DB_FATHOM:-bench_tpcc_fathom}
SAME=${SAME_DATA:-1}
PIN=${PIN:-}
WORK=$(mktemp -d)
FATHOM=$WORK/fathom
go build -o "$FATHOM" ./cmd/fathom
trap 'rm -rf "$WORK"' EXIT

case $KIND in
mysql)
  MYHOST=${MYHOST:-127.0.0.1}; MYPORT=${MYPORT:-3306}; MYUSER=${MYUSER:-root}
  GOTPC_VERSION=${GOTPC:+"(GOTPC)"}; GOTPC_VERSION=${GOTPC_VERSION:-v1.0.7}
  GOTPC=${GOTPC:-$HOME/go/bin/go-tpc}
  base="mysql://$MYUSER@$MYHOST:$MYPORT"; params=""
  G=(-d mysql -H "$MYHOST" -P "$MYPORT" -U "$MYUSER")
  mysql -h "$MYHOST" -P "$MYPORT" -u "$MYUSER" -e "CREATE DATABASE IF NOT EXISTS $DB_G; CREATE DATABASE IF NOT EXISTS $DB_F"
  ;;
postgres)
  PGHOST=${PGHOST:-127.0.0.1}; PGPORT=${PGPORT:-5432}; PGUSER=${PGUSER:-postgres}
  export PGHOST PGPORT PGUSER
  GOTPC_VERSION="(GOTPC)"
  if [ -z "${GOTPC:-}" ]; then
    GOTPC_VERSION=v1.0.12
    GOTPC=$HOME/.cache/fathom-bench/go-tpc-v1.0.12/go-tpc
    if [ ! -x "$GOTPC" ]; then
      GOBIN=$(dirname "$GOTPC") go install github.com/pingcap/go-tpc/cmd/go-tpc@v1.0.12
    fi
  fi
  base="postgres://$PGUSER@$PGHOST:$PGPORT"; params="?sslmode=disable"
  G=(-d postgres -H "$PGHOST" -P "$PGPORT" -U "$PGUSER" --conn-params sslmode=disable)
  for db in "$DB_G" "$DB_F"; do
    [ "$(psql -d postgres -Atc "SELECT count(*) FROM pg_database WHERE datname = '$db'")" = 1 ] || psql -d postgres -qc "CREATE DATABASE $db"
  done
  ;;
*) echo "KIND=$KIND: give mysql or postgres" >&2; exit 2 ;;
esac
TARGET="$base/$DB_F$params"
RUN_TARGET=$TARGET
if [ "$SAME" = 1 ]; then RUN_TARGET="$base/$DB_G$params"; fi

# timed CMD…: runs CMD with its output in $WORK/out (stderr in $WORK/err), client CPU seconds in $cpu,
# wall seconds in $wall.
timed() {
  local tf=$WORK/time
  # shellcheck disable=SC2086 # PIN is a command prefix
  /usr/bin/time -f '%U %S %e' -o "$tf" $PIN "$@" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err" >&2; return 1; }
  cpu=$(awk '{print $1+$2}' "$tf"); wall=$(awk '{print $3}' "$tf")
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
LOADLINE=""
if [ -z "${SKIP_PREPARE:-}" ]; then
  # --no-check: go-tpc's prepare otherwise runs its consistency checks after loading
  # (minutes on MariaDB), which fathom's prepare does not.
  timed "$GOTPC" tpcc prepare "${G[@]}" --warehouses "$W" -D "$DB_G" --dropdata --no-check -T "$LOADERS"
  g_load=$wall; g_load_cpu=$cpu
  timed "$FATHOM" prepare -w tpcc --warehouses "$W" --set loaders="$LOADERS" --target "$TARGET"
  f_load=$wall; f_load_cpu=$cpu
  LOADLINE=$(printf 'load %d warehouses on %s, %s loaders: go-tpc %ss (client CPU %ss), fathom %ss (client CPU %ss), load average %s before' "$W" "$KIND" "$LOADERS" "$g_load" "$g_load_cpu" "$f_load" "$f_load_cpu" "$LOAD_BEFORE")
  echo "$LOADLINE"
fi

ROWS=()
for c in $CLIENTS; do
  for r in $(seq "$ROUNDS"); do
    timed "$GOTPC" tpcc run "${G[@]}" --warehouses "$W" -D "$DB_G" -T "$c" --time "${SECS}s" --interval "${SECS}s"
    # go-tpc's last summary line: "tpmC: N, tpmTotal: N, efficiency: …"; its
    # NEW_ORDER summary line has the count.
    cat "$WORK/err" >>"$WORK/out"
    g_nopm=$(grep -o 'tpmC: [0-9.]*' "$WORK/out" | tail -1 | awk '{print $2}')
    g_no=$(grep '^\[Summary\] NEW_ORDER ' "$WORK/out" | grep -o 'Count: [0-9]*' | tail -1 | awk '{print $2}')
    g_cpu=$cpu
    timed "$FATHOM" run -w tpcc -c "$c" -T "${SECS}s" --max-tries 10 --target "$RUN_TARGET" --store "$WORK/s.db" --json
    read -r f_nopm f_nomin f_no < <(python3 -c "
import json; d = json.load(open('$WORK/out')); t = d['by_transaction']
n = t['new-order']['transactions'] + t['new-order-rollback']['transactions']
print(d['nopm'], n * 60 / d['seconds'], n)")
    f_cpu=$cpu
    row=$(awk -v c="$c" -v r="$r" -v gn="$g_nopm" -v fn="$f_nopm" -v fm="$f_nomin" -v gc="$g_cpu" -v fc="$f_cpu" -v go="${g_no:-0}" -v fo="$f_no" 'BEGIN{
      gu = (go>0) ? gc*1e6/go : 0; fu = (fo>0) ? fc*1e6/fo : 0;
      printf "%7d %5d | %11.0f %11.0f %13.0f %6.2f | %9.0f %9.0f %6.2f", c, r, gn, fn, fm, (gn>0)?fm/gn:0, gu, fu, (gu>0)?fu/gu:0 }')
    ROWS+=("$row"); echo "$row"
  done
done

RTLINE=""
if [ -n "${ROUNDTRIPS:-}" ]; then
  # write(2) calls of the client per transaction (all types): statements, BEGIN and
  # COMMIT each go out in one write; fathom's few sampler queries and go-tpc's output
  # lines are counted too.
  c=${CLIENTS%% *}
  strace -f -qq -c -e trace=write -o "$WORK/st" "$GOTPC" tpcc run "${G[@]}" --warehouses "$W" -D "$DB_G" -T "$c" --time 10s --interval 10s >"$WORK/out" 2>&1
  g_w=$(awk '$NF=="write"{print $4}' "$WORK/st")
  g_t=$(grep '^\[Summary\] ' "$WORK/out" | grep -v '_ERR' | grep -o 'Count: [0-9]*' | awk '{s+=$2} END{print s}')
  strace -f -qq -c -e trace=write -o "$WORK/st" "$FATHOM" run -w tpcc -c "$c" -T 10s --max-tries 10 --target "$RUN_TARGET" --store "$WORK/s.db" --json >"$WORK/out" 2>/dev/null
  f_w=$(awk '$NF=="write"{print $4}' "$WORK/st")
  f_t=$(python3 -c "import json; print(json.load(open('$WORK/out'))['transactions'])")
  RTLINE=$(awk -v gw="$g_w" -v gt="$g_t" -v fw="$f_w" -v ft="$f_t" 'BEGIN{printf "round trips (write calls) per transaction of the mix, %s clients under strace: go-tpc %.1f (%d/%d), fathom %.1f (%d/%d)", "'"$c"'", gw/gt, gw, gt, fw/ft, fw, ft}')
  echo "$RTLINE"
fi

echo
echo "$KIND, go-tpc $GOTPC_VERSION ($GOTPC)"
[ -z "$LOADLINE" ] || echo "$LOADLINE"
[ -z "$RTLINE" ] || echo "$RTLINE"
echo "load average before: $LOAD_BEFORE   after: $(cut -d' ' -f1-3 /proc/loadavg)   ($(nproc) CPUs), $W warehouses, ${SECS}s runs"
RUN_DB=${RUN_TARGET##*/}
echo "fathom on ${RUN_DB%%\?*}${PIN:+, clients under: $PIN}"
printf '%7s %5s | %11s %11s %13s %6s | %9s %9s %6s\n' clients round "go-tpc tpmC" "fathom NOPM" "fathom NO/min" ratio "go-tpc µs" "fathom µs" ratio
printf '%s\n' "${ROWS[@]}"
echo "(NO/min: New-Orders per minute with the 1% rolled back, as go-tpc's tpmC counts; µs: client CPU per such New-Order; ratios fathom/go-tpc)"

echo
if [ -n "${GOTPC_CHECK:-}" ]; then # slow on MariaDB: a correlated sum per customer
  echo "go-tpc check:"; "$GOTPC" tpcc check "${G[@]}" --warehouses "$W" -D "$DB_G" 2>&1 | tail -3 || true
fi
echo "fathom check-data:"; "$FATHOM" check-data -w tpcc --target "$RUN_TARGET" | tail -"$((W + 1))"
