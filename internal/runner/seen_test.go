package runner_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sqlite "github.com/fathom-lab/fathom/internal/db/sqlite/target"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// errWorkload runs real statements on SQLite: SELECT ? succeeds; every every-th
// transaction of a client runs one that overflows an integer (the server's error), or
// returns an error of its own numbered by the transaction (distinct: every message
// differs); a client in abortAt aborts at that transaction (a workload.AbortError).
type errWorkload struct {
	every    int
	distinct bool
	abortAt  map[int]int
}

func (w *errWorkload) Name() string                                                    { return "errs" }
func (w *errWorkload) Options() map[string]string                                      { return nil }
func (w *errWorkload) TxnTypes() []string                                              { return []string{"t"} }
func (w *errWorkload) Prepare(context.Context, target.Target, workload.Progress) error { return nil }
func (w *errWorkload) Cleanup(context.Context, target.Conn) error                      { return nil }
func (w *errWorkload) Setup(context.Context, target.Conn) error                        { return nil }
func (w *errWorkload) NewWorker(id int, _ uint64) workload.Worker {
	return &errWorker{w: w, id: id}
}

type errWorker struct {
	w         *errWorkload
	id, n     int
	good, bad target.Stmt
	res       target.Result
	args      []target.Value
}

func (k *errWorker) Bind(ctx context.Context, conn target.Conn) (err error) {
	if k.good, err = conn.Prepare(ctx, "SELECT ?"); err != nil {
		return err
	}
	k.bad, err = conn.Prepare(ctx, "SELECT abs(? - 9223372036854775807 - 1)")
	k.args = []target.Value{{Kind: target.KindInt}}
	return err
}

func (k *errWorker) Next() int { return 0 }

func (k *errWorker) Do(ctx context.Context) (int, error) {
	k.n++
	if at := k.w.abortAt[k.id]; at > 0 && k.n == at {
		return 0, &workload.AbortError{Err: fmt.Errorf("client %d, a script mistake", k.id)}
	}
	if k.w.every > 0 && k.n%k.w.every == 0 {
		if k.w.distinct {
			return 1, fmt.Errorf("error number %d of client %d", k.n, k.id)
		}
		return 1, k.bad.Run(ctx, k.args, &k.res)
	}
	return 1, k.good.Run(ctx, k.args, &k.res)
}

// Place says where the worker stopped (workload.Placer).
func (k *errWorker) Place() string { return "the overflowing statement" }

