// Package stores opens the results store a --store value names, picking the
// implementation by the value's form (as internal/db picks a database kind by its DSN):
// a path is a SQLite file; a postgres:// or postgresql:// URL a PostgreSQL store.
package stores

import (
	"fmt"
	"strings"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/postgres"
	"github.com/fathom-lab/fathom/internal/store/sqlite"
)

// Open opens the store a --store value names, picked by its form: a PostgreSQL URL
// (postgres://…, credentials also from PG* and ~/.pgpass) names a PostgreSQL store,
// another URL is refused with one line saying so, anything else is a SQLite file path.
func Open(value string) (store.Store, error) {
	if postgres.IsURL(value) {
		s, err := postgres.Open(value)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	if err := checkForm(value); err != nil {
		return nil, err
	}
	s, err := sqlite.Open(value)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Check refuses, before anything is spent and without creating anything, a --store
// value that cannot work: a kind of store this build cannot open, or a file path
// CheckPath refuses.
func Check(value string) error {
	if postgres.IsURL(value) {
		return postgres.Check(value)
	}
	if err := checkForm(value); err != nil {
		return err
	}
	return sqlite.CheckPath(value)
}

// checkForm refuses a URL other than PostgreSQL's. The message names the scheme only,
// never the rest, which may hold a password.
func checkForm(value string) error {
	scheme, ok := urlScheme(value)
	if !ok {
		return nil
	}
	if scheme == "sqlite" || scheme == "file" {
		return fmt.Errorf("store %s://…: give the SQLite store as a file path, without %s://: %w", scheme, scheme, store.ErrUnsupported)
	}
	return fmt.Errorf("store %s://…: --store takes a SQLite file path or a postgres:// URL: %w", scheme, store.ErrUnsupported)
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
