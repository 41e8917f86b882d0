package target

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/fathom-lab/fathom/internal/target/sock"
)

// How a connection reads and writes its socket, as Socketer reports it.
const (
	// SocketsBlocking: plain blocking system calls (sock.Blocking), Linux only.
	SocketsBlocking = "blocking"
	// SocketsPoller: Go's network poller, the portable path (every other system, or
	// Config.PollerSockets).
	SocketsPoller = "poller"
)

// Socketer is an optional ability of a Target whose connections are network sockets:
// which path its connections took so far (SocketsBlocking, SocketsPoller, "mixed: …"),
// or "" before the first one. A run records it with its provenance.
type Socketer interface {
	Sockets() string
}

// Transporter is an optional ability of a Target whose connections are network
// sockets: how its connections so far reach the server (Transport…), or "" before the
// first one. A run records it with its provenance, so that a comparison with another
// client (pgbench on PostgreSQL's Unix-domain socket, say) is on the same transport.
type Transporter interface {
	Transport() string
}

// Transports a connection can take, as Transporter reports them: the socket's network,
// with TransportTLS appended when the connection is encrypted ("tcp+tls").
const (
	transportTCP  = "tcp"
	transportUnix = "unix"
	transportTLS  = "+tls"
)

// SocketPaths hands a target's dialed connections to sock.Blocking, unless Poller is
// set, and counts which path each one took (sock.Blocking keeps the poller where it
// cannot do better: every system but Linux, or a socket it cannot set up).
type SocketPaths struct {
	// Poller keeps every connection on Go's network poller (Config.PollerSockets).
	Poller           bool
	blocking, poller atomic.Int64
	// tcp, unix and other count established connections by their socket's network,
	// encrypted those of them that use TLS (see Established).
	tcp, unix, other, encrypted atomic.Int64
}

// Established counts a connection that is set up and authenticated, by the network
// of nc (the socket dialed, or a *tls.Conn over it) and whether it is encrypted: tls,
// or nc is a *tls.Conn. Counted once the connection is made, so that attempts that
// failed or were redone (sslmode=prefer's second try) do not count.
func (p *SocketPaths) Established(nc net.Conn, tls bool) {
	if nc == nil {
		return
	}
	switch network(nc) {
	case "tcp", "tcp4", "tcp6":
		p.tcp.Add(1)
	case "unix":
		p.unix.Add(1)
	default:
		p.other.Add(1)
	}
	if tls || isTLS(nc) {
		p.encrypted.Add(1)
	}
}

func network(nc net.Conn) string {
	if a := nc.RemoteAddr(); a != nil {
		return a.Network()
	}
	return ""
}

func isTLS(nc net.Conn) bool {
	_, ok := nc.(*tls.Conn)
	return ok
}

// Transport implements Transporter: "tcp", "unix", "tcp+tls" when every connection so
// far took the same, "mixed: 3 tcp, 1 unix, 2 with TLS" otherwise, "" before the first.
func (p *SocketPaths) Transport() string {
	t, u, o, e := p.tcp.Load(), p.unix.Load(), p.other.Load(), p.encrypted.Load()
	n := t + u + o
	if n == 0 {
		return ""
	}
	var one string
	switch n {
	case t:
		one = transportTCP
	case u:
		one = transportUnix
	}
	if one != "" && (e == 0 || e == n) {
		if e == n {
			one += transportTLS
		}
		return one
	}
	var parts []string
	for _, c := range []struct {
		n    int64
		what string
	}{{t, transportTCP}, {u, transportUnix}, {o, "other"}, {e, "with TLS"}} {
		if c.n > 0 {
			parts = append(parts, strconv.FormatInt(c.n, 10)+" "+c.what)
		}
	}
	return "mixed: " + strings.Join(parts, ", ")
}

// Wrap returns the connection to use for nc, dialed under ctx (sock.WithPoller keeps
// it on the poller too: the runner asks for that above a client count).
func (p *SocketPaths) Wrap(ctx context.Context, nc net.Conn) net.Conn {
	if !p.Poller && !sock.Poller(ctx) {
		if b := sock.Blocking(nc); b != nc {
			p.blocking.Add(1)
			return b
		}
	}
	p.poller.Add(1)
	return nc
}

// Sockets implements Socketer.
func (p *SocketPaths) Sockets() string {
	b, n := p.blocking.Load(), p.poller.Load()
	switch {
	case b == 0 && n == 0:
		return ""
	case n == 0:
		return SocketsBlocking
	case b == 0:
		return SocketsPoller
	}
	return "mixed: " + strconv.FormatInt(b, 10) + " " + SocketsBlocking + ", " + strconv.FormatInt(n, 10) + " " + SocketsPoller
}
