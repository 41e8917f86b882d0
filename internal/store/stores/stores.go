// Package stores opens the results store a --store value names, picking the
// implementation by the value's form (as internal/db picks a database kind by its DSN):
// a PostgreSQL DSN (postgres:// or postgresql:// URL, libpq key=value, service=NAME) a
// PostgreSQL store; sqlite:PATH or a plain path a SQLite file. Every other form
// (mysql://, redis://, a MySQL option file …) is refused in one line that never shows
// a password.
package stores

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fathom-lab/fathom/internal/secret"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/postgres"
	"github.com/fathom-lab/fathom/internal/store/sqlite"
)

// Open opens the store a --store value names, picked by its form (see the package
// comment); a form that cannot be a store is refused with one line saying so.
func Open(value string) (store.Store, error) {
	if IsPostgres(value) {
		s, err := postgres.Open(value)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	path, err := sqlitePath(value)
	if err != nil {
		return nil, err
	}
	s, err := sqlite.Open(path)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// check refuses, before anything is spent and without creating anything, a --store
// value that cannot work: a kind of store this build cannot open, or a file path
// CheckPath refuses.
func check(value string) error {
	if IsPostgres(value) {
		return postgres.Check(value)
	}
	path, err := sqlitePath(value)
	if err != nil {
		return err
	}
	return sqlite.CheckPath(path)
}

// IsPostgres reports whether value names a PostgreSQL store: a postgres:// or
// postgresql:// URL, or a libpq key=value string (host=… dbname=…, service=NAME).
func IsPostgres(value string) bool { return postgres.IsDSN(value) }

// Display is value as it may be shown: a PostgreSQL DSN without its password, a
// path as it is.
func Display(value string) string {
	if IsPostgres(value) {
		return postgres.Display(value)
	}
	return secret.MaskDSN(value)
}

// DSN holds a --store value so that it formats as Display wherever it is printed.
func DSN(value string) secret.DSN { return secret.NewDSNShown(value, Display(value)) }

// sqlitePath is the SQLite file a value names (sqlite:PATH or PATH), or the one line
// that refuses another form. The message names the scheme only, never the rest, which
// may hold a password.
func sqlitePath(value string) (string, error) {
	if p, ok := strings.CutPrefix(value, "sqlite:"); ok && !strings.HasPrefix(p, "//") {
		if p == "" {
			return "", fmt.Errorf("store sqlite: names no file: give sqlite:PATH or the path alone: %w", store.ErrPath)
		}
		value = p
	}
	if scheme, ok := urlScheme(value); ok {
		switch scheme {
		case "sqlite", "file":
			return "", fmt.Errorf("store %s://…: give the SQLite store as sqlite:PATH or a file path, without //: %w", scheme, store.ErrUnsupported)
		case "mysql", "mariadb", "redis", "rediss", "redis+unix":
			return "", fmt.Errorf("store %s://…: results are kept in SQLite or PostgreSQL, not in %s: give --store a SQLite file path or a postgres:// URL: %w", scheme, scheme, store.ErrUnsupported)
		}
		return "", fmt.Errorf("store %s://…: --store takes a SQLite file path or a postgres:// URL: %w", scheme, store.ErrUnsupported)
	}
	if mysqlOptionFile(value) {
		return "", fmt.Errorf("store %s: a MySQL option file is not a results store: give --store a SQLite file path or a postgres:// URL: %w", filepath.Base(value), store.ErrUnsupported)
	}
	if strings.ContainsAny(value, "@") && strings.Contains(value, ":") && !strings.ContainsAny(value, `/\`) {
		// user:password@tcp(host)/db has a '/'; user:password@host has none: neither is
		// a file name anyone means.
		return "", fmt.Errorf("store …@…: looks like user:password@host, not a file: give a postgres:// URL or a SQLite file path: %w", store.ErrUnsupported)
	}
	return value, nil
}

// mysqlOptionFile reports whether path names a MySQL/MariaDB option file (my.cnf,
// .my.cnf, *.cnf): given as --store, it would be taken for a SQLite file.
func mysqlOptionFile(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".cnf")
}

// urlScheme reports the scheme of a value of the form scheme://rest (the scheme as
// RFC 3986 allows it: a letter, then letters, digits, '+', '-', '.'). A Windows path
// (C:\…) has no "//" after the colon and is a path.
func urlScheme(v string) (string, bool) {
	i := strings.Index(v, "://")
	if i < 1 {
		return "", false
	}
	for j, r := range v[:i] {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (j == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return "", false
		}
	}
	return strings.ToLower(v[:i]), true
}
