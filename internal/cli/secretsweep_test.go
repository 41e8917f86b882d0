package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/instance/instancetest"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/target"
)

// The planted password: an '@' that a URL must write as %40, and distinctive halves
// that a partial leak would show.
const (
	plantedPW = "Pl4nted@S3cret-9q"
	wrongPW   = "Pl4nted@S3cret-9q-wrong" // bad credentials: must not show either
)

// sweepNeedles are what must appear nowhere fathom prints or writes: the password
// raw, URL-encoded, either half, and the base64 of a curl -u user:password.
func sweepNeedles() []string {
	return []string{plantedPW, url.QueryEscape(plantedPW), url.PathEscape(plantedPW), "Pl4nted", "S3cret-9q",
		base64.StdEncoding.EncodeToString([]byte("admin:" + plantedPW)),
		base64.StdEncoding.EncodeToString([]byte("sweeper:" + plantedPW)),
	}
}

// sweep collects every byte a test's commands printed, by path.
type sweep struct {
	mu   sync.Mutex
	seen []sweepOut
}

type sweepOut struct{ what, text string }

func (s *sweep) add(what, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, sweepOut{what, text})
}

// run runs fathom with env (the environment also holding secrets fathom must not echo:
// PGPASSWORD and SWEEP_TOKEN), records stdout and stderr, and returns the result.
// interrupt, when not nil, cancels it.
func (s *sweep) run(t *testing.T, what string, env map[string]string, interrupt <-chan struct{}, args ...string) result {
	t.Helper()
	_, done := s.start(t, what, env, interrupt, args...)
	r := <-done
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") {
		t.Fatalf("%s printed a stack trace:\n%s", what, r.stderr)
	}
	return r
}

