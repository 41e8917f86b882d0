package target

import (
	"context"
	"crypto/tls"
	"net"
	"path/filepath"
	"testing"
)

// dialPair connects to a listener on network (tcp or unix) and returns the client side.
func dialPair(t *testing.T, network string) net.Conn {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		if c, err := ln.Accept(); err == nil {
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	c, err := net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestTransport: SocketPaths records the transport of each established connection,
// from the socket itself (blocking or on the poller), with TLS when the connection is
// a *tls.Conn or the caller says so, and says "mixed" with the counts when they differ.
func TestTransport(t *testing.T) {
	type conn struct {
		network string
		tls     int // 0: plain; 1: wrapped in a *tls.Conn; 2: told by the caller
	}
	cases := []struct {
		name  string
		conns []conn
		want  string
	}{
		{"none", nil, ""},
		{"tcp", []conn{{"tcp", 0}, {"tcp", 0}}, "tcp"},
		{"unix", []conn{{"unix", 0}}, "unix"},
		{"tcp tls", []conn{{"tcp", 1}, {"tcp", 2}}, "tcp+tls"},
		{"tcp some tls", []conn{{"tcp", 0}, {"tcp", 1}}, "mixed: 2 tcp, 1 with TLS"},
		{"both", []conn{{"tcp", 0}, {"unix", 0}, {"unix", 0}}, "mixed: 1 tcp, 2 unix"},
	}
	for _, tc := range cases {
		for _, poller := range []bool{false, true} {
			p := &SocketPaths{Poller: poller}
			for _, c := range tc.conns {
				nc := p.Wrap(context.Background(), dialPair(t, c.network))
				if c.tls == 1 {
					nc = tls.Client(nc, &tls.Config{InsecureSkipVerify: true}) // never handshaken: only its type counts
				}
				p.Established(nc, c.tls == 2)
			}
			p.Established(nil, true) // a connection the caller did not see dialed: not counted
			if got := p.Transport(); got != tc.want {
				t.Errorf("%s (poller %v): Transport() = %q, want %q", tc.name, poller, got, tc.want)
			}
		}
	}
}
