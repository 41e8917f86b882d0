#!/usr/bin/env bash
# The Redis persistence study (issue 18), on throwaway Redis instances of this machine:
#
#  1. Writes under each appendfsync policy (always, everysec, no; appendonly yes), with
#     an AOF rewrite (BGREWRITEAOF) started mid-run by a background hook, and one cell
#     with the AOF off and an RDB snapshot (BGSAVE) mid-run instead. For each cell:
#     throughput and p99 of the seconds before the rewrite/snapshot against the seconds
#     it ran (from fathom export's per-second intervals; the hook notes when it started
#     and when INFO said it ended).
#  2. Restart times: a measured restart (fathom instance restart --measure) with the AOF
#     and with the RDB file, at two data set sizes.
#
# Environment: KEYS=1000000 VALUE=1000 (bytes; the mid-run cells' data set), CLIENTS=8,
# SECS=30, AT=10 (seconds into the run when the hook fires), SIZES="250000 1000000"
# (keys of VALUE bytes for the restart part), ONLY=load|restart.
# It prints a table per part. Figures are from one run of the script on a shared
# machine: quote them as such.
set -euo pipefail
cd "$(dirname "$0")/.."
KEYS=${KEYS:-1000000}; VALUE=${VALUE:-1000}; CLIENTS=${CLIENTS:-8}; SECS=${SECS:-30}; AT=${AT:-10}
SIZES=${SIZES:-250000 1000000}; ONLY=${ONLY:-}
WORK=$(mktemp -d); chmod 755 "$WORK"
export FATHOM_INSTANCE_DIR=$WORK/instances
STORE=$WORK/study.db
FATHOM=./bin/fathom
go build -o "$FATHOM" ./cmd/fathom
INSTANCES=()
cleanup() {
  for i in "${INSTANCES[@]}"; do "$FATHOM" instance stop "$i" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# start NAME SETTING=VALUE…: a fresh instance; sets URL and CLI (redis-cli on its socket,
# password from REDISCLI_AUTH, never on the command line).
start() {
  local name=$1; shift
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  "$FATHOM" instance start --kind redis --name "$name" "${sets[@]}" >/dev/null
  INSTANCES+=("$name")
  URL=$("$FATHOM" instance dsn "$name")
  export REDISCLI_AUTH; REDISCLI_AUTH=$(grep -v '^#' "$FATHOM_INSTANCE_DIR/$name/redis.pass")
  CLI=(redis-cli -s "$FATHOM_INSTANCE_DIR/$name/redis.sock" --no-auth-warning)
}

# hook CMD FLAG: after AT seconds sends CMD, then polls INFO persistence until FLAG is 0;
# writes "start end" (seconds since the hook started) to $WORK/hook.
hook() {
  local cmd=$1 flag=$2 t0; t0=$(date +%s.%N)
  sleep "$AT"
  local s; s=$(date +%s.%N)
  "${CLI[@]}" "$cmd" >/dev/null
  while "${CLI[@]}" info persistence | grep -q "^$flag:1"; do sleep 0.05; done
  local e; e=$(date +%s.%N)
  awk -v t0="$t0" -v s="$s" -v e="$e" 'BEGIN{printf "%.2f %.2f\n", s-t0, e-t0}' >"$WORK/hook"
}

ROWS=()
# cell LABEL CMD FLAG: prepare, run with the hook, compare before against during.
cell() {
  local label=$1 cmd=$2 flag=$3
  "$FATHOM" prepare --target "$URL" --workload redis-kv --set keys="$KEYS" --set value_size="$VALUE" >/dev/null
  "${CLI[@]}" bgrewriteaof >/dev/null 2>&1 || true # start from a compact AOF
  while "${CLI[@]}" info persistence | grep -q "^aof_rewrite_in_progress:1"; do sleep 0.1; done
  hook "$cmd" "$flag" &
  local hp=$!
  local out; out=$("$FATHOM" run --store "$STORE" --target "$URL" --workload redis-kv --set keys="$KEYS" \
    --set value_size="$VALUE" --set read=50 -c "$CLIENTS" -T "$SECS" --json -q)
  wait "$hp"
  local run; run=$(python3 -c "import json,sys; print(json.load(sys.stdin)['run_id'])" <<<"$out")
  read -r hs he <"$WORK/hook"
  local fork; fork=$("${CLI[@]}" info stats | sed -n 's/^latest_fork_usec:\([0-9]*\).*/\1/p' | tr -d '\r')
  local line
  line=$("$FATHOM" export "$run" --store "$STORE" --format csv | awk -F, -v hs="$hs" -v he="$he" '
    $5=="all" && $4=="false" {
      # before: whole intervals from 2 s to the hook; during: intervals overlapping it
      if ($3 <= hs && $2 >= 2) { bt+=$6; bn++; if ($18>bp) bp=$18 }
      else if ($3 > hs && $2 < he + 0.0) { dt+=$6; dn++; if ($18>dp) dp=$18 }
    }
    END { printf "%8.0f %8.3f | %8.0f %8.3f %5d | %6.2f", (bn?bt/bn:0), bp, (dn?dt/dn:0), dp, dn, (bn&&bt?(dt/dn)/(bt/bn):0) }')
  ROWS+=("$(printf '%-22s | %s | %6.2f s %7.1f ms' "$label" "$line" "$(awk -v a="$hs" -v b="$he" 'BEGIN{print b-a}')" "$(awk -v f="${fork:-0}" 'BEGIN{print f/1000}')")")
  echo "${ROWS[-1]}"
}

load_part() {
  echo "== writes during an AOF rewrite / RDB snapshot: redis-kv 50% SET, $KEYS keys of $VALUE B, $CLIENTS clients, ${SECS}s, hook at ${AT}s"
  for fs in always everysec no; do
    start "aof-$fs" appendonly=yes appendfsync=$fs 'save=""'
    cell "AOF $fs + BGREWRITEAOF" BGREWRITEAOF aof_rewrite_in_progress
    "$FATHOM" instance stop "aof-$fs" >/dev/null
  done
  start rdb appendonly=no 'save=""'
  cell "RDB + BGSAVE" BGSAVE rdb_bgsave_in_progress
  "$FATHOM" instance stop rdb >/dev/null
  echo
  printf '%-22s | %8s %8s | %8s %8s %5s | %6s | %8s %9s\n' cell "tps bef" "p99 bef" "tps dur" "p99 dur" "ivals" ratio "took" fork
  printf '%s\n' "${ROWS[@]}"
  echo "(p99 in ms: the worst second's p99; tps: mean of per-second throughput; ratio: during/before)"
}

restart_part() {
  echo "== restart time: fathom instance restart --measure"
  local out=()
  for n in $SIZES; do
    start "rs-aof-$n" appendonly=yes appendfsync=everysec 'save=""'
    "$FATHOM" prepare --target "$URL" --workload redis-kv --set keys="$n" --set value_size="$VALUE" >/dev/null
    "${CLI[@]}" bgrewriteaof >/dev/null; while "${CLI[@]}" info persistence | grep -q "^aof_rewrite_in_progress:1"; do sleep 0.1; done
    out+=("AOF (RDB preamble) $n keys: $("$FATHOM" instance restart "rs-aof-$n" --measure)")
    echo "${out[-1]}"
    "$FATHOM" instance stop "rs-aof-$n" >/dev/null
    start "rs-rdb-$n" appendonly=no 'save=""'
    "$FATHOM" prepare --target "$URL" --workload redis-kv --set keys="$n" --set value_size="$VALUE" >/dev/null
    "${CLI[@]}" save >/dev/null
    out+=("RDB $n keys: $("$FATHOM" instance restart "rs-rdb-$n" --measure)")
    echo "${out[-1]}"
    "$FATHOM" instance stop "rs-rdb-$n" >/dev/null
  done
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
case "$ONLY" in
  load) load_part ;;
  restart) restart_part ;;
  *) load_part; restart_part ;;
esac
echo "load average before: $LOAD_BEFORE   after: $(cut -d' ' -f1-3 /proc/loadavg)   ($(nproc) CPUs)"
