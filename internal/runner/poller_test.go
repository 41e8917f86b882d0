package runner

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db/postgres/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/procset"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/sock"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
)

// Above pollerClients (on a run that is not multiplexed), the clients' connections stay with Go's network poller (none
// is a blocking socket), GOMAXPROCS is left alone, the run measures as usual, and
// the run's tuning says so.
func TestPollerAboveThreshold(t *testing.T) {
	defer func(n, m int) { pollerClients, muxClients = n, m }(pollerClients, muxClients)
	pollerClients = 3
	muxClients = 1000 // tpcb-select would be multiplexed
	tg, wl := preparedTpcbSelect(t)
	ctx := context.Background()
	procs := runtime.GOMAXPROCS(0)
	blocking := sock.Conns()
	tuner := procset.Tuner{Process: &procset.Process{}} // as the CLI gives: the poller asks it for no Ps
	r, err := Connect(ctx, tg, wl, Config{Clients: 4, Duration: time.Second, Interval: 250 * time.Millisecond, MaxTries: 1, Seed: 1, Tuner: tuner})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := sock.Conns(); got != blocking {
		t.Errorf("%d blocking connections opened for 4 clients above the threshold", got-blocking)
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d, was %d", got, procs)
	}
	if tu := r.Tuning(); !strings.Contains(tu, "poller") {
		t.Errorf("tuning %q does not name the poller", tu)
	}
	tot := measure.NewTotals(wl.TxnTypes())
	res := r.Run(ctx, func(iv *measure.Interval) error { tot.Add(iv); return nil })
	if s := tot.Summary(); res.Status != StatusComplete || s.Transactions == 0 || s.Errors != 0 {
		t.Fatalf("run %s (%s): %d transactions, %d errors", res.Status, res.Reason, s.Transactions, s.Errors)
	}
}

// talky is a workload whose transactions are many round trips (workload.Conversational).
type talky struct{ workload.Workload }

func (talky) Conversational() bool { return true }

// A conversational workload's clients stay with Go's network poller at any count: no
// blocking socket, GOMAXPROCS left alone, and the run's tuning says why.
func TestPollerForConversational(t *testing.T) {
	defer func(m int) { muxClients = m }(muxClients)
	muxClients = 1000 // tpcb-select would be multiplexed (tpcc is not: many statements)
	tg, inner := preparedTpcbSelect(t)
	ctx := context.Background()
	procs := runtime.GOMAXPROCS(0)
	blocking := sock.Conns()
	tuner := procset.Tuner{Process: &procset.Process{}}
	r, err := Connect(ctx, tg, talky{inner}, Config{Clients: 2, Duration: time.Second, Interval: 250 * time.Millisecond, MaxTries: 1, Seed: 1, Tuner: tuner})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := sock.Conns(); got != blocking {
		t.Errorf("%d blocking connections opened for 2 clients of a conversational workload", got-blocking)
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d, was %d", got, procs)
	}
	if tu := r.Tuning(); !strings.Contains(tu, "many round trips") {
		t.Errorf("tuning %q does not say why the poller", tu)
	}
	tot := measure.NewTotals(inner.TxnTypes())
	res := r.Run(ctx, func(iv *measure.Interval) error { tot.Add(iv); return nil })
	if s := tot.Summary(); res.Status != StatusComplete || s.Transactions == 0 || s.Errors != 0 {
		t.Fatalf("run %s (%s): %d transactions, %d errors", res.Status, res.Reason, s.Transactions, s.Errors)
	}
}

// preparedTpcbSelect opens the test PostgreSQL database and returns tpcb-select at
// scale 1 on it, prepared and set up.
func preparedTpcbSelect(t *testing.T) (target.Target, workload.Workload) {
	t.Helper()
	tg, err := postgres.Open(dbtest.PostgresDatabase(t, "runner"), target.Config{ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := builtin.Lookup("tpcb-select")
	wl, err := spec.New(workload.Params{"scale": "1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One err throughout: the second Setup's error, and a first one other than
	// ErrNotPrepared, must reach the check below (a shadowed err dropped both).
	err = wl.Setup(ctx, conn)
	if errors.Is(err, workload.ErrNotPrepared) {
		if err := wl.Prepare(ctx, tg, func(string, int64, int64) {}); err != nil {
			t.Fatal(err)
		}
		err = wl.Setup(ctx, conn)
	}
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	return tg, wl
}
