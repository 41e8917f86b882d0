// Package dbtest gives tests the real servers they run against. DSNs come from
// FATHOM_TEST_POSTGRES_DSN and FATHOM_TEST_MYSQL_DSN; without them a test skips with a
// message, unless FATHOM_TEST_REQUIRE=1 (CI), where a missing server fails the test.
package dbtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Required reports whether missing servers must fail tests instead of skipping them.
func Required() bool { return os.Getenv("FATHOM_TEST_REQUIRE") == "1" }

func dsn(t testing.TB, env, what string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if Required() {
			t.Fatalf("%s is not set but FATHOM_TEST_REQUIRE=1: a %s server is required (run `make test`)", env, what)
		}
		t.Skipf("%s not set: skipping %s test (run `make test` to start the servers)", env, what)
	}
	return v
}

// PostgresDSN returns the test PostgreSQL DSN or skips/fails the test.
func PostgresDSN(t testing.TB) string { return dsn(t, "FATHOM_TEST_POSTGRES_DSN", "PostgreSQL") }

// MySQLDSN returns the test MySQL/MariaDB DSN or skips/fails the test.
func MySQLDSN(t testing.TB) string { return dsn(t, "FATHOM_TEST_MYSQL_DSN", "MySQL/MariaDB") }

// RedisURL returns the test Redis URL (FATHOM_TEST_REDIS_URL, e.g.
// redis://127.0.0.1:6379/2: a database number of the test's own) or skips/fails the test.
func RedisURL(t testing.TB) string { return dsn(t, "FATHOM_TEST_REDIS_URL", "Redis") }

// SQLiteDSN returns a DSN for a fresh SQLite database in the test's temp directory.
func SQLiteDSN(t testing.TB) string {
	t.Helper()
	return "sqlite:" + filepath.Join(t.TempDir(), "target.db")
}

// target is a named test DSN, for table tests over all three targets.
type target struct {
	Name string
	DSN  func(t testing.TB) string
}

// All lists the three targets; use t.Run(tg.Name, …) and call tg.DSN(t) inside.
var All = []target{
	{"sqlite", SQLiteDSN},
	{"postgres", PostgresDSN},
	{"mysql", MySQLDSN},
}

// PGBin returns FATHOM_TEST_PG_BIN when pg is true: the bin directory of the PostgreSQL
// version under test in scripts/test-servers.sh's version matrix, for throwaway
// instances of that same version ("" elsewhere: the installed programs are found).
func PGBin(pg bool) string {
	if !pg {
		return ""
	}
	return os.Getenv("FATHOM_TEST_PG_BIN")
}

// SkipMariaDBInPGMatrix skips a test of throwaway MariaDB servers in the PostgreSQL
// version matrix (FATHOM_TEST_PG_MAJOR set by scripts/test-servers.sh --pg-matrix):
// the main run tests them, and repeating them once per PostgreSQL version only costs
// time.
func SkipMariaDBInPGMatrix(t testing.TB) {
	t.Helper()
	if v := os.Getenv("FATHOM_TEST_PG_MAJOR"); v != "" {
		t.Skipf("PostgreSQL %s matrix run: MariaDB throwaway servers are tested in the main run", v)
	}
}
