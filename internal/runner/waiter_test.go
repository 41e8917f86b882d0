package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/workload"
)

// waiting gives every worker a user who waits before each transaction (workload.Waiter).
type waiting struct {
	workload.Workload
	wait time.Duration
}

type waitingWorker struct {
	workload.Worker
	wait  time.Duration
	waits int
}

func (w *waiting) NewWorker(id int, seed uint64) workload.Worker {
	return &waitingWorker{Worker: w.Workload.NewWorker(id, seed), wait: w.wait}
}

func (w *waitingWorker) Wait() time.Duration { w.waits++; return w.wait }

// A worker's wait (TPC-C's keying and think times) comes before each transaction and
// is not part of its latency: a client that waits 600 ms before each of 4 quick
// transactions takes at least 2.4 s, and none of them is counted as taking 600 ms.
func TestWaiterWaitsOutsideLatency(t *testing.T) {
	const wait = 600 * time.Millisecond
	tg := pgTarget(t, dbtest.PostgresDatabase(t, "runner"))
	wl := &waiting{Workload: tpcbSelect(t, tg), wait: wait}
	ctx := context.Background()
	r, err := runner.Connect(ctx, tg, wl, runner.Config{Clients: 1, Transactions: 4, Interval: time.Second, MaxTries: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tot := measure.NewTotals(wl.TxnTypes())
	start := time.Now()
	res := r.Run(ctx, func(iv *measure.Interval) error { tot.Add(iv); return nil })
	took := time.Since(start)
	if res.Status != runner.StatusComplete {
		t.Fatalf("run %s: %s", res.Status, res.Reason)
	}
	s := tot.Summary()
	if s.Transactions != 4 {
		t.Fatalf("%d transactions, want 4", s.Transactions)
	}
	if took < 4*wait {
		t.Errorf("4 transactions after waits of %s took %s", wait, took)
	}
	if maxMs := s.Latency.Max; maxMs >= float64(wait/time.Millisecond) {
		t.Errorf("a transaction took %.1f ms: the wait before it was counted", maxMs)
	}
}
