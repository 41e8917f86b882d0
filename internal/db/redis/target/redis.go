// Package redis is fathom's Redis target, built on redis/rueidis.
//
// Why rueidis: measured against go-redis v9.23.0 on the Redis 7.0 of the development
// machine (one client, 100-byte values, go test -bench, busy 2-core machine), GET/SET
// took the same client CPU within the noise (12–17 µs per round trip for both), but
// rueidis allocated 0 times per SET and once per GET (the reply), go-redis 8 and 7
// times; with 16 commands pipelined, 1 allocation per batch against 4 per command.
//
// Each Conn is one dedicated rueidis connection (Client.Dedicate), used synchronously:
// commands are sent with a context that has no Done channel, so rueidis writes and
// reads on the calling goroutine instead of handing the command to its pipelining
// goroutines, as a C client does; cancellation instead closes the socket (see
// target.Canceler). Periodic PINGs and per-command deadlines are off. Sockets are read
// with blocking system calls where sock.Blocking can (Linux), as for the SQL targets.
// Because rueidis then holds nothing between replies, a Batch can also run without it:
// Exchange writes its commands in RESP on the socket and reads their replies, so that
// the runner drives many connections from one thread (exchange.go).
//
// DSNs: redis://[user[:password]@]host[:port][/db], rediss://… (TLS), and
// unix:///path/to/redis.sock?db=N (also redis+unix://). The password may instead come
// from REDISCLI_AUTH, as redis-cli reads it (through Config.Getenv, the front end's
// environment).
package redis

import (
	"context"
	"crypto/tls"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/target"
)

// redisTarget is a Redis server.
type redisTarget struct {
	cfg      target.Config
	d        dsn
	redacted string
	sockets  *target.SocketPaths

	mu     sync.Mutex // serializes Connect, so that dialed records the right socket
	client rueidis.Client
	dialed net.Conn
}

var _ target.Target = (*redisTarget)(nil)

// dsn is a parsed Redis DSN.
type dsn struct {
	network  string // tcp or unix
	addr     string // host:port or socket path
	tls      bool
	insecure bool // rediss with ?insecure=true: no certificate check
	user     string
	password string
	db       int
}

// Open parses a DSN; it does not connect. Errors are one line without the password.
func Open(s string, cfg target.Config) (*redisTarget, error) {
	d, err := parseDSN(s)
	if err != nil {
		return nil, err
	}
	if d.password == "" && cfg.Getenv != nil {
		d.password = cfg.Getenv("REDISCLI_AUTH")
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	return &redisTarget{cfg: cfg, d: d, redacted: target.RedactURL(s), sockets: &target.SocketPaths{Poller: cfg.PollerSockets}}, nil
}

func parseDSN(s string) (dsn, error) {
	bad := func(why string) (dsn, error) {
		return dsn{}, target.Errorf(target.ClassOther, "", "invalid Redis DSN: %s (use redis://[user:password@]host:port/db, rediss://…, or unix:///path/to/redis.sock?db=N)", why)
	}
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return bad("it is not a URL")
	}
	var d dsn
	switch strings.ToLower(u.Scheme) {
	case "redis", "rediss":
		d.network = "tcp"
		d.tls = strings.EqualFold(u.Scheme, "rediss")
		host, port := u.Hostname(), u.Port()
		if host == "" {
			host = "127.0.0.1"
		}
		if port == "" {
			port = "6379"
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return bad("port " + strconv.Quote(port) + " is not a port number")
		}
		d.addr = net.JoinHostPort(host, port)
		if p := strings.Trim(u.Path, "/"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 {
				return bad("database " + strconv.Quote(p) + " is not a number")
			}
			d.db = n
		}
	case "unix", "redis+unix":
		d.network = "unix"
		d.addr = u.Path
		if d.addr == "" {
			return bad("the socket path is missing")
		}
	default:
		return bad("unknown scheme " + strconv.Quote(u.Scheme))
	}
	q := u.Query()
	for k, v := range q {
		switch k {
		case "db":
			n, err := strconv.Atoi(v[0])
			if err != nil || n < 0 {
				return bad("db=" + strconv.Quote(v[0]) + " is not a number")
			}
			d.db = n
		case "insecure":
			d.insecure = v[0] == "true" || v[0] == "1"
		case "password":
			d.password = v[0]
		case "passfile":
			// A file holding the password (fathom's throwaway instances): the DSN can be
			// printed and stored. It must be private to this user.
			if err := safefile.Check(v[0]); err != nil {
				return bad("passfile: " + err.Error())
			}
			b, err := os.ReadFile(v[0])
			if err != nil {
				return bad("passfile: " + err.Error())
			}
			for line := range strings.SplitSeq(string(b), "\n") {
				if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
					d.password = line
					break
				}
			}
		default:
			return bad("unknown parameter " + strconv.Quote(k) + " (known: db, insecure, password, passfile)")
		}
	}
	if u.User != nil {
		d.user = u.User.Username()
		if p, ok := u.User.Password(); ok {
			d.password = p
		}
	}
	return d, nil
}

// Identity digests who and what the target connects to (target.Identifier).
func (t *redisTarget) Identity() string {
	return target.Digest("redis", t.d.user, t.d.password, strconv.Itoa(t.d.db), t.d.network, t.d.addr)
}

func (t *redisTarget) Kind() string     { return "redis" }
func (t *redisTarget) Redacted() string { return t.redacted }

