// Package targets opens a target from its DSN: the one place that knows every target
// kind. The registry is an explicit map; the DSN's scheme picks the entry.
package targets

import (
	"sort"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/mysql"
	"github.com/fathom-lab/fathom/internal/target/postgres"
	"github.com/fathom-lab/fathom/internal/target/sqlite"
)

// opener opens one kind of target.
type opener func(dsn string, cfg target.Config) (target.Target, error)

// registry maps a DSN prefix to its target.
var registry = map[string]opener{
	"postgres://":   openPostgres,
	"postgresql://": openPostgres,
	"mysql://":      openMySQL,
	"mariadb://":    openMySQL,
	"sqlite:":       openSQLite,
}

func openPostgres(dsn string, cfg target.Config) (target.Target, error) {
	return postgres.Open(dsn, cfg)
}

func openMySQL(dsn string, cfg target.Config) (target.Target, error) { return mysql.Open(dsn, cfg) }

func openSQLite(dsn string, cfg target.Config) (target.Target, error) { return sqlite.Open(dsn, cfg) }

// Open parses a DSN and returns its target without connecting. Besides the URL forms,
// a libpq key=value string (host=… dbname=…) is PostgreSQL. Errors are one line and
// never contain a password.
func Open(dsn string, cfg target.Config) (target.Target, error) {
	d := strings.TrimSpace(dsn)
	var prefixes []string
	for p := range registry {
		prefixes = append(prefixes, p)
	}
	sort.Slice(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })
	for _, p := range prefixes {
		if strings.HasPrefix(d, p) {
			return registry[p](d, cfg)
		}
	}
	if isKeyValue(d) {
		return openPostgres(d, cfg)
	}
	what := "unknown target"
	if scheme, _, ok := strings.Cut(d, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, "@:/ ") {
		what = "unknown target kind " + strconv.Quote(scheme)
	} else if d == "" {
		what = "unknown target: the DSN is empty"
	}
	// The DSN itself is not shown: in a form fathom does not know, a password cannot be
	// found and masked reliably.
	return nil, target.Errorf(target.ClassOther, "", "%s: use postgres://user@host/db, mysql://user@host/db, sqlite:PATH, or libpq's host=… dbname=…", what)
}

// isKeyValue reports whether s looks like a libpq key=value connection string.
func isKeyValue(s string) bool {
	if !strings.Contains(s, "=") || strings.Contains(s, "://") {
		return false
	}
	key, _, _ := strings.Cut(s, "=")
	switch strings.TrimSpace(strings.ToLower(key)) {
	case "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service",
		"sslmode", "application_name", "connect_timeout", "options":
		return true
	}
	return false
}

// Kind reports the kind of target a DSN names ("postgres", "mysql", "sqlite"), or "".
func Kind(dsn string) string {
	lower := strings.TrimSpace(dsn)
	switch {
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"), isKeyValue(dsn):
		return "postgres"
	case strings.HasPrefix(lower, "mysql://"), strings.HasPrefix(lower, "mariadb://"):
		return "mysql"
	case strings.HasPrefix(lower, "sqlite:"):
		return "sqlite"
	}
	return ""
}
