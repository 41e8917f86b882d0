// Package postgres is fathom's PostgreSQL target, built on jackc/pgx's pgconn: the
// wire protocol without pgx's type system, pool or per-query allocations.
//
// The hot path is shaped like pgbench's -M prepared:
//
//   - Statements are prepared once per connection (Parse) and executed with Bind,
//     Execute and Sync, parameters and results in text format, so no value is
//     converted by the client beyond formatting integers. Executing with the prepared
//     statement's description skips the Describe of every call.
//   - pgconn is always called with context.Background(), which makes it skip its
//     per-call context watcher goroutine. Cancellation instead uses one
//     context.AfterFunc per connection and context, armed with an atomic store while a
//     call is in flight; when it fires it closes the socket, and the call returns a
//     ClassCanceled (or ClassTimeout) error. The same scheme as the MySQL target.
//   - Sockets are read and written with blocking system calls (sock.Blocking).
//
// In simple query mode (Config.Unprepared) every call sends its text with unnamed
// Parse/Bind/Execute, like pgbench -M extended: the server plans each time.
//
// DSNs are libpq's, as URLs (postgres://user:password@host:port/db?sslmode=disable) or
// key=value strings (host=/var/run/postgresql dbname=test). Missing pieces come from
// the PG* environment variables and ~/.pgpass, as with psql and pgbench.
package postgres

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/sock"
)

// Target is a PostgreSQL server.
type Target struct {
	cfg      target.Config
	pc       *pgconn.Config
	redacted string
	where    string // host:port or socket directory, for messages
}

var _ target.Target = (*Target)(nil)

// dsnForm is what every DSN error shows, so that one line names the fix.
const dsnForm = "want postgres://user:password@host:port/dbname?sslmode=disable or host=… dbname=… (percent-encode special characters in a URL password)"

// Open parses dsn (with PG* variables and ~/.pgpass); it does not connect. A
// malformed DSN gives one line that never contains the password.
func Open(dsn string, cfg target.Config) (*Target, error) {
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	pc, err := pgconn.ParseConfig(dsn)
	if err != nil {
		why := "cannot parse it"
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) && pe.Unwrap() != nil {
			why = pe.Unwrap().Error()
		}
		return nil, target.Errorf(target.ClassOther, "", "invalid PostgreSQL DSN: %s; %s", oneLine(why, ""), dsnForm)
	}
	if _, ok := pc.RuntimeParams["application_name"]; !ok && cfg.AppName != "" {
		pc.RuntimeParams["application_name"] = cfg.AppName
	}
	if pc.ConnectTimeout == 0 || pc.ConnectTimeout > cfg.ConnectTimeout {
		pc.ConnectTimeout = cfg.ConnectTimeout
	}
	dialer := &net.Dialer{KeepAlive: 5 * time.Minute}
	pc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		nc = sock.Blocking(nc)
		if d, ok := ctx.Value(dialKey{}).(*dialed); ok {
			d.set(nc)
		}
		return nc, nil
	}
	t := &Target{cfg: cfg, pc: pc, redacted: Redact(dsn)}
	t.where = where(pc.Host, pc.Port)
	return t, nil
}

