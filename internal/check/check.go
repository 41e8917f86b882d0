// Package check is fathom's Nagios/Icinga plugin: checks that compute an expression
// over a server's status and variables (with deltas and rates against the previous
// run), compare it with Nagios threshold ranges and print the plugin line with
// perfdata; plus replication lag, measured from a heartbeat row when asked.
//
// One invocation reads the server once (a Sample), optionally shared between
// invocations through a short-lived cache per host and port, and runs one or more
// Checks on it. State for deltas lives in one small file per server and check.
package check

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// modes lists the check modes with what they measure.
var modes = []struct{ Name, Help string }{
	{"varcomp", "an expression over status and variables (--expression), compared with -w/-c"},
	{"lastrun-varcomp", "the same, for expressions with lastrun{X}, delta(X) or rate(X) (state kept between runs)"},
	{"connections", "client connections as a percent of the maximum (default -w 80 -c 90)"},
	{"long-query", "seconds the longest-running statement has run (default -w 60 -c 300)"},
	{"locked-query", "seconds the longest lock wait has lasted (default -w 30 -c 120)"},
	{"replication-lag", "replica lag in seconds: the heartbeat with --heartbeat, else Seconds_Behind_Master / replay time (default -w 60 -c 300)"},
	{"seconds-behind-master", "MySQL replica lag by Seconds_Behind_Master (blind to a starved I/O thread; prefer --heartbeat)"},
}

// Check is one named check.
type Check struct {
	Name       string // shortname: the first word of the output and the perfdata label
	Mode       string
	Expression string
	Warning    thresholdRange
	Critical   thresholdRange
	UOM        string
	Min, Max   *float64
	// Baseline is the status of a run that has no previous run to compare with, or
	// follows a counter reset (nil: UNKNOWN).
	Baseline *Status
	// Replication options.
	Heartbeat      bool
	HeartbeatTable string // default fathom_heartbeat
	ServerID       int64  // the primary's server id in the heartbeat table (default: discovered)
	Channel        string // MySQL replication channel (default: all)
	MinReplicas    int    // PostgreSQL primary: standbys expected (default 1)
	// WarningBytes and CriticalBytes are thresholds on the bytes of WAL a standby has
	// not replayed (PostgreSQL primary, replication-lag mode).
	WarningBytes, CriticalBytes thresholdRange

	expr *expression
}

// Prepare validates the check and fills defaults for its mode. Errors are one line.
func (c *Check) Prepare() error {
	if c.Mode == "" {
		c.Mode = "varcomp"
	}
	c.Mode = strings.ToLower(c.Mode)
	if err := checkUOM(c.UOM); err != nil {
		return err
	}
	defaults := func(w, cr string) {
		if !c.Warning.IsSet() && !c.Critical.IsSet() {
			c.Warning, c.Critical = MustRange(w), MustRange(cr)
		}
	}
	switch c.Mode {
	case "varcomp", "lastrun-varcomp":
		if strings.TrimSpace(c.Expression) == "" {
			return fmt.Errorf("--mode %s needs --expression, e.g. --expression 'Threads_connected / max_connections * 100'", c.Mode)
		}
		if c.Name == "" {
			c.Name = c.Mode
		}
	case "connections":
		defaults("80", "90")
		c.UOM = "%"
		zero, hundred := 0.0, 100.0
		c.Min, c.Max = &zero, &hundred
	case "long-query":
		defaults("60", "300")
		c.UOM = "s"
	case "locked-query":
		defaults("30", "120")
		c.UOM = "s"
	case "replication-lag", "seconds-behind-master", "sbm":
		if c.Mode == "sbm" {
			c.Mode = "seconds-behind-master"
		}
		if c.Mode == "seconds-behind-master" && c.Heartbeat {
			return errors.New("--heartbeat goes with --mode replication-lag, not seconds-behind-master")
		}
		defaults("60", "300")
		c.UOM = "s"
		if c.HeartbeatTable == "" {
			c.HeartbeatTable = DefaultHeartbeatTable
		}
		if err := checkTableName(c.HeartbeatTable); err != nil {
			return err
		}
		if c.MinReplicas < 0 {
			return errors.New("--min-replicas cannot be negative")
		}
	default:
		var names []string
		for _, m := range modes {
			names = append(names, m.Name)
		}
		return fmt.Errorf("unknown mode %q: use one of %s", c.Mode, strings.Join(names, ", "))
	}
	if (c.WarningBytes.IsSet() || c.CriticalBytes.IsSet()) && c.Mode != "replication-lag" {
		return fmt.Errorf("byte thresholds (--warning-bytes, --critical-bytes) go with --mode replication-lag on a PostgreSQL primary, not %s", c.Mode)
	}
	if c.Expression != "" && c.Mode != "varcomp" && c.Mode != "lastrun-varcomp" {
		return fmt.Errorf("--expression goes with --mode varcomp or lastrun-varcomp, not %s", c.Mode)
	}
	if c.Name == "" {
		c.Name = c.Mode
	}
	if strings.ContainsAny(c.Name, "\n|'=") || strings.TrimSpace(c.Name) != c.Name {
		return fmt.Errorf("short name %s: it cannot contain newlines, vertical bars, '=', quotes or surrounding spaces", PluginText(strconv.Quote(c.Name)))
	}
	if c.Expression != "" {
		e, err := parseExpression(c.Expression)
		if err != nil {
			return err
		}
		c.expr = e
	}
	return nil
}

