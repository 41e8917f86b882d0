package plan

import (
	"context"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// Settings is how a database kind's server settings are read, changed and checked
// (PostgreSQL: ALTER SYSTEM, pg_settings and a reload; MySQL: SET GLOBAL and
// @@GLOBAL). The kind's bundle in internal/db gives it; Server drives it. server
// names the server in messages; orig holds what fathom read before it first changed
// a setting on an external server.
type Settings interface {
	// InstanceKind is the kind of throwaway instance that runs this database (its
	// setting names are normalised the instance's way).
	InstanceKind() instance.Kind
	// ValidName reports whether name can be a setting's name.
	ValidName(name string) bool
	// LiveAction names a change that took effect without a restart ("reloaded", "set").
	LiveAction() string
	// ReloadManaged: a managed instance takes its changed configuration file with a
	// reload; otherwise SetLive changes the running server.
	ReloadManaged() bool
	// NeedsRestart returns the first of names that cannot change without a restart,
	// or "".
	NeedsRestart(ctx context.Context, conn target.Conn, names []string) (string, error)
	// SetLive changes the changed settings on the running server to val (a removed
	// one to its original value, else its default). One that needs a restart is a
	// *RestartNeeded.
	SetLive(ctx context.Context, conn target.Conn, server string, val map[string]string, changed, removed []string, orig map[string]*Original) error
	// Persist changes settings on an external server so that they survive a restart
	// and take effect now where they can; it returns a changed setting that needs a
	// restart, or "". restarting: a restart follows anyway.
	Persist(ctx context.Context, conn target.Conn, server string, val map[string]string, changed, removed []string, orig map[string]*Original, restarting bool) (string, error)
	// AfterRestart applies again what a restart of an external server lost.
	AfterRestart(ctx context.Context, conn target.Conn, server string, settings []KV) error
	// Original reads a setting's value before fathom changes it.
	Original(ctx context.Context, conn target.Conn, name string) Original
	// Read reads a setting back and compares it with the requested value.
	Read(ctx context.Context, conn target.Conn, kv KV) (Effective, error)
	// Catalog reads the settings the server has, and names it ("PostgreSQL 17.2").
	Catalog(ctx context.Context, conn target.Conn) (SettingsCatalog, string, error)
}

// Original is a setting's value before fathom first changed it on an external server.
type Original struct {
	Value string
	// Present: there is a value to put back (PostgreSQL: the setting was in
	// postgresql.auto.conf; MySQL: @@GLOBAL was read); otherwise restoring resets it.
	Present bool
	// Known: the original could be read.
	Known bool
}
