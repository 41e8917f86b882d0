// Package sqlite is the SQLite kind's bundle: an embedded database file opened by the
// driver in this process (target/). It has no server collectors, check source or
// instances.
package sqlite

import (
	"context"

	"github.com/fathom-lab/fathom/internal/collect"
	lite "github.com/fathom-lab/fathom/internal/db/sqlite/target"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/target"
)

// Kind is the SQLite bundle.
type Kind struct{}

func (Kind) Name() string             { return "sqlite" }
func (Kind) Title() string            { return "SQLite" }
func (Kind) Schemes() []string        { return []string{"sqlite:"} }
func (Kind) Dialect() *target.Dialect { return lite.SQLDialect }
func (Kind) DSNExample() string       { return "sqlite:PATH" }
func (Kind) Embedded() bool           { return true }

// FilesPerClient: the database, its WAL and its shared-memory index.
func (Kind) FilesPerClient() uint64 { return 3 }

// Collect is the file's side for collect: discovery and snapshot sections.
func (Kind) Collect() collect.Database { return collectSide{} }

// Open opens a SQLite database file.
func (Kind) Open(dsn string, cfg target.Config) (target.Target, error) { return lite.Open(dsn, cfg) }

// ServerRoom: no server, no connection limit.
func (Kind) ServerRoom(context.Context, target.Conn) (int, string, string, bool) {
	return 0, "", "", false
}

// PlanRules are SQLite's rules in plan files: it has no server settings.
func (Kind) PlanRules() plan.KindRules {
	return plan.KindRules{NoSettings: "SQLite has no server settings: put PRAGMAs in the target DSN (sqlite:PATH?synchronous=OFF)"}
}
