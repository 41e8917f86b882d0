package cli

import (
	"context"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store/stores"
)

// proxy forwards TCP connections to a real server until cut, which closes the listener
// and every connection: to fathom, the server has become unreachable.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, upstream string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) cut() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// When the server becomes unreachable and stays so, the run stops after the reconnect
// timeout, is stored as failed with the reason, keeps what it measured, and prints the
// summary of what ran.
func TestServerGoneFailsRunKeepsIntervals(t *testing.T) {
	for _, tg := range cliTargets[1:] {
		t.Run(tg.name, func(t *testing.T) {
			dsn := tg.dsn(t)
			env := storeEnv(t)
			if r := fathom(t, env, nil, "prepare", "--target", dsn, "--workload", "oltp_point_select", "--table-size", "1000"); r.code != 0 {
				t.Fatalf("prepare: %s", r.stderr)
			}
			u, _ := url.Parse(dsn)
			host := u.Host
			if !strings.Contains(host, ":") {
				t.Skip("test DSN has no TCP host:port to proxy")
			}
			p := startProxy(t, host)
			u.Host = p.ln.Addr().String()
			cut := make(chan time.Time, 1)
			go func() {
				// Cut once the clients are measuring, however slow the start.
				if err := poll("the run's first measured interval", func() bool {
					_, txns := storedIntervals(env["FATHOM_STORE"], 1)
					return txns > 0
				}); err != nil {
					t.Error(err)
				}
				cut <- time.Now()
				p.cut()
			}()
			r := fathom(t, env, nil, "run", "--target", u.String(), "--workload", "oltp_point_select", "-c", "2", "-T", "10m",
				"-P", "250ms", "--reconnect-timeout", "2s", "--connect-timeout", "1s", "--json", "-q")
			if took := time.Since(<-cut); took > 20*time.Second {
				t.Errorf("took %s after the cut to give up (reconnect timeout 2s)", took)
			}
			// The lost connections are the run's first errors, printed as they
			// happened; then the one line of the failure.
			var live, rest []string
			for _, l := range strings.SplitAfter(r.stderr, "\n") {
				if strings.HasPrefix(l, "fathom: error: client ") {
					live = append(live, l)
				} else {
					rest = append(rest, l)
				}
			}
			if len(live) == 0 || !strings.Contains(live[0], "connection") {
				t.Errorf("the lost connection was not printed as it happened:\n%s", r.stderr)
			}
			r.stderr = strings.Join(rest, "")
			oneLine(t, r, exitFailure, "failed")
			s := summary(t, r)
			if s.Status != "failed" || !strings.Contains(s.Reason, "reconnect") || s.Transactions == 0 {
				t.Fatalf("status %s reason %q, %d transactions", s.Status, s.Reason, s.Transactions)
			}
			st, err := stores.Open(env["FATHOM_STORE"])
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			run, err := st.Run(context.Background(), s.RunID)
			if err != nil {
				t.Fatal(err)
			}
			ivs, _ := st.Intervals(context.Background(), s.RunID)
			// Intervals went on while the clients tried to reconnect (2s of 250ms ones).
			if run.Status != "failed" || run.Reason == "" || len(ivs) < 6 {
				t.Fatalf("stored: status %s reason %q, %d intervals", run.Status, run.Reason, len(ivs))
			}
		})
	}
}
