// Package workload defines what a benchmark does: its tables and data (Prepare,
// Cleanup) and its transactions (Worker). Built-in workloads live in subpackages and
// are registered in the builtin package.
package workload

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
)

// Workload is a configured workload: options resolved, ready to prepare or run.
type Workload interface {
	Name() string
	// Options returns every option with its effective value, for provenance.
	Options() map[string]string
	// TxnTypes names the transaction types a Worker can draw, by index.
	TxnTypes() []string
	// Prepare creates the tables and loads the data. It may open several connections.
	Prepare(ctx context.Context, t target.Target, p Progress) error
	// Cleanup drops the workload's tables.
	Cleanup(ctx context.Context, conn target.Conn) error
	// Setup runs once before a run: it checks that the tables exist (returning an
	// error wrapping ErrNotPrepared if not) and detects sizes not given as options.
	Setup(ctx context.Context, conn target.Conn) error
	// NewWorker returns the per-client state for client id, seeded deterministically.
	NewWorker(id int, seed uint64) Worker
}

// Worker runs transactions for one client. It is used by one goroutine only and must
// not allocate, lock or print per transaction on its hot path.
type Worker interface {
	// Bind prepares the worker's statements on conn; it is called again after a
	// reconnect.
	Bind(ctx context.Context, conn target.Conn) error
	// Next draws the next transaction and its random values and returns its type.
	Next() int
	// Do executes the drawn transaction and returns how many statements it sent. On a
	// retryable error the runner rolls back and calls Do again with the same values.
	Do(ctx context.Context) (statements int, err error)
}

// Progress receives loading progress: rows done of total (total may be 0 if unknown).
type Progress func(table string, done, total int64)

// ErrNotPrepared is wrapped by Setup when the workload's tables are missing.
var ErrNotPrepared = errors.New("tables missing")

// ErrMismatch is wrapped by Setup when an option given (--tables, --table-size,
// --scale) disagrees with the prepared data: a usage mistake, not a failure.
var ErrMismatch = errors.New("options disagree with the prepared data")

// ErrWorkerDone is returned by Worker.Do when the client has no more work: a sysbench
// script's event() returned a true value, which ends that thread under sysbench. The
// attempt is not counted; the client stops, the others go on, and the run ends when
// no client is left.
var ErrWorkerDone = errors.New("the workload ended this client")

// Reporter is implemented by workloads that report a run's figures themselves as it
// goes (a sysbench script's report_intermediate and report_cumulative hooks, which
// print through the workload's Printer output): the run passes each interval after
// storing it, and calls ReportEnd once after the last. An error is shown as a warning
// and the run goes on.
type Reporter interface {
	ReportInterval(iv *measure.Interval) error
	ReportEnd() error
}

// RestartError is returned by Worker.Do for an error on which the workload itself
// runs the transaction again, whatever --max-tries says: sysbench restarts an event
// on the errors its drivers ignore (deadlocks, lock wait timeouts, serialization
// failures, PostgreSQL's unique violations) until it succeeds. The error is counted by
// its class and the attempt as a retry, as for any retry.
type RestartError struct{ Err error }

func (e *RestartError) Error() string { return e.Err.Error() }
func (e *RestartError) Unwrap() error { return e.Err }

// Retyper is implemented by workers whose transaction's type is known only once it
// ran: a sysbench script's event that counted an error itself (the community TPC-C
// scripts count New-Order's 1% rollback so) is measured apart from the others.
// Retype is asked after each successful Do with the type Next drew, and returns the
// type to record it under.
type Retyper interface {
	Retype(drawn int) int
}

// Params are workload options given by the user (--scale, --tables, --set k=v …).
type Params map[string]string

// Option describes one workload option.
type Option struct {
	Name    string
	Default string
	Help    string
}

// Spec describes a workload that can be configured.
type Spec struct {
	Name        string
	Description string
	Options     []Option
	New         func(p Params) (Workload, error)
}

// Resolve checks p against the spec's options and returns all options with defaults
// filled in. Unknown option names are an error naming the valid ones.
func (s *Spec) Resolve(p Params) (map[string]string, error) {
	known := map[string]bool{}
	out := map[string]string{}
	for _, o := range s.Options {
		known[o.Name] = true
		out[o.Name] = o.Default
	}
	var bad []string
	for k, v := range p {
		if !known[k] {
			bad = append(bad, k)
			continue
		}
		out[k] = v
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		var names []string
		for _, o := range s.Options {
			names = append(names, o.Name)
		}
		return nil, fmt.Errorf("workload %s has no option %s (options: %s)", s.Name, strings.Join(bad, ", "), strings.Join(names, ", "))
	}
	return out, nil
}

