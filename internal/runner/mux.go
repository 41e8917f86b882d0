package runner

import (
	"fmt"
	"runtime"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// The multiplexed path: with more than muxClients clients of a closed-loop run whose
// every transaction is one prepared statement (workload.Single, target.Exchanger),
// the clients are not goroutines each blocked in a read. muxThreads worker threads
// each own a share of the connections and one epoll set, and run every client as a
// small state machine: write the request, read the reply as it arrives, record the
// transaction as the goroutine path does (Runner.finish, on the run's clock), draw
// the next one. One wake-up serves every connection that is ready, as pgbench -j
// does with its threads, instead of one thread sleeping and waking per reply.
//
// A transaction of several statements can run this way too when its worker steps it
// (workload.Stepper: a sysbench script's event() as a Lua coroutine, suspended at each
// statement it sends): the state machine then sends each statement the worker returns
// and hands it the reply, and records the transaction when the worker says it ended,
// with the goroutine path's verdicts on errors, retries and restarts (Runner.settle).
//
// What cannot run this way keeps the goroutine path: open loop (a rate), -C, other
// workloads of several statements or explicit transactions, a target without
// Exchanger (SQLite; PostgreSQL and MySQL in simple query mode, any of them over TLS;
// Redis workloads other than redis-bench and redis-kv, whose batches are),
// systems other than Linux. A client whose
// connection is lost during the run leaves its thread, reconnects and goes on with a
// goroutine of its own (Runner.client).

// muxClients: with more clients than this, a run that can be multiplexed is; a
// variable for tests and measurements.
var muxClients = 1

// muxThreads is how many worker threads multiplex the clients: one per CPU, at
// most one per client.
func muxThreads(clients int) int { return max(1, min(runtime.NumCPU(), clients)) }

// muxable reports whether the run's clients could be multiplexed, before connecting:
// the config and the workload's shape. Whether each statement is an Exchanger with a
// socket is known only once bound (muxReady).
func (r *Runner) muxable() bool {
	x, ok := r.tgt.(target.Exchanging)
	if !muxSupported || !ok || !x.Exchanges() || r.cfg.ConnectPerTxn || len(r.clients) <= muxClients {
		return false
	}
	for _, c := range r.clients {
		if c.rate > 0 || (!single(c) && !stepped(c)) {
			return false
		}
	}
	return true
}

// single reports whether the client's every transaction is one statement
// (workload.Single).
func single(c *client) bool {
	s, ok := c.worker.(workload.Single)
	return ok && s.Single()
}

// stepped reports whether the client's transactions can be run a statement at a time
// (workload.Stepper), when they are not single statements.
func stepped(c *client) bool {
	s, ok := c.worker.(workload.Stepper)
	return ok && s.Stepped()
}

// muxReady reports whether every bound client's statement can be driven on its
// socket.
func (r *Runner) muxReady() bool {
	for _, c := range r.clients {
		if _, _, ok := muxState(c); !ok {
			return false
		}
	}
	return true
}

// muxState returns the client's drawn statement as an Exchanger, its arguments and
// whether its connection's socket can be used directly.
//
// A stepped client (workload.Stepper) has no statement before its transaction
// starts: ex is nil and fd is its connection's.
func muxState(c *client) (target.Exchanger, int, bool) {
	if !single(c) {
		if !stepped(c) {
			return nil, -1, false
		}
		fd, ok := c.worker.(workload.Stepper).Socket()
		return nil, fd, ok
	}
	st, _ := c.worker.(workload.Single).Statement()
	ex, ok := st.(target.Exchanger)
	if !ok {
		return nil, -1, false
	}
	fd, ok := ex.Socket()
	return ex, fd, ok
}

// muxTuning names the multiplexed path for the run's provenance.
func (r *Runner) muxTuning() string {
	w := muxThreads(len(r.clients))
	how := ""
	if len(r.clients) > 0 && !single(r.clients[0]) {
		how = ", transactions stepped a statement at a time"
	}
	return fmt.Sprintf("epoll, %d threads multiplexing %d clients (more than %d)%s", w, len(r.clients), muxClients, how)
}

// muxConn is one client's state on the multiplexed path.
type muxConn struct {
	c     *client
	step  workload.Stepper // the client's worker when its transactions are stepped, else nil
	fd    int
	ex    target.Exchanger
	batch target.Batched // ex as a Batched, if it is one: asked when ex changes
	args  []target.Value
	out   []byte // the request, out[sent:] still to write
	sent  int
	in    []byte // reply bytes received and not yet parsed
	typ   int
	start time.Time
	stmts int64 // statements sent for the current transaction (per try: one, or the batch's)
	tries int
	retry int64
}
