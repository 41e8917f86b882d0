// Package mysql is fathom's MySQL and MariaDB target, built on go-sql-driver/mysql.
//
// Each Conn is one raw driver connection used through the database/sql/driver
// interfaces, without database/sql's pool: prepared statements keep their argument and
// row buffers, so the hot path sends and reads a statement with a handful of small
// allocations, nearly all inside the driver. Three choices keep it lean, each measured
// with BenchmarkPointSelect (sysbench's oltp_point_select):
//
//   - Calls use the driver's context-free methods (driver.Stmt Query/Exec,
//     driver.Execer, driver.Queryer). The context variants copy the arguments and hand
//     every call to the driver's watcher goroutine and back, which cost one allocation
//     and about 10µs of CPU per statement.
//   - Cancellation instead uses one context.AfterFunc per connection and context,
//     armed with an atomic store while a call is in flight; when it fires it closes the
//     socket, and the call returns a ClassCanceled (or ClassTimeout) error.
//   - Sockets are read and written with blocking system calls, not Go's poller (see
//     sock.Blocking), on Linux unless Config.PollerSockets; elsewhere with the poller.
//
// DSNs look like mysql://user:password@host:port/dbname?socket=/path/to.sock. Missing
// pieces come from the [client] section of ~/.my.cnf (or defaults-file=PATH) and the
// password from MYSQL_PWD; see parseDSN. Other query parameters are session variables
// set on every connection (?innodb_lock_wait_timeout=5).
package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/fathom-lab/fathom/internal/target"
)

// Target is a MySQL or MariaDB server.
type Target struct {
	cfg       target.Config
	mc        *mysql.Config
	connector driver.Connector
	redacted  string
	where     string // host:port or socket path, for messages
	sockets   *target.SocketPaths
}

var _ target.Target = (*Target)(nil)

// Open parses dsn; it does not connect. A malformed DSN gives one line that never
// contains the password.
func Open(dsn string, cfg target.Config) (*Target, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return open(dsn, cfg, getenv)
}

func open(dsn string, cfg target.Config, getenv env) (*Target, error) {
	mc, err := parseDSN(dsn, cfg, getenv)
	if err != nil {
		return nil, err
	}
	sockets := &target.SocketPaths{Poller: cfg.PollerSockets}
	mc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return dial(ctx, sockets, network, addr)
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = mc.Timeout
	}
	connector, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, target.Errorf(target.ClassOther, "", "invalid MySQL DSN: %s", oneLine(err.Error(), mc.Passwd))
	}
	return &Target{cfg: cfg, mc: mc, connector: connector, redacted: redact(dsn), where: mc.Addr, sockets: sockets}, nil
}

// Identity digests who and what the target connects to (target.Identifier).
func (t *Target) Identity() string {
	return target.Digest("mysql", t.mc.User, t.mc.Passwd, t.mc.DBName, t.mc.Net, t.mc.Addr)
}

func (t *Target) Kind() string            { return "mysql" }
func (t *Target) Redacted() string        { return t.redacted }
func (t *Target) Dialect() target.Dialect { return *SQLDialect }
func (t *Target) Close() error            { return nil }

// Sockets says which way the connections so far read their sockets (target.Socketer).
func (t *Target) Sockets() string { return t.sockets.Sockets() }

// Transport says how the connections so far reach the server (target.Transporter).
func (t *Target) Transport() string { return t.sockets.Transport() }

// dialKey carries, in the context given to the driver's Connect, where to record the
// network connection it dials, so that a canceled context can close it.
type dialKey struct{}

// dial connects with the standard dialer (timeouts, name resolution, cancellation),
// then hands the socket over to blocking system calls where it can: see sock.Blocking
// and target.SocketPaths.
func dial(ctx context.Context, sockets *target.SocketPaths, network, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err == nil {
		nc = sockets.Wrap(ctx, nc)
		if p, ok := ctx.Value(dialKey{}).(*net.Conn); ok {
			*p = nc
		}
	}
	return nc, err
}

