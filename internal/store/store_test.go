package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
)

func testRun() *Run {
	return &Run{
		ToolVersion: "v0.test", Command: "fathom run -c 2", Workload: "tpcb",
		Options: map[string]string{"scale": "3"}, Seed: 1<<63 + 5, TargetKind: "postgres", Target: "postgres://u:xxxxx@h/d",
		ServerVersion: "15.20", Settings: map[string]string{"shared_buffers": "128MB"},
		Host:    Host{Hostname: "h", OS: "linux/amd64", CPUs: 2, MemoryBytes: 1 << 34, GoVersion: "go1.26"},
		Labels:  map[string]string{"variant": "on", "rep": "1"},
		Clients: 2, Duration: 10 * time.Second, Interval: time.Second, TxnTypes: []string{"a", "b"},
		StartedAt: time.Unix(1700000000, 123).UTC(),
	}
}

func testInterval(idx int, n int) *measure.Interval {
	rec := measure.NewRecorder(2)
	for i := 1; i <= n; i++ {
		rec.Success(0, int64(i)*1000_000, int64(i)*900_000)
	}
	rec.Failure(1, 3_000_000)
	rec.Counts[1].Errors[target.ClassSerialization] = 2
	rec.Counts[1].Retries = 1
	rec.Reconnects = 1
	iv := measure.NewInterval(idx, []string{"a", "b"})
	iv.Start, iv.End = time.Duration(idx)*time.Second, time.Duration(idx+1)*time.Second
	iv.Warmup = idx == 0
	iv.AddRecorder(rec)
	return iv
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "sub", "fathom.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := testRun()
	id, err := s.CreateRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s.AddInterval(ctx, id, testInterval(i, 100*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	sum := json.RawMessage(`{"tps":1}`)
	end := time.Unix(1700000011, 0).UTC()
	if err := s.FinishRun(ctx, id, "complete", "", end, sum); err != nil {
		t.Fatal(err)
	}
	got, err := s.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.UUID == "" || got.Seed != r.Seed || got.Options["scale"] != "3" || got.Settings["shared_buffers"] != "128MB" ||
		got.Host != r.Host || got.Labels["variant"] != "on" || len(got.Labels) != 2 || !got.StartedAt.Equal(r.StartedAt) ||
		!got.EndedAt.Equal(end) || got.Status != "complete" || string(got.Summary) != `{"tps":1}` || got.Interval != time.Second ||
		strings.Join(got.TxnTypes, ",") != "a,b" {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, r)
	}
	ivs, err := s.Intervals(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 3 {
		t.Fatalf("%d intervals", len(ivs))
	}
	for i, iv := range ivs {
		want := testInterval(i, 100*(i+1))
		a, w := iv.Types[0], want.Types[0]
		if a.OK != w.OK || a.Latency.ValueAtQuantile(99) != w.Latency.ValueAtQuantile(99) || a.Service.TotalCount() != w.Service.TotalCount() {
			t.Fatalf("interval %d type a differs: ok %d/%d", i, a.OK, w.OK)
		}
		b := iv.Types[1]
		if b.Failed != 1 || b.Errors[target.ClassSerialization] != 2 || b.Retries != 1 || b.FailedLatency.TotalCount() != 1 {
			t.Fatalf("interval %d type b: %+v", i, b.Counts)
		}
		if iv.Warmup != (i == 0) || iv.Reconnects != 1 || iv.End-iv.Start != time.Second {
			t.Fatalf("interval %d header: %+v", i, iv)
		}
	}
	if _, err := s.Run(ctx, 999); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "run 999") {
		t.Fatalf("missing run: %v", err)
	}
	if latest, err := s.LatestRunID(ctx); err != nil || latest != id {
		t.Fatalf("latest = %d, %v", latest, err)
	}
}

func TestFiltersAndReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "f.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.LatestRunID(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty store: %v", err)
	}
	for i := 0; i < 5; i++ {
		r := testRun()
		r.Labels = map[string]string{"variant": []string{"on", "off"}[i%2]}
		if i == 4 {
			r.Workload = "oltp_read_write"
		}
		if _, err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, err = Open(path) // migrations are idempotent
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := func(f RunFilter, want ...int64) {
		t.Helper()
		rs, err := s.Runs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		if len(ids) != len(want) {
			t.Fatalf("filter %+v: ids %v, want %v", f, ids, want)
		}
		for i := range ids {
			if ids[i] != want[i] {
				t.Fatalf("filter %+v: ids %v, want %v", f, ids, want)
			}
		}
	}
	check(RunFilter{}, 5, 4, 3, 2, 1)
	check(RunFilter{Limit: 2}, 5, 4)
	check(RunFilter{Labels: map[string]string{"variant": "on"}}, 5, 3, 1)
	check(RunFilter{Workload: "oltp_read_write"}, 5)
	check(RunFilter{Status: "running", Labels: map[string]string{"variant": "off"}}, 4, 2)
}

func TestRefusesNewerSchemaAndNonStores(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO schema_version (version, name) VALUES (999, 'future')`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "newer fathom") {
		t.Fatalf("newer schema: %v", err)
	}
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("this is not sqlite ", 300)), 0o644)
	_, err = Open(junk)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("not a database: %v", err)
	}
}

// Two handles on one file (as two fathom processes) write concurrently without
// "database is locked".
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(path)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			id, err := s.CreateRun(ctx, testRun())
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < 50; i++ {
				if err := s.AddInterval(ctx, id, testInterval(i, 10)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A process killed with SIGKILL keeps every interval whose AddInterval returned.
func TestKilledWriterLosesNothingCommitted(t *testing.T) {
	if p := os.Getenv("FATHOM_STORE_CHILD"); p != "" {
		ctx := context.Background()
		s, err := Open(p)
		if err != nil {
			os.Exit(3)
		}
		id, _ := s.CreateRun(ctx, testRun())
		for i := 0; i < 3; i++ {
			if err := s.AddInterval(ctx, id, testInterval(i, 50)); err != nil {
				os.Exit(4)
			}
		}
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "k.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterLosesNothingCommitted$")
	cmd.Env = append(os.Environ(), "FATHOM_STORE_CHILD="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if !strings.Contains(string(buf[:n]), "ready") {
		cmd.Process.Kill()
		t.Fatalf("child did not get ready: %q", buf[:n])
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ivs, err := s.Intervals(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	run, _ := s.Run(context.Background(), 1)
	if len(ivs) != 3 || ivs[2].Types[0].Latency.TotalCount() != 50 || run.Status != "running" {
		t.Fatalf("after SIGKILL: %d intervals, status %s", len(ivs), run.Status)
	}
}

func FuzzDecodeStoredBlob(f *testing.F) {
	b, _ := measure.Encode(testInterval(0, 100).Types[0].Latency)
	f.Add(b)
	f.Add(measure.EncodeV2(testInterval(0, 100).Types[0].Latency))
	f.Add([]byte{})
	f.Add([]byte("HISTFAAAA"))
	f.Fuzz(func(t *testing.T, blob []byte) {
		h, err := measure.Decode(blob)
		if err == nil && h == nil {
			t.Fatal("nil histogram without error")
		}
	})
}

func BenchmarkAddInterval(b *testing.B) {
	ctx := context.Background()
	s, err := Open(filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id, _ := s.CreateRun(ctx, testRun())
	iv := testInterval(0, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		iv.Index = i
		if err := s.AddInterval(ctx, id, iv); err != nil {
			b.Fatal(err)
		}
	}
}