// Options are the settings of one invocation.
type Options struct {
	State    Dir           // state and cache directory
	CacheAge time.Duration // reuse a sample of the same server this young (0: always read)
	// ConnectFailure is the status when the server cannot be reached (default CRITICAL).
	ConnectFailure Status
	Now            func() time.Time
	// Timeout bounds a whole invocation (RunWithin), even when a driver call does not
	// return (a server that accepts connections and says nothing).
	Timeout time.Duration
	// Dialect reads the server and knows its kind's ways (db.CheckOf).
	Dialect *Dialect
}

// Runner runs checks against one target, reading the server at most once.
type Runner struct {
	Target target.Target
	Opts   Options

	server    string
	conn      target.Conn
	sample    *Sample
	sampleErr error
	fetched   bool
	// live: a replication check is among those run, so the sample is read now and
	// never taken from the cache (thread state and lag change within a second).
	live bool
}

// NewRunner prepares a runner; it does not connect.
func NewRunner(t target.Target, opts Options) *Runner {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Dialect == nil {
		opts.Dialect = &Dialect{Replication: noCheck(t.Kind())}
	}
	return &Runner{Target: t, Opts: opts, server: serverKey(opts.Dialect.DefaultPort, t.Redacted())}
}

// noCheck is the replication reader of a kind without check support.
type noCheck string

func (k noCheck) Lag(context.Context, *Runner, *Check, *Sample) (Result, error) {
	return Result{}, &failure{Unknown, "kind " + string(k) + " has no check support"}
}

// Close closes the runner's connection.
func (r *Runner) Close() {
	if r.conn != nil {
		_ = r.conn.Close()
		r.conn = nil
	}
}

// failure is an error that decides the check's status by itself.
type failure struct {
	status Status
	msg    string
}

func (f *failure) Error() string { return f.msg }

func (r *Runner) connFailure(err error) error {
	if errors.Is(err, context.DeadlineExceeded) || target.ClassOf(err) == target.ClassTimeout {
		return &failure{r.Opts.ConnectFailure, fmt.Sprintf("no answer from %s in time (connecting)", r.server)}
	}
	hint := ""
	switch target.ClassOf(err) {
	case target.ClassAuth:
		hint = " (check the user and password: DSN, ~/.my.cnf, .pgpass or PG* variables)"
		if h := r.Opts.Dialect.AuthHint; h != "" {
			hint = " (" + h + ")"
		}
	case target.ClassUndefined:
		hint = " (does the database exist?)"
	}
	msg := OneLine(err.Error())
	// "connecting to HOST:PORT: dial tcp HOST:PORT: connect: connection refused" says
	// the address three times.
	msg = strings.TrimPrefix(msg, "connecting to "+r.server+": ")
	msg = strings.TrimPrefix(msg, "dial tcp "+r.server+": ")
	msg = strings.TrimPrefix(msg, "connect: ")
	return &failure{r.Opts.ConnectFailure, fmt.Sprintf("cannot connect to %s: %s%s", r.server, msg, hint)}
}

// connection returns the runner's connection, opening it on first use.
func (r *Runner) connection(ctx context.Context) (target.Conn, error) {
	if r.conn != nil && r.conn.Alive() {
		return r.conn, nil
	}
	c, err := r.Target.Connect(ctx)
	if err != nil {
		return nil, r.connFailure(err)
	}
	r.conn = c
	return c, nil
}