// Int reads an integer option in [min, max].
func Int(opts map[string]string, name string, min, max int64) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(opts[name]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("option %s: %q is not a whole number", name, opts[name])
	}
	if v < min || v > max {
		return 0, fmt.Errorf("option %s: %d is out of range (%d to %d)", name, v, min, max)
	}
	return v, nil
}

// Bool reads an on/off option.
func Bool(opts map[string]string, name string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(opts[name])) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0", "":
		return false, nil
	}
	return false, fmt.Errorf("option %s: %q is not on or off", name, opts[name])
}

// Group is one kind of client in a workload with client groups (e.g. 36 writers and
// 36 readers). Zero Rate means closed loop; zero Transactions means run for the run's
// duration.
type Group struct {
	Name         string
	Clients      int
	Rate         float64 // total intended transactions per second of the group
	Transactions int64   // per client
}

// Grouped is implemented by workloads whose clients come in groups. The runner starts
// each group's clients with NewGroupWorker instead of NewWorker; transaction types
// stay global (TxnTypes), so name them per group (e.g. "writers/insert").
type Grouped interface {
	Groups() []Group
	NewGroupWorker(group, id int, seed uint64) Worker
}

// PreRunner is implemented by workloads that tidy their tables before each run, as
// pgbench does before running any script (see PgbenchVacuum). PreRun returns what it
// did, in words for the run's provenance; d is the target's dialect; all is pgbench's
// -v (pgbench_accounts too).
type PreRunner interface {
	PreRun(ctx context.Context, conn target.Conn, d *target.Dialect, all bool) (string, error)
}

// Layout is how prepare makes a workload's tables, with the options pgbench -i and
// sysbench prepare take. The zero Layout is both tools' default.
type Layout struct {
	FillFactor      int    // pgbench -F: 10 to 100 (0: the server's default, 100)
	Unlogged        bool   // pgbench --unlogged-tables
	Partitions      int    // pgbench --partitions: pgbench_accounts in this many parts
	PartitionMethod string // range (default) or hash
	ForeignKeys     bool   // pgbench --foreign-keys
	AutoInc         *bool  // sysbench --auto-inc (nil: on)
	Secondary       bool   // sysbench --secondary: id has a secondary index, no primary key
	CreateSecondary *bool  // sysbench --create-secondary (nil: on): the index on k
	Engine          string // sysbench --mysql-storage-engine (MySQL only)
}

// IsZero reports whether l asks for nothing but the defaults.
func (l Layout) IsZero() bool {
	return l.FillFactor == 0 && !l.Unlogged && l.Partitions == 0 && l.PartitionMethod == "" && !l.ForeignKeys &&
		l.AutoInc == nil && !l.Secondary && l.CreateSecondary == nil && l.Engine == ""
}

// Layouter is implemented by workloads whose tables prepare can lay out. SetLayout
// refuses, with the fix, what the workload or the target's dialect cannot do.
type Layouter interface {
	SetLayout(l Layout, d *target.Dialect) error
}

// AbortError is returned by Worker.Do for a mistake in the workload itself found while
// running (a script's undefined variable, a value out of range): the run fails with
// it instead of counting it as an error of the server, as pgbench aborts the client.
type AbortError struct{ Err error }

func (e *AbortError) Error() string { return e.Err.Error() }
func (e *AbortError) Unwrap() error { return e.Err }

// ScriptError places an error in a workload's script: the client that ran it, the
// script, and the command's line and text as written. The error it wraps keeps its
// own type (a server's *target.Error keeps its SQLSTATE and class).
type ScriptError struct {
	Client  int
	Script  string
	Line    int
	Command string
	Err     error
}

func (e *ScriptError) Error() string {
	return fmt.Sprintf("client %d script %s line %d (%s): %v", e.Client, e.Script, e.Line, e.Command, e.Err)
}
func (e *ScriptError) Unwrap() error { return e.Err }

// Placer is implemented by workers that can say where their last Do stopped: a
// script's file, line and command, or a statement. The runner asks only after a
// failed Do whose error the run has not listed yet (measure.SeenError.Where), so it
// may allocate; "" when it does not know.
type Placer interface {
	Place() string
}

// CommandTimer is implemented by workloads that time each command of their
// transactions (pgbench's -r). Their workers implement CommandRecorder: the runner
// has them record each attempt's command times into the recorder of the interval the
// attempt ended in, so that the times are cut into intervals like the transactions'
// and the warm-up is left out at analysis time.
type CommandTimer interface {
	// Commands names the timed commands by their index in Interval.Commands (Count
	// and Latency left empty).
	Commands() []measure.StatementLatency
}

// Thresholder is implemented by workloads that carry pass/fail bars of their own (a
// workload file's thresholds:): a run checks them as it checks --threshold.
type Thresholder interface {
	Thresholds() []measure.Threshold
}