// start is run in the background: its stderr as it comes, its result when done.
func (s *sweep) start(t *testing.T, what string, env map[string]string, interrupt <-chan struct{}, args ...string) (*syncBuffer, chan result) {
	out, errb := &syncBuffer{}, &syncBuffer{}
	environ := append(os.Environ(), "SWEEP_TOKEN="+plantedPW)
	e := &Env{Args: args, Stdout: out, Stderr: errb, Getenv: func(k string) string { return env[k] }, Environ: environ, Now: time.Now,
		Interrupts: func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			if interrupt != nil {
				go func() {
					select {
					case <-interrupt:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			return ctx, cancel
		}}
	done := make(chan result, 1)
	go func() {
		code := Run(context.Background(), e)
		r := result{code, out.String(), errb.String()}
		s.add(what+" (stdout)", r.stdout)
		s.add(what+" (stderr)", r.stderr)
		done <- r
	}()
	return errb, done
}

// files records every file under dir.
func (s *sweep) files(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil // a socket, a file gone meanwhile
		}
		n++
		s.add("file "+p, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// get records an HTTP answer.
func (s *sweep) get(t *testing.T, what, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Errorf("GET %s: %v", u, err)
		return 0, ""
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s.add(what+" "+u, string(b))
	return resp.StatusCode, string(b)
}

// check fails the test for every place a needle shows, with its context.
func (s *sweep) check(t *testing.T) {
	t.Helper()
	for _, l := range s.leaks() {
		t.Error(l)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	bytes := 0
	for _, o := range s.seen {
		bytes += len(o.text)
	}
	t.Logf("swept %d outputs, %d bytes", len(s.seen), bytes)
}

func (s *sweep) leaks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, o := range s.seen {
		for _, n := range sweepNeedles() {
			if i := strings.Index(o.text, n); i >= 0 {
				lo, hi := max(0, i-120), min(len(o.text), i+len(n)+60)
				out = append(out, fmt.Sprintf("%s shows the planted password (%q): …%s…", o.what, n, o.text[lo:hi]))
				break
			}
		}
	}
	return out
}

// No secret in any output, from any path: a password is planted in the target DSN,
// the PostgreSQL store's DSN (URL and key=value), the agent store, hooks (curl -u,
// environment assignments, Authorization headers), the plan file and the
// environment, every failure path that can be provoked is, and every byte printed
// (stdout, stderr), served (HTTP, /metrics) and written (every file under the test's
// directories, a dump of every table of the store) is searched for it. See
// TestPlantedSecretSweep's steps for the paths.
func TestPlantedSecretSweep(t *testing.T) {
	instancetest.NeedKind(t, instance.Postgres)
	ctx := context.Background()
	inst, err := instance.Create(ctx, instancetest.Options(instance.Options{Kind: instance.Postgres, Name: "sweep", Dir: instancetest.Dir(t)}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	admin := instancetest.Connect(t, inst)
	defer admin.Close()
	for _, q := range []string{
		"CREATE ROLE sweeper LOGIN CREATEDB PASSWORD '" + plantedPW + "'",
		"CREATE DATABASE sweep_store OWNER sweeper", "CREATE DATABASE sweep_target OWNER sweeper",
		"CREATE DATABASE sweep_store2 OWNER sweeper",
	} {
		if _, err := admin.Query(ctx, q); err != nil {
			t.Fatalf("%s: %v", strings.ReplaceAll(q, plantedPW, "…"), err)
		}
	}
	hostport := fmt.Sprintf("127.0.0.1:%d", inst.Port)
	enc := url.QueryEscape(plantedPW)
	tgt := "postgres://sweeper:" + enc + "@" + hostport + "/sweep_target?sslmode=disable"
	storeURL := "postgres://sweeper:" + enc + "@" + hostport + "/sweep_store?sslmode=disable"
	storeKV := fmt.Sprintf("host=127.0.0.1 port=%d dbname=sweep_store user=sweeper password='%s' sslmode=disable", inst.Port, plantedPW)
	store2 := "postgres://sweeper:" + enc + "@" + hostport + "/sweep_store2?sslmode=disable"
	badTgt := "postgres://sweeper:" + url.QueryEscape(wrongPW) + "@" + hostport + "/sweep_target?sslmode=disable&connect_timeout=5"
	badStore := "postgres://sweeper:" + url.QueryEscape(wrongPW) + "@" + hostport + "/sweep_store?sslmode=disable&connect_timeout=5"

	out := t.TempDir() // everything fathom writes: HOME, state, reports, SQLite copies
	home := filepath.Join(out, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FATHOM_STORE": storeURL, "HOME": home, "FATHOM_CHECK_STATE_DIR": filepath.Join(out, "checkstate")}
	sw := &sweep{}
	defer sw.check(t)
	// The sweep finds what it looks for.
	if l := (&sweep{seen: []sweepOut{{"x", "a " + url.QueryEscape(plantedPW) + " b"}, {"y", "nothing"}}}).leaks(); len(l) != 1 {
		t.Fatalf("the sweep's own check: %q", l)
	}
	base := []string{"--workload", "tpcb", "--scale", "1"}

	// Terminal, --help with the secrets in $FATHOM_TARGET and $FATHOM_STORE.
	sw.run(t, "run --help", map[string]string{"FATHOM_TARGET": tgt, "FATHOM_STORE": storeURL}, nil, "run", "--help")
	sw.run(t, "runs --help", map[string]string{"FATHOM_TARGET": tgt, "FATHOM_STORE": storeKV}, nil, "runs", "--help")

	// Prepare with the password on the command line: a warning, nothing else.
	if r := sw.run(t, "prepare", env, nil, append([]string{"prepare", "--target", tgt}, base...)...); r.code != 0 {
		t.Fatalf("prepare: exit %d\n%s", r.code, r.stderr)
	} else if !strings.Contains(r.stderr, "warning: the password in --target") {
		t.Errorf("no warning for a password in --target: %q", r.stderr)
	}

	// A run whose store goes away mid-run (its sessions terminated, then unreachable
	// behind a cut proxy): the reason is saved and shown everywhere. Its metrics are
	// served for Prometheus while it runs.
	sp := startProxy(t, hostport)
	storeViaProxy := "postgres://sweeper:" + enc + "@" + sp.ln.Addr().String() + "/sweep_store?sslmode=disable"
	stderr, done := sw.start(t, "run (store outage)", env, nil, append([]string{"run", "--target", tgt, "--store", storeViaProxy, "--store-outage", "3s", "-c", "2", "-T", "10m", "-P", "200ms", "--json",
		"--label", "note=sweep", "--metrics-addr", "127.0.0.1:0"}, base...)...)
	waitFor(t, "the run's first interval in the store", func() bool { n, _ := storedIntervals(storeURL, 1); return n > 0 || len(done) > 0 })
	// Its metrics for Prometheus (every label) while it runs.
	if m := metricsAt.FindStringSubmatch(stderr.String()); m != nil {
		sw.get(t, "run --metrics-addr", m[1])
	} else {
		t.Errorf("no metrics address on the run's stderr: %q", stderr.String())
	}
	// Its store connections are dropped a few times (new ones get through: the run
	// rides that out, store/durable), then the proxy is cut for good: past
	// --store-outage the run stops, keeps what it could not write in a spool file and
	// names the upload command. The store itself stays reachable directly, so the
	// run's end and reason are saved.
	for range 3 {
		sp.drop()
		n0, _ := storedIntervals(storeURL, 1)
		waitFor(t, "an interval written after a dropped store connection", func() bool { n, _ := storedIntervals(storeURL, 1); return n > n0 || len(done) > 0 })
	}
	sp.cut()
	var r result
	select {
	case r = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the run did not stop after its store connection was terminated")
	}
	if st, err := stores.Open(storeURL); err == nil {
		if run, err := st.Run(ctx, 1); err == nil {
			t.Logf("run 1 stored as %s: %s", run.Status, run.Reason)
		}
		st.Close()
	}
	// It failed, and says why with the store named without its password.
	if r.code == 0 || !strings.Contains(r.stderr, "fathom store upload") || !strings.Contains(r.stderr, "sweeper@127.0.0.1") {
		t.Errorf("run with its store gone: exit %d\n%s", r.code, r.stderr)
	}

	// A run interrupted (SIGINT) after a few intervals, into the key=value store.
	stop := make(chan struct{})
	go func() {
		if err := poll("run 2's intervals", func() bool { n, _ := storedIntervals(storeKV, 2); return n >= 2 }); err != nil {
			t.Error(err)
		}
		close(stop)
	}()
	sw.run(t, "run (interrupted)", env, stop, append([]string{"run", "--target", tgt, "--store", storeKV, "-c", "2", "-T", "10m", "-P", "200ms"}, base...)...)

	// A target that goes away (through a proxy that is cut) and stays away.
	p := startProxy(t, hostport)
	viaProxy := "postgres://sweeper:" + enc + "@" + p.ln.Addr().String() + "/sweep_target?sslmode=disable"
	go func() {
		if err := poll("run 3's intervals", func() bool { n, _ := storedIntervals(storeURL, 3); return n >= 1 }); err != nil {
			t.Error(err)
		}
		p.cut()
	}()
	sw.run(t, "run (target outage)", env, nil, append([]string{"run", "--target", viaProxy, "-c", "2", "-T", "10m", "-P", "200ms",
		"--reconnect-timeout", "2s", "--connect-timeout", "2s"}, base...)...)

	// Bad credentials: target, store; the target's password from PGPASSWORD instead.
	sw.run(t, "run (bad target password)", env, nil, append([]string{"run", "--target", badTgt, "-T", "1s"}, base...)...)
	sw.run(t, "run (bad store password)", env, nil, append([]string{"run", "--target", tgt, "--store", badStore, "-T", "1s"}, base...)...)
	sw.run(t, "runs (bad store password)", env, nil, "runs", "--store", badStore)
	pgpw := map[string]string{"FATHOM_STORE": storeURL, "HOME": home, "PGPASSWORD": wrongPW}
	sw.run(t, "run (bad PGPASSWORD)", pgpw, nil, append([]string{"run", "--target", "postgres://sweeper@" + hostport + "/sweep_target?sslmode=disable", "-T", "1s"}, base...)...)
	sw.run(t, "check (bad password)", env, nil, "check", "--target", badTgt, "--mode", "connections")
	sw.run(t, "check", env, nil, "check", "--target", tgt, "-e", "max_connections", "-c", "~:1")
	// Forms that are refused: a key=value store that does not parse, a MySQL store.
	sw.run(t, "run (MySQL store)", env, nil, append([]string{"run", "--target", tgt, "--store", "mysql://root:" + enc + "@127.0.0.1/x", "-T", "1s"}, base...)...)
	sw.run(t, "runs (bad key=value store)", env, nil, "runs", "--store", "host=127.0.0.1 password='"+plantedPW)
	sw.run(t, "run (unknown target form)", env, nil, append([]string{"run", "--target", "sweeper:" + plantedPW + "@tcp(127.0.0.1)/x", "-T", "1s"}, base...)...)

	// watch, snapshot.
	sw.run(t, "watch", env, nil, "watch", "--target", tgt, "--store", storeURL, "-T", "1s", "--interval", "250ms")
	sw.run(t, "snapshot", env, nil, "snapshot", "--target", tgt, "-o", filepath.Join(out, "snapshot"), "--samples", "2")

	// An experiment: the password in the plan's target, hooks with curl -u, an
	// Authorization header, an environment assignment and the environment itself; its
	// second cell interrupted.
	in := t.TempDir() // the inputs, which hold the password by design: not swept
	planText := fmt.Sprintf(`experiment: sweep
target: %s
workload: tpcb
options: {scale: 1}
duration: 1s
report_interval: 200ms
repetitions: 2
hooks:
  before_experiment:
    - shell: |
        echo curl -sv -u admin:%[2]s -H "'Authorization: Bearer %[2]s'" http://127.0.0.1:1/; printf 'admin:%[2]s' | base64
    - shell: PGPASSWORD='%[2]s' env | grep -e PGPASSWORD -e SWEEP_TOKEN
    - sql: SELECT 'host=db password=%[2]s' AS dsn
  after_run:
    - shell: echo "connected with postgres://sweeper:%[3]s@db/x"; exit 3
`, tgt, plantedPW, enc)
	planPath := filepath.Join(in, "plan.yaml")
	if err := os.WriteFile(planPath, []byte(planText), 0o600); err != nil {
		t.Fatal(err)
	}
	last := sweepLatestRun(t, storeURL)
	stopX := make(chan struct{})
	go func() {
		if err := poll("the experiment's first run", func() bool { n, _ := storedIntervals(storeURL, last+2); return n >= 1 }); err != nil {
			t.Log(err)
		}
		close(stopX)
	}()
	sw.run(t, "experiment (interrupted)", env, stopX, "experiment", planPath)
	// Each run of an experiment reopens the store with the --store value, password and
	// all (not its shown form, which has none).
	if r := sw.run(t, "experiment (again)", env, nil, "experiment", planPath); strings.Contains(r.stdout+r.stderr, "authentication failed") || !strings.Contains(r.stdout, "runs complete") {
		t.Errorf("experiment: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// The agent store: a coordinator no agent joins, an agent whose run never opens,
	// and the Kubernetes manifests of both.
	sw.run(t, "run --agents", env, nil, append([]string{"run", "--target", tgt, "--store", storeURL, "--agents", "1", "--name", "sweep1", "--agents-wait", "1s", "-T", "1s"}, base...)...)
	sw.run(t, "agent", env, nil, "agent", "--store", storeURL, "--run", "nosuch", "--index", "0", "--wait", "1s")
	sw.run(t, "agent (bad password)", env, nil, "agent", "--store", badStore, "--run", "nosuch", "--index", "0", "--wait", "1s")
	sw.run(t, "k8s", env, nil, "k8s", "--agents", "2", "--name", "sweep2")
	sw.run(t, "k8s --coordinator", env, nil, append([]string{"k8s", "--agents", "2", "--name", "sweep2", "--coordinator", "--", "run", "--target", tgt, "--store", storeURL}, base...)...)

	// Reading it back: every listing, report and export.
	for _, args := range [][]string{
		{"runs"}, {"runs", "--json"}, {"runs", "--store", storeKV}, {"show", "1"}, {"show", "1", "--json"}, {"show", "2"}, {"show", "3", "--json"},
		{"export", "1", "--format", "csv"}, {"export", "1", "--format", "json"}, {"stalls", "1"}, {"compare", "1", "2"},
		{"experiments"}, {"experiments", "sweep", "--json"}, {"show", "exp:sweep"},
		{"report", "1", "2", "3", "-o", filepath.Join(out, "report")}, {"report", "exp:sweep", "-o", filepath.Join(out, "xreport")},
	} {
		sw.run(t, strings.Join(args, " "), env, nil, args...)
	}
	// store copy, plain and anonymized, to SQLite and to another PostgreSQL store.
	sw.run(t, "store copy", env, nil, "store", "copy", storeURL, filepath.Join(out, "copy.db"))
	sw.run(t, "store copy --anonymize", env, nil, "store", "copy", "--anonymize", storeKV, filepath.Join(out, "anon.db"))
	sw.run(t, "store copy to PostgreSQL", env, nil, "store", "copy", storeURL, store2)
	sw.run(t, "store copy (bad password)", env, nil, "store", "copy", badStore, filepath.Join(out, "none.db"))
	sw.run(t, "runs (anonymized copy)", env, nil, "runs", "--json", "--store", filepath.Join(out, "anon.db"))

	// serve: pages and API.
	sweepServe(t, sw, env)

	// What was written: every file, and every table of the stores.
	if n := sw.files(t, out); n < 5 {
		t.Errorf("only %d files written under %s", n, out)
	}
	for _, db := range []string{"sweep_store", "sweep_store2"} {
		sweepDump(t, sw, inst, db)
	}
	// The server's log (errors fathom caused, what it sent that failed).
	if b, err := os.ReadFile(inst.LogFile()); err == nil {
		sw.add("file "+inst.LogFile(), string(b))
	}
}

// sweepServe starts fathom serve on the store and reads every page and API answer.
func sweepServe(t *testing.T, sw *sweep, env map[string]string) {
	var out, errb syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	e := &Env{Args: []string{"serve", "--addr", "127.0.0.1:0"}, Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }, Now: time.Now,
		Interrupts: func(c context.Context) (context.Context, context.CancelFunc) {
			c, stop := context.WithCancel(c)
			go func() {
				select {
				case <-ctx.Done():
					stop()
				case <-c.Done():
				}
			}()
			return c, stop
		}}
	done := make(chan int)
	go func() { done <- Run(context.Background(), e) }()
	at := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
	waitFor(t, "serve's URL", func() bool { return at.MatchString(errb.String()) || len(done) > 0 })
	base := at.FindString(errb.String())
	if base != "" {
		for _, p := range []string{"", "api/runs", "api/runs/1", "api/runs/2", "api/runs/3", "api/runs/1/window", "api/experiments", "api/experiments/1",
			"api/experiments/1/figures", "api/compare?a=1&b=2", "api/info", "metrics", "runs/1", "experiments/1"} {
			sw.get(t, "serve", base+p)
		}
	} else {
		t.Errorf("serve did not start: %s", errb.String())
	}
	cancel()
	<-done
	sw.add("serve (stdout)", out.String())
	sw.add("serve (stderr)", errb.String())
}

// sweepDump records every row of every table of database db on the instance.
func sweepDump(t *testing.T, sw *sweep, inst *instance.Instance, db string) {
	t.Helper()
	u, _ := url.Parse(inst.DSN())
	u.Path = "/" + db
	c := sweepConnect(t, u.String())
	defer c.Close()
	ctx := context.Background()
	tables, err := c.Query(ctx, "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')")
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 5 {
		t.Errorf("%s has %d tables", db, len(tables))
	}
	var all bytes.Buffer
	for _, tb := range tables {
		rows, err := c.Query(ctx, "SELECT t::text FROM "+tb[0]+" t")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			fmt.Fprintln(&all, tb[0], r[0])
		}
	}
	sw.add("table dump of "+db, all.String())
}

// drop closes the connections the proxy forwards now; new ones get through.
func (p *proxy) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// sweepLatestRun is the id of the newest run in the store.
func sweepLatestRun(t *testing.T, dsn string) int64 {
	t.Helper()
	st, err := stores.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.LatestRunID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func sweepConnect(t *testing.T, dsn string) target.Conn {
	t.Helper()
	tg, err := db.Open(dsn, target.Config{ConnectTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
