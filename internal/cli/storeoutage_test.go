package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// switchProxy forwards TCP connections to a real server; down closes every
// connection and refuses new ones (accepted, then closed at once) until up.
type switchProxy struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	isDown   bool
	conns    []net.Conn
}

func startSwitchProxy(t *testing.T, upstream string) *switchProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &switchProxy{ln: ln, upstream: upstream}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			down := p.isDown
			p.mu.Unlock()
			if down {
				c.Close()
				continue
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
	t.Cleanup(func() { ln.Close(); p.down() })
	return p
}

func (p *switchProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isDown = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *switchProxy) up() {
	p.mu.Lock()
	p.isDown = false
	p.mu.Unlock()
}

// outageStore is a PostgreSQL store of the test's own, reached directly and through a
// proxy that can be cut.
type outageStore struct {
	direct, proxied string
	db              string
	proxy           *switchProxy
	admin           string
}

func newOutageStore(t *testing.T) *outageStore {
	base := dbtest.PostgresDSN(t)
	db := fmt.Sprintf("%sspool_%d", dbtest.Prefix(), time.Now().UnixNano())
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connecting to the test PostgreSQL: %v", err)
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE "`+db+`"`).ReadAll(); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	t.Cleanup(func() {
		c, err := pgconn.Connect(ctx, base)
		if err == nil {
			_, _ = c.Exec(ctx, `DROP DATABASE IF EXISTS "`+db+`" WITH (FORCE)`).ReadAll()
			c.Close(ctx)
		}
	})
	u, err := url.Parse(base)
	if err != nil || !strings.Contains(u.Host, ":") {
		t.Skip("test DSN has no TCP host:port to proxy")
	}
	u.Path = "/" + db
	direct := u.String()
	p := startSwitchProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	return &outageStore{direct: direct, proxied: u.String(), db: db, proxy: p, admin: base}
}

// terminate ends every session of the store's database (pg_terminate_backend).
func (s *outageStore) terminate(t *testing.T) int {
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, s.admin)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer c.Close(ctx)
	res, err := c.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '`+s.db+`'`).ReadAll()
	if err != nil {
		t.Error(err)
		return 0
	}
	return len(res[0].Rows)
}

