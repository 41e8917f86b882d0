package txlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

func read(t *testing.T, l *Log) []string {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

var t0 = time.Unix(1_700_000_000, 0)

// The per-transaction fields, as PostgreSQL documents them: client_id transaction_no
// time script_no time_epoch time_us [schedule_lag] [retries].
func TestPerTransaction(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Options{Prefix: filepath.Join(dir, "x"), PID: 42, Clients: 2, Lag: true, Retries: true}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if l.Path() != filepath.Join(dir, "x.42") {
		t.Errorf("path %s", l.Path())
	}
	in := t0.Add(time.Second)
	l.Txn(1, 0, in, in.Add(300*time.Microsecond), in.Add(2300*time.Microsecond+500), 2, false, 0)
	l.Skipped(1, 0, 2, in.Add(3*time.Millisecond))
	l.Txn(1, 0, in, in, in.Add(5*time.Millisecond), 0, true, target.ClassDeadlock)
	got := read(t, l)
	want := []string{
		"1 1 2300 0 1700000001 2300 300 2",
		"1 2 skipped 0 1700000001 3000 0 0",
		"1 2 skipped 0 1700000001 3000 0 0",
		"1 2 failed 0 1700000001 5000 0 0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The aggregated fields (PostgreSQL 15 to 18): interval_start num_transactions
// sum_latency sum_latency_2 min_latency max_latency sum_lag sum_lag_2 min_lag max_lag
// skipped retried retries serialization_failures deadlock_failures; empty intervals
// between are written too.
func TestAggregated(t *testing.T) {
	l, err := Open(Options{Prefix: filepath.Join(t.TempDir(), "x"), PID: 1, Clients: 2, Aggregate: time.Second}, t0)
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	l.Txn(0, 0, t0, t0.Add(ms), t0.Add(3*ms), 0, false, 0)                // latency 3ms, lag 1ms
	l.Txn(1, 0, t0, t0.Add(2*ms), t0.Add(7*ms), 1, false, 0)              // 7ms, 2ms, retried once
	l.Txn(1, 0, t0, t0, t0.Add(9*ms), 0, true, target.ClassSerialization) // failed
	l.Skipped(0, 0, 3, t0.Add(10*ms))
	at := t0.Add(2*time.Second + 5*ms)
	l.Txn(0, 0, time.Time{}, at, at.Add(4*ms), 0, false, 0)
	got := read(t, l)
	want := []string{
		"1700000000 2 10000 58000000 3000 7000 3000 5000000 1000 2000 3 1 1 1 0",
		"1700000001 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
		"1700000002 1 4000 16000000 4000 4000 0 0 0 0 0 0 0 0 0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestOptionsCheck(t *testing.T) {
	for _, o := range []Options{{Aggregate: 1500 * time.Millisecond}, {Aggregate: time.Second, SamplingRate: 0.5}} {
		if o.Check() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// Logging a transaction allocates nothing.
func TestNoAllocation(t *testing.T) {
	l, err := Open(Options{Prefix: filepath.Join(t.TempDir(), "x"), PID: 1, Clients: 1}, t0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if n := testing.AllocsPerRun(1000, func() { l.Txn(0, 0, time.Time{}, t0, t0.Add(time.Millisecond), 0, false, 0) }); n != 0 {
		t.Errorf("%v allocations per transaction", n)
	}
}
