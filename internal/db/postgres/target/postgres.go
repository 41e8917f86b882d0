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
//   - Sockets are read and written with blocking system calls (sock.Blocking) on
//     Linux, through Go's network poller elsewhere or with Config.PollerSockets.
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
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fathom-lab/fathom/internal/target"
)

// Target is a PostgreSQL server.
type Target struct {
	cfg      target.Config
	pc       *pgconn.Config
	redacted string
	where    string // host:port or socket directory, for messages
	sockets  *target.SocketPaths
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
	bad := func(why string) error {
		return target.Errorf(target.ClassOther, "", "invalid PostgreSQL DSN: %s; %s", why, dsnForm)
	}
	if strings.Count(authority(dsn), "@") > 1 {
		// libpq and pgconn split user:password@host at the first '@' and url.Parse at
		// the last: the rest of the password would become part of the host name and
		// be shown in every message.
		return nil, bad("more than one '@' before the host (write an '@' in the user or password as %40)")
	}
	pc, err := pgconn.ParseConfig(dsn)
	if err != nil {
		why := "cannot parse it"
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) && pe.Unwrap() != nil {
			why = scrubWhy(pe.Unwrap().Error(), dsn)
		} else if p := portProblem(dsn, cfg.Getenv); p != "" {
			why = p
		}
		return nil, bad(oneLine(why, ""))
	}
	for k := range pc.RuntimeParams {
		// A key that is not a setting name is a mistyped URL or a stray fragment
		// (user:secret@host=…), sent to the server and echoed back in its error.
		if !settingName(k) {
			return nil, bad("a key=value key is not a setting name (a URL must start with postgres://)")
		}
	}
	if strings.Contains(pc.Host, "@") {
		return nil, bad("the host name holds an '@' (write an '@' in the user or password as %40)")
	}
	if _, ok := pc.RuntimeParams["application_name"]; !ok && cfg.AppName != "" {
		pc.RuntimeParams["application_name"] = cfg.AppName
	}
	if pc.ConnectTimeout == 0 || pc.ConnectTimeout > cfg.ConnectTimeout {
		pc.ConnectTimeout = cfg.ConnectTimeout
	}
	dialer := &net.Dialer{KeepAlive: 5 * time.Minute}
	sockets := &target.SocketPaths{Poller: cfg.PollerSockets}
	pc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		nc = sockets.Wrap(ctx, nc)
		if d, ok := ctx.Value(dialKey{}).(*dialed); ok {
			d.set(nc)
		}
		return nc, nil
	}
	t := &Target{cfg: cfg, pc: pc, redacted: redact(dsn), sockets: sockets}
	if pw := pc.Password; pw != "" && (strings.Contains(t.redacted, pw) || strings.Contains(t.redacted, url.QueryEscape(pw)) || strings.Contains(t.redacted, url.PathEscape(pw))) {
		// The DSN's shape defeated the masking: show only what identifies the server.
		t.redacted = fmt.Sprintf("postgres://%s@%s/%s", url.User(pc.User).String(), where(pc.Host, pc.Port), url.PathEscape(pc.Database))
	}
	t.where = where(pc.Host, pc.Port)
	return t, nil
}

func where(host string, port uint16) string {
	if strings.HasPrefix(host, "/") {
		return host + "/.s.PGSQL." + strconv.Itoa(int(port))
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// authority is the user:password@host:port part of a URL DSN ("" for key=value).
func authority(dsn string) string {
	_, rest, ok := strings.Cut(dsn, "://")
	if !ok || !(strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")) {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// settingName reports whether k can be a server setting name (work_mem, myapp.flag).
func settingName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// keywords are words of pgconn's parse errors that may also appear in a DSN.
var keywords = map[string]bool{"host": true, "port": true, "user": true, "password": true, "dbname": true, "sslmode": true, "connect_timeout": true, "service": true, "target_session_attrs": true, "sslcertmode": true, "channel_binding": true, "require_auth": true}

// scrubWhy drops from a parse error whatever it quotes from the DSN: quoted parts, and
// words that occur in the DSN and are not setting names.
func scrubWhy(why, dsn string) string {
	why = quoted.ReplaceAllString(why, "…")
	words := strings.Fields(why)
	for i, w := range words {
		t := strings.TrimRight(w, ".,:;")
		if len(t) >= 3 && strings.Contains(dsn, t) && !keywords[strings.ToLower(t)] {
			words[i] = "…"
		}
	}
	return strings.Join(words, " ")
}

var quoted = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`|'[^']*'")

// redact masks the password of a URL or key=value DSN.
func redact(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return target.RedactURL(dsn)
	}
	return target.RedactString(dsn)
}

// Identity digests who and what the target connects to (target.Identifier).
func (t *Target) Identity() string {
	return target.Digest("postgres", t.pc.User, t.pc.Password, t.pc.Database, t.pc.Host, strconv.Itoa(int(t.pc.Port)))
}

func (t *Target) Kind() string            { return "postgres" }
func (t *Target) Redacted() string        { return t.redacted }
func (t *Target) Dialect() target.Dialect { return *SQLDialect }
func (t *Target) Close() error            { return nil }

// Sockets says which way the connections so far read their sockets (target.Socketer).
func (t *Target) Sockets() string { return t.sockets.Sockets() }

// Transport says how the connections so far reach the server (target.Transporter).
func (t *Target) Transport() string { return t.sockets.Transport() }

// Connect opens one connection.
func (t *Target) Connect(ctx context.Context) (target.Conn, error) {
	return t.connect(ctx)
}

func (t *Target) connect(ctx context.Context) (*conn, error) {
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
	t.sockets.Established(pg.Conn(), false) // a *tls.Conn when encrypted
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
