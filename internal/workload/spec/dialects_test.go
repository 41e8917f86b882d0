package spec

import (
	"strings"
	"testing"

	my "github.com/fathom-lab/fathom/internal/db/mysql/target"
	pg "github.com/fathom-lab/fathom/internal/db/postgres/target"
	lite "github.com/fathom-lab/fathom/internal/db/sqlite/target"
	"github.com/fathom-lab/fathom/internal/target"
)

// spec learns the dialects from the registry (internal/db), which its tests cannot
// link (db links spec through plan): they give the three SQL kinds' dialects as db
// does, in kind name order.
func init() {
	target.UseDialects(func() []*target.Dialect { return []*target.Dialect{my.SQLDialect, pg.SQLDialect, lite.SQLDialect} })
}

// Before the registry gives the dialects (a built-in decoded while package builtin is
// initialized, before internal/db), a file's SQL by dialect is accepted as written;
// once they are given, an unknown dialect is refused.
func TestDialectsNotGivenYet(t *testing.T) {
	file := []byte("name: d\ntransactions:\n  - name: one\n    steps:\n      - sql:\n          postgres: SELECT 1\n          mysql: SELECT 1\n          sqlite: SELECT 1\n          nosuch: SELECT 1\n")
	if _, err := decodeFile("d.yaml", file); err == nil || !strings.Contains(err.Error(), `unknown key "nosuch"`) {
		t.Fatalf("with the dialects given: %v", err)
	}
	given := target.Dialects()
	t.Cleanup(func() { target.UseDialects(func() []*target.Dialect { return given }) })
	target.UseDialects(nil)
	if _, err := decodeFile("d.yaml", file); err != nil {
		t.Fatalf("before the dialects are given: %v", err)
	}
}