// Sample returns the invocation's sample, read once (or taken from the cache).
func (r *Runner) Sample(ctx context.Context) (*Sample, error) {
	if r.fetched {
		return r.sample, r.sampleErr
	}
	r.fetched = true
	// A check always authenticates before it reports, cache or not: within the cache
	// window a wrong password, an unknown user or another database must still fail.
	c, err := r.connection(ctx)
	if err != nil {
		r.sampleErr = err
		return nil, err
	}
	maxAge := r.Opts.CacheAge
	if r.live {
		maxAge = 0 // replication state is always read fresh
	}
	r.sample, _, r.sampleErr = r.Opts.State.cachedSample(ctx, r.Target.Kind(), r.server, target.IdentityOf(r.Target), maxAge, r.Opts.Now, func() (*Sample, error) {
		s, err := Fetch(ctx, c, r.Opts.Dialect.Fetch, r.Target.Kind(), r.server, r.Opts.Now)
		if err != nil {
			return nil, r.queryFailure(err, "reading server status")
		}
		return s, nil
	})
	return r.sample, r.sampleErr
}

func (r *Runner) queryFailure(err error, what string) error {
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	switch target.ClassOf(err) {
	case target.ClassConnection, target.ClassTimeout, target.ClassCanceled:
		return &failure{r.Opts.ConnectFailure, fmt.Sprintf("%s on %s: %s", what, r.server, OneLine(err.Error()))}
	case target.ClassAuth:
		return &failure{Unknown, fmt.Sprintf("%s on %s: %s (the user lacks a privilege)", what, r.server, OneLine(err.Error()))}
	}
	return &failure{Unknown, fmt.Sprintf("%s on %s: %s", what, r.server, OneLine(err.Error()))}
}

// RunWithin is Run bounded by Opts.Timeout, as a Nagios plugin must be: when the
// server does not answer in time every check gets the connect-failure status and the
// calls still in flight are abandoned (the runner must not be used or closed after
// that; the process is about to exit).
func (r *Runner) RunWithin(ctx context.Context, checks []*Check) (results []Result, abandoned bool) {
	if r.Opts.Timeout <= 0 {
		return r.Run(ctx, checks), false
	}
	ctx, cancel := context.WithTimeout(ctx, r.Opts.Timeout)
	defer cancel()
	done := make(chan []Result, 1)
	go func() { done <- r.Run(ctx, checks) }()
	select {
	case res := <-done:
		return res, false
	case <-ctx.Done():
	}
	select { // a moment for calls that do notice the deadline
	case res := <-done:
		return res, false
	case <-time.After(250 * time.Millisecond):
	}
	out := make([]Result, len(checks))
	for i, c := range checks {
		out[i] = Result{Name: c.Name, Status: r.Opts.ConnectFailure,
			Message: fmt.Sprintf("no answer from %s within %s", r.server, r.Opts.Timeout)}
	}
	return out, true
}

// SampleWithin is Sample bounded by Opts.Timeout, like RunWithin.
func (r *Runner) SampleWithin(ctx context.Context) (s *Sample, abandoned bool, err error) {
	if r.Opts.Timeout <= 0 {
		s, err = r.Sample(ctx)
		return s, false, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.Opts.Timeout)
	defer cancel()
	type answer struct {
		s   *Sample
		err error
	}
	done := make(chan answer, 1)
	go func() {
		s, err := r.Sample(ctx)
		done <- answer{s, err}
	}()
	select {
	case a := <-done:
		return a.s, false, a.err
	case <-time.After(r.Opts.Timeout + 250*time.Millisecond):
		return nil, true, &failure{r.Opts.ConnectFailure, fmt.Sprintf("no answer from %s within %s", r.server, r.Opts.Timeout)}
	}
}

// Run runs each check and returns one result per check, in order.
func (r *Runner) Run(ctx context.Context, checks []*Check) []Result {
	for _, c := range checks {
		if c.Mode == "replication-lag" || c.Mode == "seconds-behind-master" {
			r.live = true
		}
	}
	out := make([]Result, 0, len(checks))
	for _, c := range checks {
		res := r.run(ctx, c)
		res.Name = c.Name
		out = append(out, res)
	}
	return out
}

func (r *Runner) run(ctx context.Context, c *Check) Result {
	res, err := r.dispatch(ctx, c)
	if err != nil {
		var f *failure
		if errors.As(err, &f) {
			return Result{Status: f.status, Message: f.msg}
		}
		if ctx.Err() != nil {
			return Result{Status: r.Opts.ConnectFailure, Message: fmt.Sprintf("timed out talking to %s", r.server)}
		}
		return Result{Status: Unknown, Message: OneLine(err.Error())}
	}
	return res
}