func sqliteTarget(t *testing.T) target.Target {
	t.Helper()
	tg, err := sqlite.Open("sqlite:"+filepath.Join(t.TempDir(), "e.db"), target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// run runs wl on a fresh SQLite database and returns the result, the summary of its
// intervals and the errors OnError heard.
func runErrs(t *testing.T, wl workload.Workload, cfg runner.Config) (runner.Result, measure.Summary, []measure.SeenError) {
	t.Helper()
	if cfg.Interval == 0 {
		cfg.Interval = 50 * time.Millisecond
	}
	if cfg.MaxTries == 0 {
		cfg.MaxTries = 1
	}
	r, err := runner.Connect(context.Background(), sqliteTarget(t), wl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var mu sync.Mutex
	var heard []measure.SeenError
	r.OnError(func(e measure.SeenError) {
		mu.Lock()
		heard = append(heard, e)
		mu.Unlock()
	})
	var ivs []*measure.Interval
	res := r.Run(context.Background(), func(iv *measure.Interval) error {
		ivs = append(ivs, iv)
		return nil
	})
	return res, measure.Summarize(wl.TxnTypes(), ivs), heard
}

// A server error among successes: kept once with its SQLSTATE-like code, the place
// the workload names, counted as often as the intervals count it; the run is complete.
func TestFirstErrorCounted(t *testing.T) {
	res, sum, heard := runErrs(t, &errWorkload{every: 3}, runner.Config{Clients: 4, Transactions: 30})
	if res.Status != runner.StatusComplete || res.Aborted != 0 {
		t.Fatalf("status %s (%s), %d aborted", res.Status, res.Reason, res.Aborted)
	}
	if sum.Errors != 4*10 || sum.Transactions != 4*20 {
		t.Fatalf("errors %d, transactions %d; want 40 and 80", sum.Errors, sum.Transactions)
	}
	if len(res.Errors) != 1 {
		t.Fatalf("errors kept: %+v; want one", res.Errors)
	}
	e := res.Errors[0]
	if e.Class != "other" || e.Code == "" || !strings.Contains(e.Message, "integer overflow") || e.Where != "the overflowing statement" ||
		e.Txn != "t" || e.Count != sum.Errors || e.Warmup != 0 || e.Aborted || res.ErrorsUnlisted != 0 {
		t.Errorf("kept %+v (unlisted %d); want the overflow, counted %d times", e, res.ErrorsUnlisted, sum.Errors)
	}
	if len(heard) != 1 || !heard[0].Same(&e) || heard[0].Count != 0 {
		t.Errorf("heard %+v; want the overflow once, as first met", heard)
	}
}

// More distinct errors than are kept: the first measure.KeptErrors are kept, the rest
// counted apart, and every error is counted once.
func TestDistinctErrorsBounded(t *testing.T) {
	res, sum, heard := runErrs(t, &errWorkload{every: 2, distinct: true}, runner.Config{Clients: 2, Transactions: 20})
	if len(res.Errors) != measure.KeptErrors || len(heard) != measure.KeptErrors {
		t.Fatalf("kept %d, heard %d; want %d", len(res.Errors), len(heard), measure.KeptErrors)
	}
	n := res.ErrorsUnlisted
	for _, e := range res.Errors {
		if e.Count != 1 || !strings.HasPrefix(e.Message, "error number ") {
			t.Errorf("kept %+v; want a distinct error met once", e)
		}
		n += e.Count
	}
	if n != sum.Errors || sum.Errors != 20 {
		t.Errorf("kept and unlisted count %d errors, the intervals %d (want 20)", n, sum.Errors)
	}
}

// A workload's mistake aborts only its client, as pgbench aborts a client: the others
// run their transactions to the end, what was measured is kept, and the run is failed
// with how many clients aborted and the first one's error.
func TestAbortOneClientOthersGoOn(t *testing.T) {
	res, sum, _ := runErrs(t, &errWorkload{abortAt: map[int]int{1: 3}}, runner.Config{Clients: 3, Transactions: 200})
	if res.Status != runner.StatusFailed || !res.ByErrors || res.Aborted != 1 {
		t.Fatalf("status %s, by errors %v, %d aborted; want failed by errors, 1 aborted", res.Status, res.ByErrors, res.Aborted)
	}
	if !strings.Contains(res.Reason, "clients aborted: 1 of 3") || !strings.Contains(res.Reason, "client 1, a script mistake") {
		t.Errorf("reason %q", res.Reason)
	}
	if sum.Transactions != 2*200+2 || sum.Failed != 1 {
		t.Errorf("%d transactions, %d failed; want 402 (two clients' 200 and the aborted one's 2) and 1", sum.Transactions, sum.Failed)
	}
	if len(res.Errors) != 1 || !res.Errors[0].Aborted || res.Errors[0].Client != 1 {
		t.Errorf("errors %+v; want the abort, marked", res.Errors)
	}
}

// When every client has aborted, the run ends at once rather than at its time.
func TestAllAbortedEndsAtOnce(t *testing.T) {
	res, sum, _ := runErrs(t, &errWorkload{abortAt: map[int]int{0: 2, 1: 4}}, runner.Config{Clients: 2, Duration: 10 * time.Minute})
	if res.Status != runner.StatusFailed || res.Aborted != 2 || !strings.Contains(res.Reason, "clients aborted: 2 of 2") {
		t.Fatalf("status %s (%s), %d aborted", res.Status, res.Reason, res.Aborted)
	}
	if d := res.End.Sub(res.Start); d > 5*time.Minute {
		t.Errorf("the run went on for %s after every client aborted", d)
	}
	if sum.Transactions != 1+3 || sum.Failed != 2 {
		t.Errorf("%d transactions, %d failed; want 4 and 2", sum.Transactions, sum.Failed)
	}
}
