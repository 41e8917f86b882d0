package dbtest

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// PostgresDatabase returns a DSN for a database of the test server named fathom_<name> (see prefix),
// created if needed. Packages whose tests use fixed table names (pgbench_*, sbtest*)
// use one each, so that `go test ./...` can run packages in parallel.
func PostgresDatabase(t testing.TB, name string) string {
	t.Helper()
	base := PostgresDSN(t)
	db := prefix() + name
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connecting to the test PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE DATABASE "`+db+`"`).ReadAll()
	var pe *pgconn.PgError
	if err != nil && !(errors.As(err, &pe) && (pe.Code == "42P04" || pe.Code == "23505")) {
		t.Fatalf("creating database %s: %v", db, err)
	}
	return withPath(t, base, db)
}

// MySQLDatabase is PostgresDatabase for the test MySQL/MariaDB server.
func MySQLDatabase(t testing.TB, name string) string {
	t.Helper()
	base := MySQLDSN(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("FATHOM_TEST_MYSQL_DSN: %v", err)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	if s := u.Query().Get("socket"); s != "" {
		cfg.Net, cfg.Addr = "unix", s
	} else {
		cfg.Net, cfg.Addr = "tcp", u.Host
		if !strings.Contains(u.Host, ":") {
			cfg.Addr += ":3306"
		}
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sdb := sql.OpenDB(c)
	defer sdb.Close()
	db := prefix() + name
	if _, err := sdb.Exec("CREATE DATABASE IF NOT EXISTS `" + db + "`"); err != nil {
		t.Fatalf("creating database %s: %v", db, err)
	}
	return withPath(t, base, db)
}

// Prefix starts the names of databases tests make for themselves (see prefix).
func Prefix() string { return prefix() }

// prefix starts the names of the databases tests derive: fathom_, or
// FATHOM_TEST_DB_PREFIX when several checkouts run their tests against one server at once.
func prefix() string {
	if p := os.Getenv("FATHOM_TEST_DB_PREFIX"); p != "" {
		return p
	}
	return "fathom_"
}

func withPath(t testing.TB, dsn, db string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		t.Fatalf("test DSN %q must be a URL to derive a database from it", dsn)
	}
	u.Path = "/" + db
	return u.String()
}