func (r *Runner) dispatch(ctx context.Context, c *Check) (Result, error) {
	s, err := r.Sample(ctx)
	if err != nil {
		return Result{}, err
	}
	switch c.Mode {
	case "varcomp", "lastrun-varcomp":
		return r.expression(ctx, c, s, c.expr, c.Expression)
	case "connections":
		res, err := r.expression(ctx, c, s, mustExpr(r.Opts.Dialect.Connections), "")
		if err == nil && res.Message == "" {
			used, _ := s.Vars.Get(r.Opts.Dialect.Used)
			maxName := r.Opts.Dialect.Max
			if maxName == "" {
				maxName = "max_connections"
			}
			max, _ := s.Vars.Get(maxName)
			res.Message = fmt.Sprintf("%s%% of %s (%s of %s)", formatNumber(round2(res.Perf[0].Value)), maxName, used, max) +
				thresholdNote(res.Status, c, res.Perf[0].Value)
		}
		return res, err
	case "long-query":
		res, err := r.expression(ctx, c, s, mustExpr("longest_query_seconds"), "")
		if err == nil && res.Message == "" {
			if q := s.LongestQuery; q != nil && q.Seconds > 0 {
				res.Message = fmt.Sprintf("longest query running %ss: %s", formatNumber(round2(q.Seconds)), q.describe())
			} else {
				res.Message = "no query running"
			}
			res.Message += thresholdNote(res.Status, c, res.Perf[0].Value)
		}
		return res, err
	case "locked-query":
		res, err := r.expression(ctx, c, s, mustExpr("longest_lock_wait_seconds"), "")
		if err == nil && res.Message == "" {
			if q := s.LongestLockWait; q != nil {
				res.Message = fmt.Sprintf("%d statement(s) waiting for locks, the longest for %ss: %s", s.LockWaits, formatNumber(round2(q.Seconds)), q.describe())
			} else {
				res.Message = "no statement waiting for a lock"
			}
			res.Message += thresholdNote(res.Status, c, res.Perf[0].Value)
		}
		return res, err
	case "replication-lag", "seconds-behind-master":
		return r.replication(ctx, c, s)
	}
	return Result{}, fmt.Errorf("unknown mode %q", c.Mode)
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func mustExpr(src string) *expression {
	e, err := parseExpression(src)
	if err != nil {
		panic(err)
	}
	return e
}

// thresholdNote says which threshold a value crossed: " (> 80)".
func thresholdNote(st Status, c *Check, v float64) string {
	switch st {
	case Critical:
		return " (" + c.Critical.describe(v) + ")"
	case Warning:
		return " (" + c.Warning.describe(v) + ")"
	}
	return ""
}

// classify compares a value with the check's thresholds.
func classify(v float64, c *Check) Status {
	switch {
	case c.Critical.Alert(v):
		return Critical
	case c.Warning.Alert(v):
		return Warning
	}
	return OK
}

func (c *Check) perf(v float64) Perf {
	return Perf{Label: c.Name, Value: v, UOM: c.UOM, Warn: c.Warning, Crit: c.Critical, Min: c.Min, Max: c.Max}
}

// expression evaluates e on the sample, with the check's state when e needs the
// previous run. shown is the expression text for the message ("" to let the mode
// write its own message on success).
func (r *Runner) expression(ctx context.Context, c *Check, s *Sample, e *expression, shown string) (Result, error) {
	var (
		v      float64
		err    error
		reason string // why there is no value to compare: a baseline or a reset
	)
	if !e.Stateful {
		v, err = e.eval(s.Vars, nil, false, 0)
	} else {
		var evalErr error
		err = r.Opts.State.update(ctx, s.Kind, s.Server, fileName(c.Name), e.Source, func(prev []stateSample) []stateSample {
			var reset bool
			v, reason, reset, evalErr = evalWithState(e, s, prev, r.Opts.Dialect.StatsReset)
			if evalErr != nil {
				return prev
			}
			return nextSamples(prev, s, e, reset)
		})
		if err == nil {
			err = evalErr
		}
	}
	if err != nil {
		var ue *unknownVarError
		if errors.As(err, &ue) && len(s.Missing) > 0 {
			var notes []string
			for what, why := range s.Missing {
				notes = append(notes, what+": "+why)
			}
			return Result{}, fmt.Errorf("%v (not read: %s)", err, strings.Join(notes, "; "))
		}
		return Result{}, err
	}
	if reason != "" {
		st := Unknown
		if c.Baseline != nil {
			st = *c.Baseline
		}
		return Result{Status: st, Message: reason}, nil
	}
	st := classify(v, c)
	res := Result{Status: st, Perf: []Perf{c.perf(v)}}
	if shown != "" {
		res.Message = fmt.Sprintf("%s = %s%s", shown, formatNumber(v), c.UOM) + thresholdNote(st, c, v)
	}
	return res, nil
}

// minInterval is the least time between two samples a delta is computed over:
// closer samples of busy counters give noise, and the order of samples read at the
// same moment by concurrent invocations is not even certain.
const minInterval = time.Second

// evalWithState evaluates a stateful expression against the newest stored sample at
// least minInterval older than s. reason is set, and no value returned, when there is
// nothing to compare with: a first run, a run too close to the last one, or counters
// that started again from zero (reset: the older samples are useless now).
func evalWithState(e *expression, s *Sample, prev []stateSample, resetBy string) (v float64, reason string, reset bool, err error) {
	var base, recent *stateSample
	cached := false
	for i := len(prev) - 1; i >= 0; i-- {
		age := s.Time.Sub(prev[i].Time)
		if age == 0 {
			cached = true
		}
		if age >= minInterval {
			base = &prev[i]
			break
		}
		if age > 0 && recent == nil {
			recent = &prev[i]
		}
	}
	// Counters that started again from zero since the newest older sample make every
	// older sample useless.
	newer := recent
	if newer == nil {
		newer = base
	}
	if newer != nil {
		const slack = 2.5 // seconds: Uptime has whole seconds, and the samples are not taken at once
		if s.Started-newer.Started > slack {
			return 0, fmt.Sprintf("the server restarted at %s since the last run (counters start again from zero): collecting a new baseline", serverTime(s.Started)), true, nil
		}
		if s.StatsReset-newer.StatsReset > slack {
			return 0, fmt.Sprintf("statistics were reset at %s since the last run (%s): collecting a new baseline", serverTime(s.StatsReset), resetBy), true, nil
		}
	}
	if base == nil {
		// Still report unknown variables and other mistakes at once.
		if _, err := e.eval(s.Vars, nil, false, 0); err != nil && !errors.Is(err, errBaseline) {
			return 0, "", false, err
		}
		if cached && recent == nil {
			return 0, "collecting a baseline: the previous run used this same cached sample of the server (see --cache-age)", false, nil
		}
		if recent != nil {
			return 0, fmt.Sprintf("collecting a baseline: the previous run was %s ago, less than the %s a delta needs", s.Time.Sub(recent.Time).Round(time.Millisecond), minInterval), false, nil
		}
		return 0, "collecting a baseline: this is the first run of this check, values come from the next run on", false, nil
	}
	elapsed := s.Time.Sub(base.Time).Seconds()
	v, err = e.eval(s.Vars, base.Vars, true, elapsed)
	var re *resetError
	if errors.As(err, &re) {
		return 0, re.Error() + ": collecting a new baseline", true, nil
	}
	if errors.Is(err, errBaseline) {
		return 0, "collecting a baseline: the previous run did not record every variable this check reads", true, nil
	}
	return v, "", false, err
}

func serverTime(unix float64) string {
	sec, frac := math.Modf(unix)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC().Format("2006-01-02 15:04:05Z")
}

// keepSamples bounds how many samples a check's state keeps.
const keepSamples = 16

// nextSamples is what the state keeps after this run: the newest samples with
// distinct times (a cached sample may be seen twice), or only this one after a reset.
func nextSamples(prev []stateSample, s *Sample, e *expression, reset bool) []stateSample {
	cur := stateSample{Time: s.Time, Started: s.Started, StatsReset: s.StatsReset, Vars: s.Vars.only(e.Needs)}
	if reset {
		return []stateSample{cur}
	}
	out := make([]stateSample, 0, len(prev)+1)
	for _, p := range prev {
		if !p.Time.Equal(cur.Time) {
			out = append(out, p)
		}
	}
	out = append(out, cur)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	// A later run needs the newest sample at least minInterval older than itself:
	// keep every sample of the last minInterval and the one just before them.
	newest := out[len(out)-1].Time
	first := len(out) - 1
	for first > 0 && newest.Sub(out[first-1].Time) < minInterval {
		first--
	}
	if first > 0 {
		first--
	}
	out = out[first:]
	if len(out) > keepSamples {
		out = append(out[:1], out[len(out)-keepSamples+1:]...)
	}
	return out
}

// Failure is an error that ends a check with status and msg as its one line (what a
// kind's dialect returns for a mode it refuses).
func Failure(status Status, msg string) error { return &failure{status, msg} }