// CommandRecorder is a worker of a CommandTimer.
type CommandRecorder interface {
	// FlushCommands records the times of the commands the last Do completed into rec
	// and forgets them.
	FlushCommands(rec *measure.Recorder)
}

// Single is implemented by workers whose every transaction is one prepared statement
// outside an explicit transaction, whose result only needs to arrive: a runner may
// then run it as a request and a reply on the connection's socket, many connections
// to a thread (see target.Exchanger), instead of calling Do.
type Single interface {
	// Single reports whether the transactions are of that shape for this worker's
	// options (asked once, after Bind).
	Single() bool
	// Statement returns the drawn transaction's statement and arguments (after Next;
	// valid until the next Next or Bind).
	Statement() (target.Stmt, []target.Value)
}

// Stepper is implemented by workers whose transaction is script code that waits for
// the server only in statements a runner can exchange on the connection's socket
// itself (target.Exchanger): a sysbench script's event(). A runner that drives many
// connections from one thread (see Single) then runs the transaction a statement at a
// time: Start runs the code up to its first statement and returns it, the runner
// sends it and reads the reply as it arrives, Reply runs the code on with the
// statement's outcome up to the next one, until a Step says the transaction ended.
// Between those calls the worker's code is suspended, not blocked: no thread waits.
type Stepper interface {
	// Stepped reports whether the transactions can be stepped for this worker's
	// options and connection (asked before connecting, and again after Bind).
	Stepped() bool
	// Socket is the descriptor of the bound connection every Step's statement is
	// exchanged on (false: none that can be driven so).
	Socket() (fd int, ok bool)
	// Start begins the drawn transaction (after Next), as Do would.
	Start(ctx context.Context) Step
	// Reply goes on with the last Step's statement's outcome: nil, or its error (a
	// *target.Error from the Exchanger's ParseReply or Lost).
	Reply(err error) Step
}

// Step is what a Stepper's transaction needs next: a statement to exchange (Ex not
// nil, with Args), or its end, with what Do would have returned (Stmts, Err).
type Step struct {
	Ex    target.Exchanger
	Args  []target.Value
	Stmts int
	Err   error
}

// DataChecker is implemented by workloads whose data obeys rules that runs must keep
// (tpcc's consistency conditions): `fathom check-data` reads the tables and reports
// every rule broken, so that a score measured on broken data is not believed.
type DataChecker interface {
	CheckData(ctx context.Context, conn target.Conn) (*DataReport, error)
}

// DataReport is what a DataChecker found: the rules it checked, each part of the data
// it covered (a warehouse) with how many violations it has, and the violations.
type DataReport struct {
	Rules      []string        `json:"rules"`
	Parts      []DataPart      `json:"parts"`
	Violations []DataViolation `json:"violations"`
}

// DataPart is one part of the data and its number of violations.
type DataPart struct {
	Name       string `json:"name"`
	Violations int    `json:"violations"`
}

// DataViolation is one rule that does not hold in one place.
type DataViolation struct {
	Rule   string `json:"rule"`
	Part   string `json:"part"`
	Where  string `json:"where"` // finer than the part ("district 7"), or ""
	Detail string `json:"detail"`
}

// OK reports whether every rule holds.
func (r *DataReport) OK() bool { return len(r.Violations) == 0 }

// ServerCounter is implemented by workloads whose throughput is also quoted from the
// server's own counters (tpcc: HammerDB's TPM is the server's commits and rollbacks
// per minute). The run reads the count at each interval boundary on a connection of
// its own and reports the measured intervals' rate beside the clients' count.
type ServerCounter interface {
	// ServerTransactions returns the server's count of transactions ended (committed
	// or rolled back), by every session, and what it read, in words ("" and an error
	// when the target has no such counter).
	ServerTransactions(ctx context.Context, conn target.Conn) (n int64, source string, err error)
}

// Waiter is implemented by workers that wait between transactions as a terminal's
// user does (TPC-C's keying and think times). In a closed loop the runner calls Wait
// after Next and waits that long before the transaction starts: the wait is not part
// of the transaction's latency, and a run that ends or stops meanwhile does not run it.
type Waiter interface {
	Wait() time.Duration
}

// Noter is implemented by workloads with something to say about a run's numbers
// before it starts (a throughput ceiling its options imply, a client count that does
// not fit them); the run shows the notes as warnings and keeps them.
type Noter interface {
	RunNotes(clients int) []string
}

// Conversational is implemented by workloads whose transactions are many round trips
// each (TPC-C's: about fifteen). Their clients wait for replies through Go's network
// poller whatever their number, where the clients of one-statement transactions get
// blocking sockets and a P each up to 64 clients (see runner.Connect).
type Conversational interface {
	Conversational() bool
}
