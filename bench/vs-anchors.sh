#!/usr/bin/env bash
# Runs fathom beside the anchor tools on the same server, rows, clients and duration,
# at several client counts:
#   pgbench -S -M prepared -j 2    vs  fathom run --workload tpcb-select       (PostgreSQL)
#   sysbench oltp_point_select     vs  fathom run --workload oltp_point_select (MariaDB)
#   redis-benchmark -t get,set -P P vs fathom run --workload redis-bench --pipeline P (Redis)
# and prints, for each pair and client count, throughput, client CPU per transaction
# (user+sys of the client process) and resident memory (max RSS), all from
# /usr/bin/time, with fathom's ratio to the anchor. Runs alternate (anchor, fathom,
# anchor, fathom …) so that drift on a shared machine hits both; ratios are quoted from
# one run of the script.
#
# Each part runs on a throwaway instance (fathom instance) with max_connections raised,
# unless PGURL / MYURL name a server: PostgreSQL, MariaDB for MY_CLIENTS, and for the BIG
# count a MariaDB with thread_handling=pool-of-threads.
# The HUGE part (10,000 clients from one process, issue 33) always runs on throwaway
# instances sized for it: redis-benchmark -c HUGE beside redis-bench -c HUGE on a Redis
# with maxclients raised, and sysbench --threads=HUGE beside fathom -c HUGE on a
# thread-pool MariaDB with max_connections raised. Both tools' figures include their
# connecting (CPU and RSS are the whole process's; throughput is each tool's own
# measured time): at 10,000 clients connecting is a good part of a short run. The
# open-files limit must allow it (`ulimit -n` above HUGE + 200, for the servers too).
#
# Environment (defaults suit the development machine):
#   PGURL          postgres URL (default: a throwaway instance, max_connections=300)
#   MYURL          mysql URL (default: a throwaway instance, max_connections=300)
#   PG_CLIENTS="1 32 96"   MY_CLIENTS="1 32 128"   BIG=1000 (0: skip the big MariaDB run)
#   HUGE=10000 (0: skip the 10,000-client runs)  HUGE_REDIS_REQUESTS=20000 (per test: about 10 s at the 4,000 a second measured,
#     so that both tools spread their connecting over about as many requests)
#   PORT_RANGE=A-B   ports for the throwaway instances (default: any free port)
#   SECONDS_PER_RUN=10  ROUNDS=1  SCALE=10  TABLE_SIZE=100000
#   PGBENCH_JOBS=2   pgbench's -j (threads multiplexing the clients)
#   REDIS_CLIENTS=50  REDIS_PIPELINES="1 16"  REDIS_KEYS=100000  REDIS_REQUESTS=500000
#   ONLY=pg|mysql|big|redis|huge   to run one part (huge-redis, huge-my: half of it)
#   TRANSPORT=tcp|unix|"tcp unix"   how both tools reach PostgreSQL and MariaDB: TCP to
#                  the URL's host and port, or the server's Unix-domain socket (the same
#                  database; each pair runs both tools on the same transport, and with a
#                  list each client count runs one pair per transport, interleaved).
#                  For a named server the socket is PGSOCKDIR (default
#                  /var/run/postgresql) and MYSOCK (default /run/mysqld/mysqld.sock);
#                  for a throwaway instance, its own. Neither tool uses TLS on either
#                  (a PGURL without sslmode= gets sslmode=disable; fathom's recorded
#                  transport is printed beside each pair to show it).
# Redis: a throwaway instance; redis-benchmark gets its password with -a (the
# instance's, removed with it): redis-benchmark takes it no other way, so while it runs
# other local users can read it in the process list. Its tps column is requests (commands) per second: the
# SET and GET tests' requests over their summed times; fathom's is statements per
# second of a 50/50 SET/GET mix. CPU per transaction is per request.
set -euo pipefail
cd "$(dirname "$0")/.."

