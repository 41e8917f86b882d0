#!/usr/bin/env bash
# Makes sure local PostgreSQL and MariaDB servers (and chromium) are up for the tests, points
# FATHOM_TEST_POSTGRES_DSN and FATHOM_TEST_MYSQL_DSN at them, then runs "$@".
# Servers that are already running are used as they are. Missing ones are started if
# installed, and installed from Debian packages when running as root with apt-get.
# DSNs already set in the environment are respected and nothing is started for them.
set -u

log() { echo "test-servers: $*" >&2; }
as_root() { [ "$(id -u)" = 0 ]; }
apt_updated=
apt_install() {
  as_root && command -v apt-get >/dev/null || { log "cannot install $* (not root or no apt-get)"; return 1; }
  if [ -z "$apt_updated" ]; then DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 && apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}
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
  fi
  if ! my_up; then
    log "starting MariaDB"
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd >&2 2>/dev/null || \
      (command -v mysqld_safe >/dev/null && (mysqld_safe >/dev/null 2>&1 &))
    wait_for 30 my_up || { log "MariaDB is not accepting connections on 127.0.0.1:3306"; return 1; }
  fi
  mariadb -uroot -h127.0.0.1 -e 'CREATE DATABASE IF NOT EXISTS test' >/dev/null 2>&1 || true
  export FATHOM_TEST_MYSQL_DSN="mysql://root@127.0.0.1:3306/test"
}

# The HTML report's browser test drives Debian's chromium.
ensure_chromium() {
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 && return 0
  log "installing chromium for the report's browser test"; apt_install chromium
}

ensure_chromium || log "chromium unavailable: the browser test will skip (or fail with FATHOM_TEST_REQUIRE=1)"
ensure_postgres || log "PostgreSQL unavailable: its tests will skip (or fail with FATHOM_TEST_REQUIRE=1)"
ensure_mysql || log "MariaDB unavailable: its tests will skip (or fail with FATHOM_TEST_REQUIRE=1)"
log "FATHOM_TEST_POSTGRES_DSN=${FATHOM_TEST_POSTGRES_DSN:-unset} FATHOM_TEST_MYSQL_DSN=${FATHOM_TEST_MYSQL_DSN:-unset}"
exec "$@"
