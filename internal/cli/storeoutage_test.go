package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/instance/instancetest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// outageStore is a PostgreSQL store of the test's own, reached directly and through a
// proxy that can be cut; or (inst set) the only database of a throwaway PostgreSQL
// server that is stopped for the outage, which fathom reaches directly (proxied is
// then direct).
type outageStore struct {
	direct, proxied string
	db              string
	proxy           *dbtest.Proxy
	admin           string
	inst            *instance.Instance
}

// outageKinds are the two ways a store goes away in these tests: the network to it is
// cut (every connection closed, new ones refused), or the server is stopped (pg_ctl
// stop -m fast) and started again on the same port and data directory.
var outageKinds = []struct {
	name string
	make func(t *testing.T) *outageStore
}{
	{"proxy-cut", newOutageStore},
	{"server-stopped", newStoppedStore},
}

// newStoppedStore is a store on a throwaway PostgreSQL server of the test's own, on a
// port that stays the same when it is started again.
func newStoppedStore(t *testing.T) *outageStore {
	instancetest.NeedKind(t, instance.Postgres)
	ctx := context.Background()
	inst, err := instance.Create(ctx, instancetest.Options(instance.Options{Kind: instance.Postgres, Name: "store", Dir: instancetest.Dir(t),
		Ports: &instance.Ports{Min: 25500, Max: 25599}, Owner: "store outage test"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Started again on this port or not at all: the store's URL names it.
	inst.Ports = &instance.Ports{Min: inst.Port, Max: inst.Port}
	u, err := url.Parse(inst.DSN())
	if err != nil {
		t.Fatal(err)
	}
	admin := u.String()
	u.Path = "/fathom_store"
	return &outageStore{direct: u.String(), proxied: u.String(), db: "fathom_store", admin: admin, inst: inst}
}

// cut makes the store unreachable: the proxy cut, or the server stopped.
func (s *outageStore) cut(t *testing.T) {
	if s.inst == nil {
		s.proxy.Cut()
		return
	}
	if err := s.inst.Stop(context.Background()); err != nil {
		t.Error(err)
	}
	if s.inst.Running() {
		t.Error("the store's server still runs after pg_ctl stop")
	}
}

// restore makes it reachable again (the server started, accepting connections).
func (s *outageStore) restore(t *testing.T) {
	if s.inst == nil {
		s.proxy.Restore()
		return
	}
	if err := s.inst.Start(context.Background()); err != nil {
		t.Error(err)
	}
}

// outage cuts the store for d (from the cut to the restore's start), and says when.
func (s *outageStore) outage(t *testing.T, d time.Duration) (cutAt, backAt time.Time) {
	cutAt = time.Now()
	s.cut(t)
	time.Sleep(time.Until(cutAt.Add(d))) // the outage's length, not a wait for a condition
	s.restore(t)
	return cutAt, time.Now()
}

func newOutageStore(t *testing.T) *outageStore {
	return newOutageStoreWith(t, dbtest.ProxyOptions{})
}

// newOutageStoreWith is newOutageStore with a proxy made as o says.
func newOutageStoreWith(t *testing.T, o dbtest.ProxyOptions) *outageStore {
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
	p := dbtest.StartProxy(t, u.Host, o)
	u.Host = p.Addr()
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
		if err := pollFirstInterval(st, "the run's first stored interval"); err != nil {
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

// A store outage of 10 s (the network cut, or the server stopped), and of 60 s (the
// server stopped), during a run: the run measures on, writes what it kept when the
// store returns, and the store holds every interval once, as the run printed them,
// with a warning that says what happened.
func TestStoreOutageRun(t *testing.T) {
	for _, c := range []struct {
		kind   int
		outage time.Duration
	}{{0, 10 * time.Second}, {1, 10 * time.Second}, {1, 60 * time.Second}} {
		k, outage := outageKinds[c.kind], c.outage
		t.Run(k.name+"-"+outage.String(), func(t *testing.T) {
			if outage > 10*time.Second && testing.Short() {
				t.Skip("-short: the 60 s outage is left out")
			}
			s := k.make(t)
			var cutAt, backAt time.Time
			r := outageRun(t, s, (outage + 10*time.Second).String(), nil, func() {
				cutAt, backAt = s.outage(t, outage)
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
	t.Logf("the run printed on stderr:\n%s", r.stderr)
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
	t.Logf("stored: %d intervals, %d transactions; warnings %q", sum.Intervals, sum.Transactions, run.Warnings)
}

var uploadLine = regexp.MustCompile("`fathom store upload --store (\\S+) (\\S+)`")

// An outage longer than --store-outage stops the run with the line that finishes the
// upload; the spool file is private; the upload writes every interval the run printed,
// and a second upload changes nothing.
func TestStoreOutageOverBound(t *testing.T) {
	s := newOutageStore(t)
	r := outageRun(t, s, "2m", []string{"--store-outage", "3s"}, func() { s.proxy.Cut() })
	t.Logf("the run printed on stderr:\n%s", r.stderr)
	if r.code != exitFailure {
		t.Fatalf("exit %d, want %d: %s", r.code, exitFailure, r.stderr)
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
	s.proxy.Restore()
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
	if other.code != exitUsage || !strings.Contains(other.stderr, "holds writes for") {
		t.Errorf("upload to another store: exit %d: %s", other.code, other.stderr)
	}
}

// A store outage (the network cut for 10 s, or the server stopped for 10 s and for 60 s) in the middle of an
// experiment: the experiment goes on through it (the run under way measures on; the
// bookkeeping between runs waits for the store), ends complete with every run, and each run's stored intervals are the ones it
// summed up, each once.
func TestStoreOutageExperiment(t *testing.T) {
	for _, c := range outageCases {
		k, outage := outageKinds[c.kind], c.outage
		t.Run(k.name+"-"+outage.String(), func(t *testing.T) {
			if outage > 10*time.Second && testing.Short() {
				t.Skip("-short: the 60 s outage is left out")
			}
			storeOutageExperiment(t, k.make(t), outage)
		})
	}
}

// outageCases are the outages the experiment and agents tests provoke: the network
// cut for 10 s, and the server stopped for 10 s and for 60 s.
var outageCases = []struct {
	kind   int // in outageKinds
	outage time.Duration
}{{0, 10 * time.Second}, {1, 10 * time.Second}, {1, 60 * time.Second}}

func storeOutageExperiment(t *testing.T, s *outageStore, outage time.Duration) {
	target := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	env := map[string]string{"FATHOM_STORE": s.proxied, "FATHOM_SPOOL_DIR": filepath.Join(t.TempDir(), "spool")}
	if r := fathom(t, env, nil, "prepare", "--target", target, "--workload", "oltp_point_select", "--table-size", "1000"); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	name := fmt.Sprintf("outage-%d", time.Now().UnixNano())
	plan := writePlan(t, fmt.Sprintf(`experiment: %s
target: %s
workload: oltp_point_select
options: {table_size: 1000}
duration: 4s
report_interval: 250ms
repetitions: 3
matrix:
  clients: [1]
`, name, target))
	st := s.open(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The outage starts once the first run has stored an interval and lasts longer
		// than one run: it spans the end of one run and the start of the next (60 s:
		// every later run of the experiment).
		if err := pollFirstInterval(st, "the experiment's first stored interval"); err != nil {
			t.Error(err)
			return
		}
		s.outage(t, outage)
	}()
	r := fathom(t, env, nil, "experiment", "-q", plan)
	<-done
	st = s.open(t) // on connections made after the outage
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("the experiment printed on stderr:\n%s", r.stderr)
	if !strings.Contains(r.stderr, "is unreachable") || !strings.Contains(r.stderr, "is back after") {
		t.Errorf("the outage and the store's return were not said on stderr:\n%s", r.stderr)
	}
	exp, err := st.ExperimentByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Status != "complete" || exp.Complete != 3 {
		t.Fatalf("experiment %s, %d runs complete; want complete, 3", exp.Status, exp.Complete)
	}
	runs, err := st.ExperimentRuns(context.Background(), exp.ID)
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	warned := 0
	for _, er := range runs {
		run, sum := runSummary(t, st, er.RunID)
		if run.Status != "complete" || run.Gone {
			t.Errorf("run %d: stored status %q gone %v", run.ID, run.Status, run.Gone)
		}
		ivs := checkIntervals(t, st, er.RunID, sum)
		if last := ivs[len(ivs)-1].End; last < 3*time.Second {
			t.Errorf("run %d measured %s of 4s", run.ID, last)
		}
		for _, w := range run.Warnings {
			if strings.Contains(w, "unreachable from") {
				warned++
				t.Logf("run %d: %s", run.ID, w)
			}
		}
	}
	if warned == 0 {
		t.Errorf("no run records the outage")
	}
}

// A store outage (the network cut for 10 s, or the server stopped for 10 s and for
// 60 s) during a run with three agents: the agents and the coordinator
// measure and merge on through it, the run ends complete, the agents' transactions add
// up to the run's, and the store holds every merged interval once, as the run summed
// them up.
func TestStoreOutageAgents(t *testing.T) {
	for _, c := range outageCases {
		k, outage := outageKinds[c.kind], c.outage
		t.Run(k.name+"-"+outage.String(), func(t *testing.T) {
			if outage > 10*time.Second && testing.Short() {
				t.Skip("-short: the 60 s outage is left out")
			}
			storeOutageAgents(t, k.make(t), outage)
		})
	}
}

func storeOutageAgents(t *testing.T, s *outageStore, outage time.Duration) {
	// The run lasts 6 s longer than the outage (16 s for 10 s): it measures through it.
	length := outage + 6*time.Second
	target := dbtest.PostgresDatabase(t, "agents_outage")
	env := map[string]string{"FATHOM_STORE": s.proxied, "FATHOM_SPOOL_DIR": filepath.Join(t.TempDir(), "spool")}
	if r := fathom(t, env, nil, "prepare", "--workload", "tpcb", "--scale", "1", "--target", target); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	name := fmt.Sprintf("outage-%d", time.Now().UnixNano())
	var wg sync.WaitGroup
	agents := make([]result, 3)
	for i := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agents[i] = fathom(t, env, nil, "agent", "--run", name, "--index", fmt.Sprint(i), "--wait", "2m")
		}()
	}
	st := s.open(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := pollFirstInterval(st, "the run's first merged interval"); err != nil {
			t.Error(err)
			return
		}
		s.outage(t, outage)
	}()
	r := fathom(t, env, nil, "run", "--workload", "tpcb", "--agents", "3", "--name", name, "-c", "3", "-T", length.String(), "-P", "0.5", "--json", "--target", target)
	wg.Wait()
	<-done
	st = s.open(t) // on connections made after the outage
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("the coordinator printed on stderr:\n%s", r.stderr)
	sum := summary(t, r)
	if sum.Status != "complete" {
		t.Fatalf("status %s (%s)", sum.Status, sum.Reason)
	}
	n := agentTransactions(t, agents)
	if sum.Transactions == 0 || sum.Transactions != n {
		t.Errorf("the run counted %d transactions; the agents' add up to %d", sum.Transactions, n)
	}
	ivs := checkIntervals(t, st, sum.RunID, sum)
	if last := ivs[len(ivs)-1].End; last < length-2*time.Second {
		t.Errorf("the run measured %s of %s", last, length)
	}
	run, err := st.Run(context.Background(), sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "complete" || run.Gone {
		t.Errorf("stored status %q gone %v", run.Status, run.Gone)
	}
	if !strings.Contains(strings.Join(run.Warnings, "\n"), "unreachable from") {
		t.Errorf("the run does not record the outage: %q", run.Warnings)
	}
}

// A 4 s store outage during a watch session: the session samples on, writes what it
// kept when the store returns, and the store holds every sample the session counted,
// with the outage recorded.
func TestStoreOutageWatch(t *testing.T) {
	s := newOutageStore(t)
	target := dbtest.PostgresDSN(t)
	env := map[string]string{"FATHOM_STORE": s.proxied, "FATHOM_SPOOL_DIR": filepath.Join(t.TempDir(), "spool")}
	st := s.open(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := poll("the watch's first stored sample", func() bool {
			id, err := st.LatestRunID(context.Background())
			if err != nil || id == 0 {
				return false
			}
			ss, _ := st.SampleStatuses(context.Background(), id)
			return len(ss) > 0
		}); err != nil {
			t.Error(err)
			return
		}
		s.proxy.Cut()
		time.Sleep(4 * time.Second) // the outage's length, not a wait for a condition
		s.proxy.Restore()
	}()
	r := fathom(t, env, nil, "watch", "--target", target, "-T", "10s", "-P", "500ms", "--json", "-q")
	<-done
	if r.code != 0 {
		t.Fatalf("watch: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("the watch printed on stderr:\n%s", r.stderr)
	var sum struct {
		RunID   int64  `json:"run_id"`
		Status  string `json:"status"`
		Samples int    `json:"samples"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("stdout: %v\n%s", err, r.stdout)
	}
	if !strings.Contains(r.stderr, "is unreachable") || !strings.Contains(r.stderr, "is back after") {
		t.Errorf("the outage and the store's return were not said on stderr:\n%s", r.stderr)
	}
	ss, err := st.SampleStatuses(context.Background(), sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[int]bool{}
	for _, x := range ss {
		stored[x.Interval] = true
	}
	if sum.Status != "complete" || sum.Samples < 15 || len(stored) != sum.Samples {
		t.Errorf("watch %s with %d samples; %d samples stored", sum.Status, sum.Samples, len(stored))
	}
	run, err := st.Run(context.Background(), sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "complete" || !strings.Contains(strings.Join(run.Warnings, "\n"), "unreachable from") {
		t.Errorf("stored status %q, warnings %q", run.Status, run.Warnings)
	}
}

// pollFirstInterval waits until the newest run in st has an interval stored.
func pollFirstInterval(st store.Store, what string) error {
	return poll(what, func() bool {
		id, err := st.LatestRunID(context.Background())
		if err != nil || id == 0 {
			return false
		}
		ivs, _ := st.Intervals(context.Background(), id)
		return len(ivs) > 0
	})
}

// ackLoss is a proxy pump that loses the acknowledgement of the first statement
// that holds insert: the server commits it, the client's connection is closed before
// the answer (ack, a CommandComplete tag) reaches it, and the server's side is kept
// open, so its session (and any lock it took) stays as after a network cut the
// server did not see.
type ackLoss struct {
	insert, ack []byte
	mu          sync.Mutex
	creating    map[int]bool // connections that sent the INSERT
	lost        bool         // the acknowledgement was lost (once)
	linger      chan struct{}
}

func newAckLoss(t *testing.T, insert, ack string) *ackLoss {
	a := &ackLoss{insert: []byte(insert), ack: []byte(ack + "\x00"), creating: map[int]bool{}, linger: make(chan struct{})}
	t.Cleanup(func() { close(a.linger) })
	return a
}

func (a *ackLoss) wasLost() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lost
}

func (a *ackLoss) pump(id int, up bool, dst io.Writer, src io.Reader) {
	buf := make([]byte, 64<<10)
	var tail []byte // the end of the last read, for a match across two reads
	for {
		n, err := src.Read(buf)
		if n > 0 {
			seen := append(tail, buf[:n]...)
			a.mu.Lock()
			switch {
			case up && !a.lost && bytes.Contains(seen, a.insert):
				a.creating[id] = true
			case !up && !a.lost && a.creating[id] && bytes.Contains(seen, a.ack):
				// Committed: the answer is not passed on, the client's side closed.
				a.lost = true
				a.mu.Unlock()
				return
			}
			lost := a.lost && a.creating[id]
			a.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				if up && lost {
					<-a.linger // the server's side stays open
				}
				return
			}
			tail = append(tail[:0], seen[max(0, len(seen)-32):]...)
		}
		if err != nil {
			a.mu.Lock()
			lost := a.lost && a.creating[id]
			a.mu.Unlock()
			if up && lost {
				<-a.linger
			}
			return
		}
	}
}

// The store commits a new run but its acknowledgement is lost, and the server keeps
// the session that committed it (with the run's lock): the run is not created twice,
// does not fail on its UUID, is not read as interrupted, and stores every interval
// it printed.
func TestStoreCreateRunAckLost(t *testing.T) {
	// The run is inserted in a transaction: its COMMIT's answer is lost.
	a := newAckLoss(t, "INSERT INTO runs (uuid", "COMMIT")
	s := newOutageStoreWith(t, dbtest.ProxyOptions{Pump: a.pump})
	var running *store.Run
	r := outageRun(t, s, "4s", nil, func() {
		st := s.open(t)
		id, _ := st.LatestRunID(context.Background())
		running, _ = st.Run(context.Background(), id)
	})
	t.Logf("the run printed on stderr:\n%s", r.stderr)
	if !a.wasLost() {
		t.Fatal("the proxy never lost the acknowledgement of the run's INSERT")
	}
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	sum := summary(t, r)
	if sum.Status != "complete" {
		t.Fatalf("status %s (%s)", sum.Status, sum.Reason)
	}
	st := s.open(t)
	runs, err := st.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != sum.RunID {
		t.Fatalf("the store holds %d runs, want 1 (run %d)", len(runs), sum.RunID)
	}
	if running == nil || running.ID != sum.RunID || running.Status != "running" || running.Gone {
		t.Errorf("while it ran, the run read %+v; want running with a live writer", running)
	}
	checkIntervals(t, st, sum.RunID, sum)
	if runs[0].Status != "complete" {
		t.Errorf("stored status %q", runs[0].Status)
	}
}

// The store commits a coordinator's agent job but the acknowledgement is lost: the
// coordinator is not refused its own --name ("already open"), the job is created
// once, and the run with its two agents ends complete, their transactions adding up
// to the run's.
func TestStoreCreateAgentJobAckLost(t *testing.T) {
	// The job is inserted in one statement: its own answer is lost.
	a := newAckLoss(t, "INSERT INTO agent_jobs", "INSERT 0 1")
	s := newOutageStoreWith(t, dbtest.ProxyOptions{Pump: a.pump})
	target := dbtest.PostgresDatabase(t, "agents_ackloss")
	env := map[string]string{"FATHOM_STORE": s.proxied, "FATHOM_SPOOL_DIR": filepath.Join(t.TempDir(), "spool")}
	if r := fathom(t, env, nil, "prepare", "--workload", "tpcb", "--scale", "1", "--target", target); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	name := fmt.Sprintf("ackloss-%d", time.Now().UnixNano())
	var wg sync.WaitGroup
	agents := make([]result, 2)
	for i := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agents[i] = fathom(t, env, nil, "agent", "--run", name, "--index", fmt.Sprint(i), "--wait", "2m")
		}()
	}
	r := fathom(t, env, nil, "run", "--workload", "tpcb", "--agents", "2", "--name", name, "-c", "2", "-T", "3", "-P", "0.5", "--json", "--target", target)
	wg.Wait()
	t.Logf("the coordinator printed on stderr:\n%s", r.stderr)
	if !a.wasLost() {
		t.Fatal("the proxy never lost the acknowledgement of the job's INSERT")
	}
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	sum := summary(t, r)
	if sum.Status != "complete" {
		t.Fatalf("status %s (%s)", sum.Status, sum.Reason)
	}
	if n := agentTransactions(t, agents); sum.Transactions == 0 || sum.Transactions != n {
		t.Errorf("the run counted %d transactions; the agents' add up to %d", sum.Transactions, n)
	}
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, s.direct)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	res, err := c.Exec(ctx, "SELECT count(*) FROM agent_jobs WHERE name = '"+name+"'").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if n := string(res[0].Rows[0][0]); n != "1" {
		t.Errorf("%s agent jobs named %s, want 1", n, name)
	}
	checkIntervals(t, s.open(t), sum.RunID, sum)
}