func (s *outageStore) open(t *testing.T) store.Store {
	st, err := stores.Open(s.direct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// checkIntervals asserts that run id holds every interval of the printed summary,
// each once, in order, with the printed transaction count.
func checkIntervals(t *testing.T, st store.Store, id int64, sum measure.Summary) []*measure.Interval {
	t.Helper()
	ivs, err := st.Intervals(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var txns int64
	measured := 0
	for i, iv := range ivs {
		if iv.Index != i {
			t.Fatalf("interval %d stored at position %d: an interval missing or doubled", iv.Index, i)
		}
		if iv.Warmup {
			continue
		}
		measured++
		for _, ty := range iv.Types {
			txns += ty.OK
		}
	}
	if measured != sum.Intervals || txns != sum.Transactions {
		t.Fatalf("stored %d measured intervals with %d transactions; the run printed %d intervals, %d transactions",
			measured, txns, sum.Intervals, sum.Transactions)
	}
	return ivs
}

// outageRun starts a run of dur with 250 ms intervals against a SQLite target, its
// store behind the proxy, and returns once it ended. fault is called (from another
// goroutine) once the run's first interval is stored.
func outageRun(t *testing.T, s *outageStore, dur string, extra []string, fault func()) result {
	target := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	env := map[string]string{"FATHOM_STORE": s.proxied, "FATHOM_SPOOL_DIR": filepath.Join(t.TempDir(), "spool")}
	if r := fathom(t, env, nil, "prepare", "--target", target, "--workload", "oltp_point_select", "--table-size", "1000"); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	st := s.open(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := poll("the run's first stored interval", func() bool {
			id, err := st.LatestRunID(context.Background())
			if err != nil || id == 0 {
				return false
			}
			ivs, _ := st.Intervals(context.Background(), id)
			return len(ivs) > 0
		}); err != nil {
			t.Error(err)
			return
		}
		fault()
	}()
	args := append([]string{"run", "--target", target, "--workload", "oltp_point_select", "-c", "1", "-T", dur,
		"-P", "250ms", "--json", "-q", "--no-collect"}, extra...)
	r := fathom(t, env, nil, args...)
	<-done
	return r
}

// A store outage of 10 s, and of 60 s, during a run: the run measures on, writes
// what it kept when the store returns, and the store holds every interval once, as
// the run printed them, with a warning that says what happened.
func TestStoreOutageRun(t *testing.T) {
	for _, outage := range []time.Duration{10 * time.Second, 60 * time.Second} {
		t.Run(outage.String(), func(t *testing.T) {
			if outage > 10*time.Second && testing.Short() {
				t.Skip("-short: the 60 s outage is left out")
			}
			s := newOutageStore(t)
			var cutAt, backAt time.Time
			r := outageRun(t, s, (outage + 10*time.Second).String(), nil, func() {
				cutAt = time.Now()
				s.proxy.down()
				time.Sleep(outage) // the outage's length, not a wait for a condition
				s.proxy.up()
				backAt = time.Now()
			})
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			t.Logf("the run printed on stderr:\n%s", r.stderr)
			sum := summary(t, r)
			if sum.Status != "complete" {
				t.Fatalf("status %s (%s)", sum.Status, sum.Reason)
			}
			if !strings.Contains(r.stderr, "is unreachable") || !strings.Contains(r.stderr, "is back after") {
				t.Errorf("the outage and the store's return were not said on stderr:\n%s", r.stderr)
			}
			st := s.open(t)
			ivs := checkIntervals(t, st, sum.RunID, sum)
			// Measuring went on through the outage: intervals cover it.
			if last := ivs[len(ivs)-1].End; last < outage {
				t.Errorf("the run measured %s, less than the %s outage", last, outage)
			}
			run, err := st.Run(context.Background(), sum.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != "complete" || run.Gone {
				t.Errorf("stored status %q gone %v", run.Status, run.Gone)
			}
			warned := false
			for _, w := range run.Warnings {
				if strings.Contains(w, "unreachable from") && strings.Contains(w, "nothing measured was lost") {
					warned = true
					t.Logf("cut %s, back %s; warning: %s", cutAt.Format("15:04:05.000"), backAt.Format("15:04:05.000"), w)
				}
			}
			if !warned {
				t.Errorf("no outage warning with the run: %q", run.Warnings)
			}
		})
	}
}

// Terminating the store's sessions (pg_terminate_backend) during a run, three times:
// the run goes on, every interval is stored once.
func TestStoreSessionsTerminated(t *testing.T) {
	s := newOutageStore(t)
	r := outageRun(t, s, "8s", nil, func() {
		st := s.open(t)
		for k := 0; k < 3; k++ {
			id, _ := st.LatestRunID(context.Background())
			ivs, _ := st.Intervals(context.Background(), id)
			n := len(ivs)
			s.terminate(t)
			// The next kill once the run has written again.
			_ = poll("an interval written after the sessions were terminated", func() bool {
				ivs, _ := st.Intervals(context.Background(), id)
				return len(ivs) > n+1
			})
		}
	})
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	sum := summary(t, r)
	st := s.open(t)
	checkIntervals(t, st, sum.RunID, sum)
	run, err := st.Run(context.Background(), sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "complete" || run.Gone {
		t.Errorf("stored status %q gone %v", run.Status, run.Gone)
	}
}

var uploadLine = regexp.MustCompile("`fathom store upload --store (\\S+) (\\S+)`")

// An outage longer than --store-outage stops the run with the line that finishes the
// upload; the spool file is private; the upload writes every interval the run printed,
// and a second upload changes nothing.
func TestStoreOutageOverBound(t *testing.T) {
	s := newOutageStore(t)
	r := outageRun(t, s, "2m", []string{"--store-outage", "3s"}, func() { s.proxy.down() })
	if r.code != ExitFailure {
		t.Fatalf("exit %d, want %d: %s", r.code, ExitFailure, r.stderr)
	}
	sum := summary(t, r)
	m := uploadLine.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("stderr does not say how to finish the upload:\n%s", r.stderr)
	}
	file := strings.Trim(m[2], "'")
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("spool file mode %v, want 0600", fi.Mode().Perm())
	}
	if strings.Contains(r.stderr, "password") {
		t.Errorf("stderr mentions a password:\n%s", r.stderr)
	}
	s.proxy.up()
	st := s.open(t)
	before, _ := st.Intervals(context.Background(), sum.RunID)
	env := map[string]string{"FATHOM_STORE": s.proxied}
	for k := 0; k < 2; k++ {
		u := fathom(t, env, nil, "store", "upload", file)
		if u.code != 0 || !strings.Contains(u.stdout, "uploaded") {
			t.Fatalf("upload %d: exit %d\n%s%s", k+1, u.code, u.stdout, u.stderr)
		}
		t.Logf("upload %d: %s", k+1, strings.TrimSpace(u.stdout))
		checkIntervals(t, st, sum.RunID, sum)
	}
	run, err := st.Run(context.Background(), sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "failed" || !strings.Contains(run.Reason, "unreachable") {
		t.Errorf("after the upload: status %q reason %q", run.Status, run.Reason)
	}
	t.Logf("%d intervals stored before the upload, %d printed; reason: %s", len(before), sum.Intervals, run.Reason)
	// A file for another store is refused in one line.
	other := fathom(t, map[string]string{"FATHOM_STORE": s.direct}, nil, "store", "upload", file)
	if other.code != ExitUsage || !strings.Contains(other.stderr, "holds writes for") {
		t.Errorf("upload to another store: exit %d: %s", other.code, other.stderr)
	}
}
