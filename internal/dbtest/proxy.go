package dbtest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a real server, for tests that put something
// between a client and the server: an outage (Cut, Restore), a slow path, or a reader
// of what goes by (ProxyOptions.Pump).
type Proxy struct {
	ln       net.Listener
	upstream string
	pump     func(id int, up bool, dst io.Writer, src io.Reader)

	mu       sync.Mutex
	cut      bool
	conns    []net.Conn
	accepted int
}

// ProxyOptions change what StartProxy makes.
type ProxyOptions struct {
	// Listen is the address to listen on (default 127.0.0.1:0).
	Listen string
	// Pump carries one direction of connection id (0, 1, … in the order accepted):
	// the client's bytes to the server when up, the server's to the client when not. It
	// returns when src ends or dst fails; the connection is then closed. Default io.Copy.
	Pump func(id int, up bool, dst io.Writer, src io.Reader)
}

// StartProxy listens (until the test ends) and forwards each connection to upstream.
func StartProxy(t testing.TB, upstream string, o ProxyOptions) *Proxy {
	t.Helper()
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	if o.Pump == nil {
		o.Pump = func(_ int, _ bool, dst io.Writer, src io.Reader) { _, _ = io.Copy(dst, src) }
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, upstream: upstream, pump: o.Pump}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.Cut() })
	return p
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		id := p.accepted
		p.accepted++
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go func() { p.pump(id, true, u, c); u.Close() }()
		go func() { p.pump(id, false, c, u); c.Close() }()
	}
}

// Addr is the address clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every connection and refuses new ones (accepted, then closed at once)
// until Restore: the server is out of reach.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// Accepted is how many connections were forwarded so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}
