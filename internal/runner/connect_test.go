package runner_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/target"
)

// countingTarget counts connections and fails every failEvery-th one (0: none) as a
// refused connection.
type countingTarget struct {
	target.Target
	n         atomic.Int64
	failEvery int64
}

func (c *countingTarget) Connect(ctx context.Context) (target.Conn, error) {
	if n := c.n.Add(1); c.failEvery > 0 && n%c.failEvery == 0 {
		return nil, target.Errorf(target.ClassConnection, "", "refused by the test")
	}
	return c.Target.Connect(ctx)
}

// txnCounter is a runner.TxnLog counting per client (each client writes its own slot).
type txnCounter struct{ ok, failed [4]int64 }

func (l *txnCounter) Txn(client, typ int, intended, start, end time.Time, retries int64, failed bool, class target.Class) {
	if failed {
		l.failed[client]++
	} else {
		l.ok[client]++
	}
}
func (l *txnCounter) Skipped(client, typ int, n int64, now time.Time) {}

// -C: every transaction gets its own connection; one that cannot connect is one failed
// transaction (counted towards -t, not run again), and every transaction reaches the
// TxnLog once.
func TestConnectPerTransaction(t *testing.T) {
	base := pgTarget(t, dbtest.PostgresDatabase(t, "runner"))
	wl := tpcbSelect(t, base)
	for _, failEvery := range []int64{0, 7} {
		tg := &countingTarget{Target: base, failEvery: failEvery}
		ctx := context.Background()
		r, err := runner.Connect(ctx, tg, wl, runner.Config{Clients: 2, Transactions: 30, Interval: time.Second, MaxTries: 1, ConnectPerTxn: true})
		if err != nil {
			t.Fatal(err)
		}
		log := &txnCounter{}
		r.SetTxnLog(log)
		tot := measure.NewTotals(wl.TxnTypes())
		res := r.Run(ctx, func(iv *measure.Interval) error { tot.Add(iv); return nil })
		r.Close()
		s := tot.Summary()
		if res.Status != runner.StatusComplete {
			t.Fatalf("fail every %d: %s %s", failEvery, res.Status, res.Reason)
		}
		if s.Transactions+s.Failed != 60 {
			t.Errorf("fail every %d: %d ok + %d failed, want 60 in all (-t 30, 2 clients)", failEvery, s.Transactions, s.Failed)
		}
		if log.ok[0]+log.ok[1] != s.Transactions || log.failed[0]+log.failed[1] != s.Failed {
			t.Errorf("fail every %d: the log heard %v ok, %v failed; the intervals hold %d, %d", failEvery, log.ok, log.failed, s.Transactions, s.Failed)
		}
		if failEvery == 0 && (s.Failed != 0 || tg.n.Load() != 2+60) {
			t.Errorf("%d connections for 60 transactions on 2 clients (want 2 + 60), %d failed", tg.n.Load(), s.Failed)
		}
		if failEvery > 0 && s.Failed == 0 {
			t.Errorf("every %dth connection refused, no transaction failed", failEvery)
		}
	}
}
