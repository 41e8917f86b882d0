package storetest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// The store suite: every test here runs on each implementation, SQLite and
// PostgreSQL, through stores.Open as fathom opens them. Without
// FATHOM_TEST_POSTGRES_DSN the PostgreSQL half skips (fails under
// FATHOM_TEST_REQUIRE=1).

// factory makes stores of one kind.
type factory struct {
	name string
	// fresh returns the --store value of a new, empty store, removed after the test.
	fresh func(t testing.TB) string
}

var factories = []factory{
	{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "sub", "fathom.db") }},
	{"postgres", freshPostgres},
}

// forEach runs body once per store kind, as subtests named after the kind.
func forEach(t *testing.T, body func(t *testing.T, f factory)) {
	for _, f := range factories {
		t.Run(f.name, func(t *testing.T) { body(t, f) })
	}
}

// open opens value, failing the test on error.
func (f factory) open(t testing.TB, value string) store.Store {
	t.Helper()
	s, err := stores.Open(value)
	if err != nil {
		t.Fatalf("open %s store: %v", f.name, err)
	}
	return s
}

// freshPostgres names a new database on the test server (FATHOM_TEST_DB_PREFIX +
// "store_" + random), which the store creates when first opened; it is dropped after
// the test.
func freshPostgres(t testing.TB) string {
	t.Helper()
	dsn := dbtest.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("FATHOM_TEST_POSTGRES_DSN: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := strings.ToLower(dbtest.Prefix() + "store_" + hex.EncodeToString(b[:]))
	admin := *u
	admin.Path = "/postgres"
	u.Path = "/" + name
	t.Cleanup(func() {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, admin.String())
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	return u.String()
}
