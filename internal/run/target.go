package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
	"github.com/fathom-lab/fathom/internal/workload/pgscript"
)

// Target says what to run against and how to connect.
type Target struct {
	DSN            string // postgres://…, mysql://…, sqlite:PATH
	QueryMode      string // prepared (default) or simple
	ConnectTimeout time.Duration
	// PollerSockets: Go's network poller instead of blocking sockets (the portable path).
	PollerSockets bool
	// Getenv is the environment for the DSN's defaults (target.Config.Getenv).
	Getenv func(string) string
}

// Open parses the DSN (a mistake there is a usage error).
func (t Target) Open() (target.Target, error) {
	cfg := target.Config{ConnectTimeout: t.ConnectTimeout, AppName: "fathom", PollerSockets: t.PollerSockets, Getenv: t.Getenv}
	switch t.QueryMode {
	case "", "prepared":
	case "simple", "extended":
		// Unprepared: unnamed Parse/Bind/Execute each time (pgbench's -M extended);
		// pgbench scripts in -M simple substitute their variables into the text.
		cfg.Unprepared = true
	default:
		return nil, errkind.Usagef("--query-mode %q: use prepared, extended or simple", t.QueryMode)
	}
	tg, err := db.Open(t.DSN, cfg)
	if err != nil {
		return nil, errkind.Usagef("%v", err)
	}
	return tg, nil
}

// OpenWorkload resolves a workload (a built-in name or a file) with its options.
// Mistakes are usage errors.
func OpenWorkload(name string, p workload.Params) (*workload.Spec, workload.Workload, error) {
	spec, err := builtin.Lookup(name)
	if err != nil {
		return nil, nil, errkind.Usagef("%v", err)
	}
	wl, err := spec.New(p)
	if err != nil {
		return nil, nil, errkind.Usagef("%v", err)
	}
	return spec, wl, nil
}

// Connect opens one setup connection with a clear message when it fails.
func Connect(ctx context.Context, t target.Target) (target.Conn, error) {
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, ConnectError(t, err)
	}
	return conn, nil
}

// ConnectError says why a connection to t failed and what to check.
func ConnectError(t target.Target, err error) error {
	hint := ""
	switch class := target.ClassOf(err); {
	case tooManyConnections(err):
		hint = " (the server's connection limit is reached: raise max_connections on the server or lower -c)"
	case class == target.ClassAuth:
		hint = " (check the user and password: in the DSN, PG*/.pgpass or ~/.my.cnf)"
		if h := db.AuthHintOf(t.Kind()); h != "" {
			hint = " (" + h + ")"
		}
	case class == target.ClassConnection:
		if !db.IsEmbedded(t.Kind()) {
			hint = " (is the server running and listening there?)"
		}
	case class == target.ClassUndefined:
		hint = " (does the database exist?)"
	}
	return errkind.WithKind(errkind.Failed, fmt.Errorf("cannot connect to %s: %v%s", t.Redacted(), err, hint))
}

// setupError turns a workload Setup error into an engine error.
func setupError(t target.Target, err error) error {
	if errors.Is(err, workload.ErrNotPrepared) {
		return errkind.WithKind(errkind.Failed, &NotPreparedError{Err: err, Target: t.Redacted()})
	}
	if errors.Is(err, workload.ErrMismatch) {
		return errkind.WithKind(errkind.Usage, err)
	}
	return errkind.WithKind(errkind.Failed, err)
}

// sockets says which way tgt's connections so far read their sockets, "" when that
// does not apply (SQLite) or none was opened.
func sockets(tgt target.Target) string {
	if s, ok := tgt.(target.Socketer); ok {
		return s.Sockets()
	}
	return ""
}

// transport says how tgt's connections so far reach the server ("tcp", "unix",
// "tcp+tls", …), "" when that does not apply (SQLite) or none was opened.
func transport(tgt target.Target) string {
	if s, ok := tgt.(target.Transporter); ok {
		return s.Transport()
	}
	return ""
}

// OpenStore opens the results store: a path that cannot work (empty, a directory,
// another user's) is a usage error, anything else a failure.
func OpenStore(path string) (store.Store, error) {
	st, err := stores.Open(path)
	if err != nil {
		if errors.Is(err, store.ErrPath) || errors.Is(err, store.ErrUnsupported) || errors.Is(err, safefile.ErrUnsafe) {
			return nil, errkind.Usagef("%v", err)
		}
		return nil, errkind.WithKind(errkind.Failed, err)
	}
	return st, nil
}

// openWorkload opens the pgbench scripts or the named workload.
func (o Options) openWorkload() (workload.Workload, error) {
	if o.Scripts == nil {
		_, wl, err := OpenWorkload(o.Workload, o.Params)
		return wl, err
	}
	so := *o.Scripts
	so.Mode = o.QueryMode
	if so.Scale == "" {
		so.Scale = o.Params["scale"]
	}
	wl, err := pgscript.Open(so)
	if err != nil {
		return nil, errkind.Usagef("%v", err)
	}
	return wl, nil
}