MYURL=${MYURL:-}
PG_CLIENTS=${PG_CLIENTS:-1 32 96}
MY_CLIENTS=${MY_CLIENTS:-1 32 128}
BIG=${BIG:-1000}
HUGE=${HUGE:-10000}
SECS=${SECONDS_PER_RUN:-10}
ROUNDS=${ROUNDS:-1}
SCALE=${SCALE:-10}
TABLE_SIZE=${TABLE_SIZE:-100000}
ONLY=${ONLY:-}
PGBENCH_JOBS=${PGBENCH_JOBS:-2}
TRANSPORT=${TRANSPORT:-tcp}
for tr in $TRANSPORT; do
  case "$tr" in tcp|unix) ;; *) echo "vs-anchors.sh: TRANSPORT must be tcp, unix or \"tcp unix\", not $tr" >&2; exit 2 ;; esac
done
PORT_RANGE=${PORT_RANGE:-}
RANGE_FLAG=(); [ -n "$PORT_RANGE" ] && RANGE_FLAG=(--port-range "$PORT_RANGE")
WORK=$(mktemp -d); chmod 755 "$WORK"
STORE=$WORK/bench.db
export FATHOM_INSTANCE_DIR=$WORK/instances
FATHOM=./bin/fathom
go build -o "$FATHOM" ./cmd/fathom
INSTANCES=()
cleanup() {
  for i in "${INSTANCES[@]}"; do "$FATHOM" instance stop "$i" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# timed CMD… : runs CMD, saves its stdout in $out, its client CPU seconds in $cpu and
# its max RSS in MB in $rss.
timed() {
  local tf; tf=$(mktemp)
  out=$(/usr/bin/time -f '%U %S %M' -o "$tf" "$@")
  cpu=$(awk '{print $1+$2}' "$tf"); rss=$(awk '{printf "%.0f", $3/1024}' "$tf"); rm -f "$tf"
}
# (b+0, t+0: a figure that is missing or n/a counts as none, never as a string)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a+0>0 && b+0>0) printf "%.2f", a/b; else print "n/a" }'; }
per_tx_us() { awk -v c="$1" -v t="$2" 'BEGIN{ if (t+0>0) printf "%.1f", c*1e6/t; else print "n/a" }'; }
add() { awk -v a="$1" -v b="$2" 'BEGIN{print a+b}'; }
# tps and n stay numbers when a tool printed none (0 transactions, an aborted run).
num() { awk -v x="$1" 'BEGIN{ print x+0 }'; }
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

# recorded_transport RUN_ID: the transport fathom recorded with the run (host.transport).
recorded_transport() {
  "$FATHOM" show --store "$STORE" --json "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['run']['host'].get('transport','?'))"
}

# pg_url TRANSPORT URL SOCKDIR: URL on TCP (as given) or on the Unix-domain socket in
# SOCKDIR (host= in the query, the URL's port kept: it names the socket file), and with
# sslmode=disable unless the URL sets sslmode.
pg_url() {
  python3 - "$@" <<'PY'
import sys, urllib.parse as up
tr, url, sockdir = sys.argv[1:4]
u = up.urlsplit(url)
q = up.parse_qsl(u.query, keep_blank_values=True)
if not any(k == "sslmode" for k, _ in q):
    q.append(("sslmode", "disable"))
netloc = u.netloc
if tr == "unix":
    userinfo, _, hostport = netloc.rpartition("@")
    port = hostport.rpartition(":")[2] if ":" in hostport else ""
    q = [(k, v) for k, v in q if k not in ("host", "hostaddr", "port")]
    q.append(("host", sockdir))
    if port:
        q.append(("port", port))
    netloc = userinfo + "@" if userinfo else ""
print(up.urlunsplit((u.scheme, netloc, u.path, up.urlencode(q, safe="/"), u.fragment)))
PY
}

ROWS=()
# row PAIR CLIENTS anchor_tps anchor_cpu anchor_tx anchor_rss fathom_tps fathom_cpu fathom_tx fathom_rss SPREAD
row() {
  local au fu; au=$(per_tx_us "$4" "$5"); fu=$(per_tx_us "$8" "$9")
  ROWS+=("$(printf '%-10s %7s | %10.0f %10.0f %6s | %8s %8s %6s | %7s %7s | %s' "$1" "$2" "$3" "$7" "$(ratio "$7" "$3")" "$au" "$fu" "$(ratio "$fu" "$au")" "$6" "${10}" "${11}")")
  echo "${ROWS[-1]}"
}
table() {
  echo
  echo "load average before: $LOAD_BEFORE   after: $(cut -d' ' -f1-3 /proc/loadavg)   ($(nproc) CPUs)"
  printf '%-10s %7s | %10s %10s %6s | %8s %8s %6s | %7s %7s | %s\n' pair clients "anchor tps" "fathom tps" ratio "anchor µs" "fathom µs" ratio "anch MB" "fath MB" "per-round ratios tps; µs"
  printf '%s\n' "${ROWS[@]}"
  echo "(µs: client CPU per transaction; MB: max RSS; ratios fathom/anchor, averaged over $ROUNDS round(s) of ${SECS}s;"
  echo " the last column gives each round's own ratios, anchor and fathom run back to back: their spread is this machine's noise)"
}

# pair NAME CLIENTS ANCHOR_FN FATHOM_URL WORKLOAD
pair() {
  local name=$1 c=$2 anchor=$3 url=$4 wl=$5
  local at=0 ac=0 an=0 am=0 ft=0 fc=0 fn=0 fm=0 spread="" rt rc
  for r in $(seq "$ROUNDS"); do
    "$anchor" "$c"
    rt=$tps; rc=$(per_tx_us "$cpu" "$n")
    echo "  $name c=$c round $r anchor: $tps tps, $n tx, ${cpu}s cpu, ${rss} MB"
    at=$(add "$at" "$tps"); ac=$(add "$ac" "$cpu"); an=$((an+n)); am=$(( rss > am ? rss : am ))
    timed "$FATHOM" run --store "$STORE" --target "$url" --workload "$wl" -c "$c" -T "$SECS" --json -q
    tps=$(json_field tps <<<"$out"); n=$(json_field transactions <<<"$out")
    echo "  $name c=$c round $r fathom: $tps tps, $n tx, ${cpu}s cpu, ${rss} MB, transport $(recorded_transport "$(json_field run_id <<<"$out")")"
    ft=$(add "$ft" "$tps"); fc=$(add "$fc" "$cpu"); fn=$((fn+n)); fm=$(( rss > fm ? rss : fm ))
    spread+="${spread:+, }$(ratio "$tps" "$rt"); $(ratio "$(per_tx_us "$cpu" "$n")" "$rc")"
  done
  row "$name" "$c" "$(awk -v a="$at" -v r="$ROUNDS" 'BEGIN{print a/r}')" "$ac" "$an" "$am" \
    "$(awk -v a="$ft" -v r="$ROUNDS" 'BEGIN{print a/r}')" "$fc" "$fn" "$fm" "$spread"
}

pgbench_run() {
  timed pgbench -n -S -M prepared -c "$1" -j "$(( PGBENCH_JOBS < $1 ? PGBENCH_JOBS : $1 ))" -T "$SECS" "$PGRUN"
  tps=$(num "$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -1)")
  n=$(num "$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")")
}

pg_part() {
  local sockdir=${PGSOCKDIR:-/var/run/postgresql}
  if [ -z "${PGURL:-}" ]; then
    "$FATHOM" instance start --kind postgres --name benchpg "${RANGE_FLAG[@]}" --set max_connections=300 --set shared_buffers=256MB >/dev/null
    INSTANCES+=(benchpg)
    PGURL=$("$FATHOM" instance dsn benchpg)
    sockdir=$FATHOM_INSTANCE_DIR/benchpg
  else
    local db=${PGURL##*/}; db=${db%%\?*}
    psql -X -q "${PGURL%/*}/postgres" -c "CREATE DATABASE $db" 2>/dev/null || true
  fi
  echo "== PostgreSQL: pgbench -S -M prepared -j $PGBENCH_JOBS vs fathom tpcb-select, scale $SCALE"
  pgbench -q -i -s "$SCALE" "$(pg_url tcp "$PGURL" "")" >/dev/null 2>&1
  for c in $PG_CLIENTS; do
    for tr in $TRANSPORT; do
      PGRUN=$(pg_url "$tr" "$PGURL" "$sockdir")
      pair "pg-$tr" "$c" pgbench_run "$PGRUN" tpcb-select
    done
  done
}

# my_setup URL: sets SB (the sysbench command for URL) and prepares its table.
my_setup() {
  local rest=${1#mysql://} userinfo host db user
  userinfo=${rest%%@*}; rest=${rest#*@}; host=${rest%%/*}; db=${rest#*/}; db=${db%%\?*}
  user=${userinfo%%:*}
  local hostname=${host%%:*} port=${host##*:}; [ "$port" = "$host" ] && port=3306
  # A throwaway instance's DSN names its [client] defaults file (defaults-file=PATH) for
  # the password: hand it to the mariadb client and sysbench as MYSQL_PWD, which both
  # read when given no password, so that it is on no command line.
  local q=${1#*\?} dfile=""
  [ "$q" != "$1" ] && dfile=$(sed -n 's/.*defaults-file=\([^&]*\).*/\1/p' <<<"$q")
  if [ -n "$dfile" ]; then
    dfile=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.unquote(sys.argv[1]))' "$dfile")
    MYSQL_PWD=$(sed -n 's/^ *password *= *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$dfile" | head -1)
    export MYSQL_PWD
  fi
  mariadb -u"$user" -h"$hostname" -P"$port" -e "CREATE DATABASE IF NOT EXISTS $db"
  SB=(sysbench --db-driver=mysql --mysql-user="$user" --mysql-host="$hostname" --mysql-port="$port" --mysql-db="$db" --tables=1 --table-size="$TABLE_SIZE")
  # On the socket: libmysqlclient takes it for host localhost.
  SB_UNIX=(sysbench --db-driver=mysql --mysql-user="$user" --mysql-host=localhost --mysql-socket="${2:-}" --mysql-db="$db" --tables=1 --table-size="$TABLE_SIZE")
  SB_RUN=("${SB[@]}")
  "${SB[@]}" oltp_point_select cleanup >/dev/null 2>&1 || true
  "${SB[@]}" oltp_point_select prepare >/dev/null
}

sysbench_run() {
  timed "${SB_RUN[@]}" oltp_point_select run --threads="$1" --time="$SECS"
  n=$(num "$(sed -n 's/^ *transactions: *\([0-9]*\) *(\([0-9.]*\) per sec.*/\1/p' <<<"$out")")
  tps=$(num "$(sed -n 's/^ *transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' <<<"$out")")
}

# my_url TRANSPORT URL SOCKET: URL as given (TCP), or on SOCKET (socket= in the query).
my_url() {
  python3 - "$@" <<'PY'
import sys, urllib.parse as up
tr, url, sock = sys.argv[1:4]
if tr == "unix":
    u = up.urlsplit(url)
    q = [(k, v) for k, v in up.parse_qsl(u.query, keep_blank_values=True) if k != "socket"]
    q.append(("socket", sock))
    userinfo = u.netloc.rpartition("@")[0]
    url = up.urlunsplit((u.scheme, (userinfo + "@" if userinfo else "") + "localhost", u.path, up.urlencode(q, safe="/"), u.fragment))
print(url)
PY
}

my_part() {
  local sock=${MYSOCK:-/run/mysqld/mysqld.sock}
  if [ -z "$MYURL" ]; then
    "$FATHOM" instance start --kind mariadb --name benchmy1 "${RANGE_FLAG[@]}" --set max_connections=300 --set innodb_buffer_pool_size=256M >/dev/null
    INSTANCES+=(benchmy1)
    MYURL=$("$FATHOM" instance dsn benchmy1)
    sock=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["socket"])' "$FATHOM_INSTANCE_DIR/benchmy1/instance.json")
  fi
  echo "== MariaDB: sysbench oltp_point_select vs fathom oltp_point_select, $TABLE_SIZE rows"
  my_setup "$MYURL" "$sock"
  for c in $MY_CLIENTS; do
    for tr in $TRANSPORT; do
      if [ "$tr" = unix ]; then SB_RUN=("${SB_UNIX[@]}"); else SB_RUN=("${SB[@]}"); fi
      pair "my-$tr" "$c" sysbench_run "$(my_url "$tr" "$MYURL" "$sock")" oltp_point_select
    done
  done
  "${SB[@]}" oltp_point_select cleanup >/dev/null 2>&1 || true
}

big_part() {
  [ "$BIG" -gt 0 ] || return 0
  echo "== MariaDB (throwaway, thread pool): $BIG clients"
  "$FATHOM" instance start --kind mariadb --name benchmy "${RANGE_FLAG[@]}" --set max_connections=$((BIG + 100)) \
    --set thread_handling=pool-of-threads --set innodb_buffer_pool_size=256M >/dev/null
  INSTANCES+=(benchmy)
  local url; url=$("$FATHOM" instance dsn benchmy)
  my_setup "$url"
  pair my-pool "$BIG" sysbench_run "$url" oltp_point_select
}

redis_part() {
  "$FATHOM" instance start --kind redis --name benchredis "${RANGE_FLAG[@]}" --set 'save=""' --set appendonly=no >/dev/null
  INSTANCES+=(benchredis)
  local url port pw
  url=$("$FATHOM" instance dsn benchredis)
  port=${url#redis://127.0.0.1:}; port=${port%%/*}
  pw=$(grep -v '^#' "$FATHOM_INSTANCE_DIR/benchredis/redis.pass")
  local keys=${REDIS_KEYS:-100000} nreq=${REDIS_REQUESTS:-500000}
  "$FATHOM" prepare --target "$url" --workload redis-bench --set keys="$keys" >/dev/null
  for p in ${REDIS_PIPELINES:-1 16}; do
    for c in ${REDIS_CLIENTS:-50}; do
      redisbench_run() {
        timed redis-benchmark --csv -h 127.0.0.1 -p "$port" -a "$pw" -t set,get -c "$1" -P "$p" -r "$keys" -d 3 -n "$nreq" 2>/dev/null
        # "SET","123456.79",… : requests over the two tests' summed times
        tps=$(awk -F'"' -v n="$nreq" '$2=="SET"||$2=="GET"{t+=n/$4; k+=n} END{if(t>0) printf "%.0f", k/t}' <<<"$out")
        n=$((2 * nreq))
      }
      pair_redis "redis-P$p" "$c" redisbench_run "$url" "$p"
    done
  done
}

# pair_redis NAME CLIENTS ANCHOR_FN URL PIPELINE: as pair, counting statements (commands).
pair_redis() {
  local name=$1 c=$2 anchor=$3 url=$4 p=$5
  local at=0 ac=0 an=0 am=0 ft=0 fc=0 fn=0 fm=0 spread="" rt rc
  for r in $(seq "$ROUNDS"); do
    "$anchor" "$c"
    rt=$tps; rc=$(per_tx_us "$cpu" "$n")
    echo "  $name c=$c round $r anchor: $tps req/s, $n req, ${cpu}s cpu, ${rss} MB"
    at=$(add "$at" "$tps"); ac=$(add "$ac" "$cpu"); an=$((an+n)); am=$(( rss > am ? rss : am ))
    timed "$FATHOM" run --store "$STORE" --target "$url" --workload redis-bench --set tests=set,get --set keys="${REDIS_KEYS:-100000}" --pipeline "$p" -c "$c" -T "$SECS" --json -q
    tps=$(json_field qps <<<"$out"); n=$(json_field statements <<<"$out")
    echo "  $name c=$c round $r fathom: $tps req/s, $n req, ${cpu}s cpu, ${rss} MB"
    ft=$(add "$ft" "$tps"); fc=$(add "$fc" "$cpu"); fn=$((fn+n)); fm=$(( rss > fm ? rss : fm ))
    spread+="${spread:+, }$(ratio "$tps" "$rt"); $(ratio "$(per_tx_us "$cpu" "$n")" "$rc")"
  done
  row "$name" "$c" "$(awk -v a="$at" -v r="$ROUNDS" 'BEGIN{print a/r}')" "$ac" "$an" "$am" \
    "$(awk -v a="$ft" -v r="$ROUNDS" 'BEGIN{print a/r}')" "$fc" "$fn" "$fm" "$spread"
}

# huge_part [redis|my]: HUGE clients from one process against Redis and a thread-pool
# MariaDB, each anchor at the same count.
huge_part() {
  [ "$HUGE" -gt 0 ] || return 0
  local need=$((HUGE + 200)) have; have=$(ulimit -n)
  if [ "$have" != unlimited ] && [ "$have" -lt "$need" ]; then
    ulimit -n "$need" 2>/dev/null || { echo "vs-anchors: $HUGE clients need $need open files, the limit is $have: raise it (ulimit -n $need as root) or set HUGE lower" >&2; exit 2; }
  fi
  if [ "${1:-redis}" = redis ]; then
    echo "== Redis (throwaway, maxclients $((HUGE + 100))): $HUGE clients"
    "$FATHOM" instance start "${RANGE_FLAG[@]}" --kind redis --name benchredis10k --set maxclients=$((HUGE + 100)) --set 'save=""' --set appendonly=no >/dev/null
    INSTANCES+=(benchredis10k)
    local url port pw keys=${REDIS_KEYS:-100000} nreq=${HUGE_REDIS_REQUESTS:-20000}
    url=$("$FATHOM" instance dsn benchredis10k)
    port=${url#redis://127.0.0.1:}; port=${port%%/*}
    pw=$(grep -v '^#' "$FATHOM_INSTANCE_DIR/benchredis10k/redis.pass")
    "$FATHOM" prepare --target "$url" --workload redis-bench --set keys="$keys" >/dev/null
    hugeredis_run() {
      timed redis-benchmark --csv -h 127.0.0.1 -p "$port" -a "$pw" -t set,get -c "$1" -P 1 -r "$keys" -d 3 -n "$nreq" 2>/dev/null
      tps=$(awk -F'"' -v n="$nreq" '$2=="SET"||$2=="GET"{t+=n/$4; k+=n} END{if(t>0) printf "%.0f", k/t}' <<<"$out")
      n=$((2 * nreq))
    }
    pair_redis "redis-P1" "$HUGE" hugeredis_run "$url" 1
  fi
  if [ "${1:-my}" = my ]; then
    echo "== MariaDB (throwaway, thread pool, max_connections $((HUGE + 100))): $HUGE clients"
    "$FATHOM" instance start "${RANGE_FLAG[@]}" --kind mariadb --name benchmy10k --set max_connections=$((HUGE + 100)) \
      --set thread_handling=pool-of-threads --set innodb_buffer_pool_size=256M >/dev/null
    INSTANCES+=(benchmy10k)
    local murl; murl=$("$FATHOM" instance dsn benchmy10k)
    my_setup "$murl"
    pair my-pool "$HUGE" sysbench_run "$murl" oltp_point_select
  fi
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
case "$ONLY" in
  pg) pg_part ;;
  mysql) my_part ;;
  big) big_part ;;
  redis) redis_part ;;
  huge) huge_part redis; huge_part my ;;
  huge-redis) huge_part redis ;;
  huge-my) huge_part my ;;
  *) pg_part; my_part; big_part; redis_part; huge_part redis; huge_part my ;;
esac
table