// encrypted reports whether c uses TLS. The driver decides it from tls=: never
// without it or with tls=false, always with true or skip-verify (it fails otherwise);
// with tls=preferred only when the server offers TLS, so the server is asked.
func (t *Target) encrypted(ctx context.Context, c *conn) (bool, error) {
	switch t.mc.TLSConfig {
	case "", "false":
		return false, nil
	case "preferred":
		rows, err := c.Query(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'")
		if err != nil {
			return false, err
		}
		return len(rows) == 1 && len(rows[0]) == 2 && rows[0][1] != "", nil
	}
	return true, nil
}

// Connect opens one connection and reads its connection id.
func (t *Target) Connect(ctx context.Context) (target.Conn, error) {
	return t.connect(ctx)
}

func (t *Target) connect(ctx context.Context) (*conn, error) {
	what := "connecting to " + t.where
	cctx, cancel := context.WithTimeout(ctx, t.cfg.ConnectTimeout)
	defer cancel()
	var nc net.Conn
	dc, err := t.connector.Connect(context.WithValue(cctx, dialKey{}, &nc))
	if err != nil {
		if ctx.Err() == nil && cctx.Err() != nil {
			return nil, &target.Error{Class: target.ClassConnection, Msg: what + ": no answer within " + t.cfg.ConnectTimeout.String(), Err: err}
		}
		e := classify(err, what, t.mc.Passwd)
		if e.Class == target.ClassTimeout || e.Class == target.ClassOther && errors.Is(err, context.DeadlineExceeded) {
			e.Class = target.ClassConnection
		}
		return nil, e
	}
	c, err := newConn(t, dc, nc)
	if err != nil {
		_ = dc.Close()
		return nil, err
	}
	rows, err := c.Query(ctx, "SELECT CONNECTION_ID()")
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	if len(rows) == 1 && len(rows[0]) == 1 {
		c.id = parseInt(rows[0][0])
	}
	encrypted, err := t.encrypted(ctx, c)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	t.sockets.Established(nc, encrypted)
	return c, nil
}

// settings are the server variables Info reports when the server has them.
var settings = []string{
	"innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "sync_binlog",
	"innodb_log_file_size", "innodb_flush_method", "innodb_io_capacity",
	"innodb_io_capacity_max", "innodb_doublewrite", "max_connections", "log_bin",
	"binlog_format", "max_binlog_size", "transaction_isolation", "tx_isolation",
	"innodb_thread_concurrency", "innodb_adaptive_hash_index", "performance_schema",
	"datadir", "version_comment",
}

// Info reports the version and settings on a short-lived connection. Settings are the
// session's view, which includes variables set by DSN parameters.
func (t *Target) Info(ctx context.Context) (target.Info, error) {
	c, err := t.connect(ctx)
	if err != nil {
		return target.Info{}, err
	}
	defer c.Close()
	var info target.Info
	rows, err := c.Query(ctx, "SELECT VERSION()")
	if err != nil {
		return info, err
	}
	if len(rows) == 1 && len(rows[0]) == 1 {
		info.Version = rows[0][0]
	}
	q := "SHOW VARIABLES WHERE Variable_name IN ('" + strings.Join(settings, "', '") + "')"
	rows, err = c.Query(ctx, q)
	if err != nil {
		return info, err
	}
	info.Settings = make(map[string]string, len(rows))
	for _, r := range rows {
		if len(r) != 2 {
			continue
		}
		name := r[0]
		if name == "tx_isolation" {
			// The older name of transaction_isolation (MariaDB before 11.1, MySQL 5.7).
			if _, ok := info.Settings["transaction_isolation"]; ok {
				continue
			}
			name = "transaction_isolation"
		}
		info.Settings[name] = r[1]
	}
	return info, nil
}

func parseInt(s string) int64 {
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n
}

// appendTime renders a time argument or column the way MySQL writes DATETIME(6).
func appendTime(b []byte, t time.Time) []byte {
	return t.AppendFormat(b, "2006-01-02 15:04:05.999999")
}