// Dialect is a name only: Redis has no SQL.
func (t *redisTarget) Dialect() target.Dialect { return target.Dialect{Name: "redis"} }

// Sockets says which way the connections so far read their sockets (target.Socketer).
func (t *redisTarget) Sockets() string { return t.sockets.Sockets() }

// Transport says how the connections so far reach the server (target.Transporter).
func (t *redisTarget) Transport() string { return t.sockets.Transport() }

// password is the password the target authenticates with, to be masked wherever it
// might appear ("" without one).
func (t *redisTarget) password() string { return t.d.password }

// Close closes the shared client (dedicated connections close with their Conn).
func (t *redisTarget) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.client != nil {
		t.client.Close()
		t.client = nil
	}
	return nil
}

func (t *redisTarget) options() rueidis.ClientOption {
	o := rueidis.ClientOption{
		InitAddress:           []string{t.d.addr},
		Username:              t.d.user,
		Password:              t.d.password,
		SelectDB:              t.d.db,
		ClientName:            clientName(t.cfg.AppName),
		DisableCache:          true,
		DisableAutoPipelining: true,
		DisableRetry:          true,
		ForceSingleClient:     true,
		BlockingPoolSize:      1 << 16,
		// Per connection, what a run of 10,000 clients holds 10,000 times (measured
		// with gctrace against Redis 7, see docs/speed.md): rueidis's default ring of
		// 1,024 slots for pipelining goroutines was 337 KB of a connection's 400 KB of
		// heap, and is never used here (commands go on the calling goroutine, see the
		// package comment; a command without a reply would queue through 2 slots).
		// Buffers of 4 KB (bufio's default) hold a pipeline of small commands or
		// replies in one system call; a larger value is read and written past them,
		// straight to the socket. (They were 32 KB each: another 64 KB a connection.)
		RingScaleEachConn:   1,
		ReadBufferEachConn:  4 << 10,
		WriteBufferEachConn: 4 << 10,
		ConnWriteTimeout:    -1, // no deadline per command; cancellation closes the socket
		ClientSetInfo:       rueidis.DisableClientSetInfo,
	}
	o.Dialer.Timeout = t.cfg.ConnectTimeout
	o.Dialer.KeepAlive = -1 // no periodic PING goroutine
	if t.d.tls {
		host, _, _ := net.SplitHostPort(t.d.addr)
		o.TLSConfig = &tls.Config{ServerName: host, InsecureSkipVerify: t.d.insecure, MinVersion: tls.VersionTLS12}
	}
	o.DialCtxFn = func(ctx context.Context, _ string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
		nc, err := d.DialContext(ctx, t.d.network, t.d.addr)
		if err != nil {
			return nil, err
		}
		if tc != nil {
			tlc := tls.Client(nc, tc)
			if err := tlc.HandshakeContext(ctx); err != nil {
				nc.Close()
				return nil, err
			}
			nc = tlc
		} else {
			nc = t.sockets.Wrap(ctx, nc)
		}
		t.dialed = nc // under t.mu (Connect) or before any Conn exists (NewClient)
		return nc, nil
	}
	return o
}

// Connect opens one dedicated connection and reads its client id.
func (t *redisTarget) Connect(ctx context.Context) (target.Conn, error) { return t.connect(ctx) }

func (t *redisTarget) connect(ctx context.Context) (*Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError(err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	what := "connecting to Redis at " + t.d.addr
	if t.client == nil {
		type made struct {
			c   rueidis.Client
			err error
		}
		ch := make(chan made, 1)
		go func() {
			c, err := rueidis.NewClient(t.options())
			ch <- made{c, err}
		}()
		select {
		case m := <-ch:
			if m.err != nil {
				return nil, classify(m.err, what, t.d.password)
			}
			t.client = m.c
		case <-ctx.Done():
			go func() {
				if m := <-ch; m.c != nil {
					m.c.Close()
				}
			}()
			return nil, ctxError(ctx.Err())
		}
	}
	t.dialed = nil
	dc, release := t.client.Dedicate()
	c := &Conn{t: t, dc: dc, release: release}
	c.batch.b = dc.B()
	c.nc = t.dialed
	c.cancel.Interrupt = c.interrupt
	res := dc.Do(context.Background(), dc.B().ClientId().Build())
	id, err := res.AsInt64()
	if err != nil {
		c.Close()
		return nil, classify(err, what, t.d.password)
	}
	c.id = id
	t.sockets.Established(c.nc, t.d.tls) // nil when the pool handed back a connection already counted
	return c, nil
}

// governing are the server settings Info reports.
var governing = []string{
	"maxmemory", "maxmemory-policy", "appendonly", "appendfsync", "save",
	"aof-use-rdb-preamble", "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size",
	"no-appendfsync-on-rewrite", "rdbcompression", "io-threads", "hz", "maxclients",
	"lazyfree-lazy-eviction", "activedefrag", "dir",
}

// Info reports the server version and the settings that decide its performance.
func (t *redisTarget) Info(ctx context.Context) (target.Info, error) {
	c, err := t.connect(ctx)
	if err != nil {
		return target.Info{}, err
	}
	defer c.Close()
	var info target.Info
	fields, err := c.infoFields(ctx, "server")
	if err != nil {
		return info, err
	}
	info.Version = fields["redis_version"]
	info.Settings, err = c.ConfigGet(ctx, governing...)
	return info, err
}

// clientName is name as CLIENT SETNAME takes it: no spaces or special characters.
func clientName(name string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r > '~' {
			return '-'
		}
		return r
	}, name)
}
