package durable_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/durable"
	"github.com/fathom-lab/fathom/internal/store/postgres"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// Past the memory bound, what waits through an outage goes to a private spool file
// (0700 directory, 0600 file), in order after what is in memory; when the store
// returns, every write reaches it once and in order, the file is removed, and the run
// records the outage.
func TestSpillToFile(t *testing.T) {
	direct := dbtest.PostgresDatabase(t, "durable_spill")
	u, err := url.Parse(direct)
	if err != nil || !strings.Contains(u.Host, ":") {
		t.Fatalf("test DSN %v has no TCP host:port to put a proxy in front of", err)
	}
	proxy := dbtest.StartProxy(t, u.Host, dbtest.ProxyOptions{})
	u.Host = proxy.Addr()
	inner, err := stores.Open(u.String())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "spool")
	var mu sync.Mutex
	var warned []string
	st := durable.Wrap(inner, durable.Options{Memory: 4 << 10, Dir: dir, Unreachable: postgres.Unreachable,
		Attempt: 2 * time.Second, Warn: func(m string) { mu.Lock(); warned = append(warned, m); mu.Unlock() }})
	defer st.Close()
	ctx := context.Background()
	id, err := st.CreateRun(ctx, storetest.Run())
	if err != nil {
		t.Fatal(err)
	}
	const before, during = 3, 40
	for k := 0; k < before; k++ {
		if err := st.AddInterval(ctx, id, storetest.Interval(k, k+1)); err != nil {
			t.Fatal(err)
		}
	}
	proxy.Cut()
	for k := before; k < before+during; k++ {
		if err := st.AddInterval(ctx, id, storetest.Interval(k, k+1)); err != nil {
			t.Fatalf("interval %d during the outage: %v", k, err)
		}
	}
	// 40 intervals are well past 4 KiB: the spool file holds some of them.
	files, _ := filepath.Glob(filepath.Join(dir, "fathom-spool-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("spool files %v, want one", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("spool file %v %v, want mode 0600", fi.Mode(), err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("spool directory %v %v, want mode 0700", fi.Mode(), err)
	}
	proxy.Restore()
	// Finishing waits for everything kept before it.
	if err := st.FinishRun(ctx, id, "complete", "", time.Now(), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	check, err := stores.Open(direct)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	ivs, err := check.Intervals(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != before+during {
		t.Fatalf("%d intervals stored, want %d", len(ivs), before+during)
	}
	for k, iv := range ivs {
		if iv.Index != k || iv.Types[0].OK != int64(k+1) {
			t.Fatalf("interval %d stored at %d with %d successes: out of order, doubled or changed", iv.Index, k, iv.Types[0].OK)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "fathom-spool-*.jsonl")); len(left) != 0 {
		t.Errorf("spool file left after everything was written: %v", left)
	}
	run, err := check.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "complete" || !strings.Contains(strings.Join(run.Warnings, "\n"), "unreachable from") {
		t.Errorf("run %s, warnings %q", run.Status, run.Warnings)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warned) != 2 {
		t.Errorf("warnings heard: %q, want the outage and the return", warned)
	}
}

// An outage during which a run had nothing to write (a coordinator waiting for its
// agents' intervals, say) is recorded with it all the same, and said to have delayed
// nothing of it; agents' intervals written late are counted in the line that says the
// store is back.
func TestOutageRecordedWithOpenRun(t *testing.T) {
	direct := dbtest.PostgresDatabase(t, "durable_open")
	u, err := url.Parse(direct)
	if err != nil || !strings.Contains(u.Host, ":") {
		t.Fatalf("test DSN %v has no TCP host:port to put a proxy in front of", err)
	}
	proxy := dbtest.StartProxy(t, u.Host, dbtest.ProxyOptions{})
	u.Host = proxy.Addr()
	inner, err := stores.Open(u.String())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var warned []string
	st := durable.Wrap(inner, durable.Options{Dir: t.TempDir(), Unreachable: postgres.Unreachable,
		Attempt: 2 * time.Second, Warn: func(m string) { mu.Lock(); warned = append(warned, m); mu.Unlock() }})
	defer st.Close()
	ctx := context.Background()
	id, err := st.CreateRun(ctx, storetest.Run())
	if err != nil {
		t.Fatal(err)
	}
	job := &store.AgentJob{Name: "open-run", Agents: 1, Spec: []byte(`{}`)}
	if err := st.CreateAgentJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	// An agent's interval kept, and no write of the run's.
	if err := st.AddAgentInterval(ctx, job.ID, 0, storetest.Interval(0, 1)); err != nil {
		t.Fatal(err)
	}
	proxy.Restore()
	if err := dbtest.Poll(time.Minute, 20*time.Millisecond, "the store's return", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(warned) == 2
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, id, "complete", "", time.Now(), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	check, err := stores.Open(direct)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	// The warning is written after the return is said: wait for it.
	var run *store.Run
	if err := dbtest.Poll(time.Minute, 20*time.Millisecond, "the run's outage warning", func() bool {
		run, err = check.Run(ctx, id)
		return err == nil && len(run.Warnings) > 0
	}); err != nil {
		t.Fatal(err)
	}
	if len(run.Warnings) != 1 || !strings.Contains(run.Warnings[0], "unreachable from") || !strings.Contains(run.Warnings[0], "nothing of this run waited") {
		t.Errorf("warnings %q", run.Warnings)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warned) != 2 || !strings.Contains(warned[1], "1 interval written late") {
		t.Errorf("warnings heard: %q, want the outage and the return with the agent's interval", warned)
	}
}

// gatedStore is a real store whose AddInterval can be made to fail as an outage does
// (down) or to hang until released (gate), so that a test can choose what happens
// while the durable store is writing.
type gatedStore struct {
	store.Store
	mu      sync.Mutex
	down    bool
	gate    chan struct{} // the next AddInterval signals entered, then waits for gate
	entered chan struct{}
	nolock  bool // Relock fails as an outage does (a PostgreSQL store's advisory lock)
}

func (g *gatedStore) Relock(context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.nolock {
		return errGatedDown
	}
	return nil
}

var errGatedDown = errors.New("the store is down (test)")

func (g *gatedStore) AddInterval(ctx context.Context, runID int64, iv *measure.Interval) error {
	g.mu.Lock()
	down, gate, entered := g.down, g.gate, g.entered
	g.gate = nil
	g.mu.Unlock()
	if down {
		return errGatedDown
	}
	if gate != nil {
		close(entered)
		<-gate
	}
	return g.Store.AddInterval(ctx, runID, iv)
}

// Writes that pass the memory bound while the store is writing the oldest waiting one
// go to the spool file behind it, not with it: the one being written stays first, is
// written once, and the rest follow in order (moving it too wrote it twice, or, with
// nothing left in memory, panicked when its write ended).
func TestSpillWhileWriting(t *testing.T) {
	inner, err := stores.Open(filepath.Join(t.TempDir(), "fathom.db"))
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedStore{Store: inner}
	st := durable.Wrap(g, durable.Options{Memory: 2 << 10, Dir: filepath.Join(t.TempDir(), "spool"),
		Unreachable: func(err error) bool { return errors.Is(err, errGatedDown) }, Attempt: time.Minute, Warn: func(string) {}})
	defer st.Close()
	ctx := context.Background()
	id, err := st.CreateRun(ctx, storetest.Run())
	if err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	g.down = true
	g.mu.Unlock()
	if err := st.AddInterval(ctx, id, storetest.Interval(0, 1)); err != nil {
		t.Fatal(err) // kept through the outage
	}
	gate, entered := make(chan struct{}), make(chan struct{})
	g.mu.Lock()
	g.down, g.gate, g.entered = false, gate, entered
	g.mu.Unlock()
	<-entered // the store answers again, and interval 0's write hangs
	const more = 40
	for k := 1; k <= more; k++ {
		if err := st.AddInterval(ctx, id, storetest.Interval(k, k+1)); err != nil {
			t.Fatalf("interval %d: %v", k, err)
		}
	}
	close(gate)
	// Finishing waits for everything kept before it; a store that lost track of the
	// interval under way never gets there (a minute is far beyond the second it takes).
	finished := make(chan error, 1)
	go func() { finished <- st.FinishRun(ctx, id, "complete", "", time.Now(), []byte(`{}`)) }()
	select {
	case err := <-finished:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("FinishRun did not return: the writes kept were never all written")
	}
	ivs, err := inner.Intervals(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != more+1 {
		t.Fatalf("%d intervals stored, want %d", len(ivs), more+1)
	}
	for k, iv := range ivs {
		if iv.Index != k || iv.Types[0].OK != int64(k+1) {
			t.Fatalf("interval %d stored at %d with %d successes: out of order, doubled or changed", iv.Index, k, iv.Types[0].OK)
		}
	}
}

// A store that answers again but cannot take its lock back is still down: past the
// bound the durable store gives up on it, and Close returns with the writes kept in the
// spool file (it waited for ever when the failed relock left the write marked as under
// way).
func TestRelockFailsPastBound(t *testing.T) {
	inner, err := stores.Open(filepath.Join(t.TempDir(), "fathom.db"))
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedStore{Store: inner}
	st := durable.Wrap(g, durable.Options{Bound: 500 * time.Millisecond, Memory: 1 << 20, Dir: filepath.Join(t.TempDir(), "spool"),
		Unreachable: func(err error) bool { return errors.Is(err, errGatedDown) }, Attempt: time.Minute, Warn: func(string) {}})
	ctx := context.Background()
	id, err := st.CreateRun(ctx, storetest.Run())
	if err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	g.down, g.nolock = true, true
	g.mu.Unlock()
	if err := st.AddInterval(ctx, id, storetest.Interval(0, 1)); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	g.down = false // answers, but the lock stays lost
	g.mu.Unlock()
	closed := make(chan error, 1)
	go func() { closed <- st.Close() }()
	select {
	case err := <-closed:
		if err == nil || !strings.Contains(err.Error(), "fathom store upload") {
			t.Errorf("Close: %v, want the outage past its bound and the upload line", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close did not return past the outage bound")
	}
}