func where(host string, port uint16) string {
	if strings.HasPrefix(host, "/") {
		return host + "/.s.PGSQL." + strconv.Itoa(int(port))
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// Redact masks the password of a URL or key=value DSN.
func Redact(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return target.RedactURL(dsn)
	}
	return target.RedactString(dsn)
}

func (t *Target) Kind() string            { return "postgres" }
func (t *Target) Redacted() string        { return t.redacted }
func (t *Target) Dialect() target.Dialect { return *target.Postgres }
func (t *Target) Close() error            { return nil }

// Connect opens one connection.
func (t *Target) Connect(ctx context.Context) (target.Conn, error) {
	return t.connect(ctx)
}

func (t *Target) connect(ctx context.Context) (*Conn, error) {
	what := "connecting to " + t.where
	cctx, cancel := context.WithTimeout(ctx, t.cfg.ConnectTimeout)
	defer cancel()
	// A blocking socket ignores the deadlines pgconn sets to bound the startup and
	// authentication exchange, so a server that accepts the connection and then says
	// nothing is cut off by closing the socket when the context ends.
	d := &dialed{}
	stop := context.AfterFunc(cctx, d.close)
	pg, err := pgconn.ConnectConfig(context.WithValue(cctx, dialKey{}, d), t.pc)
	stop()
	if err != nil {
		if cctx.Err() != nil {
			if errors.Is(ctx.Err(), context.Canceled) {
				return nil, ctxError(ctx.Err())
			}
			// Cut off by the connect timeout or the caller's deadline: say so, rather
			// than what the closed socket said.
			within := "in time"
			if ctx.Err() == nil {
				within = "within " + t.cfg.ConnectTimeout.String()
			}
			return nil, &target.Error{Class: target.ClassConnection, Msg: what + ": no answer " + within, Err: errors.Join(context.DeadlineExceeded, err)}
		}
		e := classify(err, what, t.pc.Password, true)
		if e.Class == target.ClassTimeout || e.Class == target.ClassOther {
			e.Class = target.ClassConnection
		}
		return nil, e
	}
	return newConn(t, pg), nil
}

// dialKey carries, in the context of a connection attempt, where to record the
// sockets it dials, so that the attempt can be cut off.
type dialKey struct{}

// dialed holds the sockets of one connection attempt (one per host tried).
type dialed struct {
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

func (d *dialed) set(nc net.Conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		_ = nc.Close()
		return
	}
	d.conns = append(d.conns, nc)
}

func (d *dialed) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for _, nc := range d.conns {
		_ = nc.Close()
	}
}

// settings are the server settings Info reports when the server has them.
var settings = []string{
	"shared_buffers", "effective_cache_size", "work_mem", "maintenance_work_mem",
	"synchronous_commit", "fsync", "full_page_writes", "wal_level", "wal_sync_method",
	"wal_buffers", "wal_compression", "max_wal_size", "min_wal_size", "checkpoint_timeout",
	"checkpoint_completion_target", "commit_delay", "max_connections",
	"default_transaction_isolation", "random_page_cost", "effective_io_concurrency",
	"huge_pages", "jit", "autovacuum", "bgwriter_lru_maxpages", "data_directory",
	"server_version_num", "track_io_timing",
}

// Info reports the version and settings on a short-lived connection. Settings are the
// session's view (including options set by the DSN).
func (t *Target) Info(ctx context.Context) (target.Info, error) {
	c, err := t.connect(ctx)
	if err != nil {
		return target.Info{}, err
	}
	defer c.Close()
	var info target.Info
	rows, err := c.Query(ctx, "SELECT version()")
	if err != nil {
		return info, err
	}
	if len(rows) == 1 && len(rows[0]) == 1 {
		info.Version = rows[0][0]
	}
	rows, err = c.Query(ctx, "SELECT name, setting, coalesce(unit, '') FROM pg_catalog.pg_settings WHERE name = ANY ($1::text[])",
		target.Text([]byte("{"+strings.Join(settings, ",")+"}")))
	if err != nil {
		return info, err
	}
	info.Settings = make(map[string]string, len(rows))
	for _, r := range rows {
		if len(r) == 3 {
			info.Settings[r[0]] = withUnit(r[1], r[2])
		}
	}
	return info, nil
}

// withUnit renders a pg_settings value with its unit the way SHOW does for memory
// (8kB pages become bytes) and time settings.
func withUnit(v, unit string) string {
	if unit == "" {
		return v
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return v + unit
	}
	mult := int64(1)
	switch unit {
	case "8kB":
		mult, unit = 8192, "B"
	case "kB":
		mult, unit = 1024, "B"
	case "MB":
		mult, unit = 1<<20, "B"
	}
	n *= mult
	if unit == "B" {
		for _, u := range []struct {
			s string
			n int64
		}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}} {
			if n >= u.n && n%u.n == 0 {
				return strconv.FormatInt(n/u.n, 10) + u.s
			}
		}
	}
	return strconv.FormatInt(n, 10) + unit
}
