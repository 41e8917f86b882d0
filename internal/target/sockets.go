package target

import (
	"context"
	"net"
	"strconv"
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

// SocketPaths hands a target's dialed connections to sock.Blocking, unless Poller is
// set, and counts which path each one took (sock.Blocking keeps the poller where it
// cannot do better: every system but Linux, or a socket it cannot set up).
type SocketPaths struct {
	// Poller keeps every connection on Go's network poller (Config.PollerSockets).
	Poller           bool
	blocking, poller atomic.Int64
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
