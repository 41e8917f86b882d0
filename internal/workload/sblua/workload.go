// Package sblua runs sysbench 1.0 Lua scripts unchanged: the scripts sysbench ships
// (/usr/share/sysbench/oltp_*.lua …) and users' own. Each client has its own Lua
// state with sysbench's script API (sysbench.opt, sysbench.rand, sysbench.sql, the
// hooks, require of oltp_common), as each sysbench thread has; each event() is one
// transaction of fathom's runner and each statement in it counts as a statement.
//
// The Lua is gopher-lua, a pure-Go Lua 5.1 (sysbench runs LuaJIT, whose language
// is Lua 5.1): fathom stays one static binary.
package sblua

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fathom-lab/fathom/internal/lua"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// Spec returns the workload spec of the script at path: its options are the ones it
// declares and sysbench's own (threads, rand_type …).
func Spec(path string) (*workload.Spec, error) {
	s, err := Load(path)
	if err != nil {
		return nil, err
	}
	sp := &workload.Spec{Name: filepath.Base(path), Description: "sysbench Lua script " + path}
	for _, o := range s.options {
		sp.Options = append(sp.Options, workload.Option{Name: o.Name, Default: o.Default, Help: o.Help})
	}
	for _, o := range globals {
		if !s.declares(o.Name) {
			sp.Options = append(sp.Options, workload.Option{Name: o.Name, Default: o.Default, Help: "sysbench: " + o.Help})
		}
	}
	sp.New = func(p workload.Params) (workload.Workload, error) { return newWorkload(s, p) }
	return sp, nil
}

func (s *script) declares(name string) bool {
	for _, o := range s.options {
		if o.Name == name {
			return true
		}
	}
	return false
}

// Workload is a sysbench script with its options resolved.
type Workload struct {
	yields atomic.Int64 // statements the clients yielded to the runner (step.go), for tests
	s      *script
	opts   map[string]string
	kinds  map[string]optKind
	rp     randParams
	tgt    target.Target
	driver string
	out    io.Writer
	uniq   *uniqueSeq
	seed   uint64
	rep    reporter
	// reportIntervals: report_intermediate is called for each interval (sysbench
	// calls it only with --report-interval).
	reportIntervals bool
}

// newWorkload resolves the options p (names with '_' or '-') against the script's and
// sysbench's; values are checked against their type.
func newWorkload(s *script, p workload.Params) (*Workload, error) {
	opts, kinds := defaults(s)
	var unknown []string
	for k, v := range p {
		n := strings.ReplaceAll(k, "-", "_")
		if _, ok := opts[n]; !ok {
			if s.legacy {
				// A script without sysbench.cmdline.options takes any option, as a
				// string (sysbench 1.0 passes them through for older scripts).
				opts[n], kinds[n] = v, kindString
				continue
			}
			unknown = append(unknown, k)
			continue
		}
		switch kinds[n] {
		case kindBool:
			if _, ok := parseBool(v); !ok {
				return nil, fmt.Errorf("--%s=%s: use on or off", strings.ReplaceAll(n, "_", "-"), v)
			}
		case kindNumber:
			if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
				return nil, fmt.Errorf("--%s=%s: not a number", strings.ReplaceAll(n, "_", "-"), v)
			}
		}
		opts[n] = v
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		var names []string
		for _, o := range s.options {
			names = append(names, "--"+strings.ReplaceAll(o.Name, "_", "-"))
		}
		return nil, fmt.Errorf("%s declares no option %s (its options: %s)", s.Path, strings.Join(unknown, ", "), strings.Join(names, " "))
	}
	w := &Workload{s: s, opts: opts, kinds: kinds}
	num := func(n string) float64 { f, _ := strconv.ParseFloat(strings.TrimSpace(opts[n]), 64); return f }
	w.rp = randParams{kind: strings.TrimSpace(opts["rand_type"]), iter: int(num("rand_spec_iter")), pct: num("rand_spec_pct"),
		res: num("rand_spec_res"), paretoH: num("rand_pareto_h"), zipfExp: num("rand_zipfian_exp")}
	switch w.rp.kind {
	case "uniform", "gaussian", "special", "pareto", "zipfian":
	default:
		return nil, fmt.Errorf("--rand-type=%s: use uniform, gaussian, special, pareto or zipfian (as sysbench)", w.rp.kind)
	}
	switch {
	case w.rp.iter < 1:
		return nil, fmt.Errorf("--rand-spec-iter=%s: give 1 or more", opts["rand_spec_iter"])
	case w.rp.pct < 0 || w.rp.pct > 100:
		return nil, fmt.Errorf("--rand-spec-pct=%s: give 0 to 100", opts["rand_spec_pct"])
	case w.rp.res < 0 || w.rp.res >= 100:
		return nil, fmt.Errorf("--rand-spec-res=%s: give 0 to 99", opts["rand_spec_res"])
	case !(w.rp.paretoH > 0 && w.rp.paretoH < 1):
		return nil, fmt.Errorf("--rand-pareto-h=%s: give a number between 0 and 1", opts["rand_pareto_h"])
	case w.rp.zipfExp < 0 || math.IsNaN(w.rp.zipfExp):
		return nil, fmt.Errorf("--rand-zipfian-exp=%s: give 0 or more", opts["rand_zipfian_exp"])
	}
	if t := int(num("threads")); t < 1 {
		return nil, fmt.Errorf("--threads=%s: give 1 or more", opts["threads"])
	}
	w.reportIntervals = num("report_interval") > 0
	w.rep.pct = 95
	if p := num("percentile"); p > 0 && p <= 100 {
		w.rep.pct = p
	}
	return w, nil
}

// Name is the script's file name (oltp_read_write.lua): runs of a script and of
// fathom's native workload of the same name are told apart.
func (w *Workload) Name() string { return filepath.Base(w.s.Path) }

// Options are every option's effective value, and the script's path.
func (w *Workload) Options() map[string]string {
	m := map[string]string{"script": w.s.Path}
	for k, v := range w.opts {
		m[k] = v
	}
	return m
}

// TxnTypes: each event() is one transaction, of the type "event-error" when the
// script counted an error in it (sysbench's "ignored errors"; see worker.Retype),
// else "event". Both are events, as in sysbench's events per second. Scripts that
// never call ffi.C.sb_counter_inc (as read: the script and the modules it requires
// when loaded) have the one type.
func (w *Workload) TxnTypes() []string {
	if w.s.countsErrors {
		return []string{"event", "event-error"}
	}
	return []string{"event"}
}

// SelfMarked: a script makes its own tables; fathom writes no marker table beside
// them, so that the server sees what sysbench would send.
func (w *Workload) SelfMarked() {}

// KeepsExisting: prepare is the script's own, as under sysbench.
func (w *Workload) KeepsExisting() {}

// SetOutput sends what the script prints (print()) to out. The script's threads (a
// parallel prepare, every client) print through one lock, a whole print() at a time.
func (w *Workload) SetOutput(out io.Writer) { w.out = &lockedWriter{w: out} }

// lockedWriter serialises writes from the script's Lua states.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// UseTarget gives the workload the target its scripts connect to: drv:name() is
// mysql or pgsql after it, as sysbench's drivers are named.
func (w *Workload) UseTarget(t target.Target) error {
	switch t.Kind() {
	case "mysql":
		w.driver = "mysql"
	case "postgres":
		w.driver = "pgsql"
	default:
		return fmt.Errorf("sysbench scripts run on MySQL/MariaDB and PostgreSQL targets (sysbench's mysql and pgsql drivers), not %s", t.Kind())
	}
	w.tgt = t
	w.opts["db_driver"] = w.driver
	return nil
}

func (w *Workload) config(tid int, command string) envConfig {
	if w.uniq == nil {
		w.uniq = newUniqueSeq(w.seed)
	}
	return envConfig{s: w.s, tid: tid, command: command, opts: w.opts, kinds: w.kinds, driver: w.driver,
		tgt: w.tgt, out: w.out, rp: w.rp, seed: w.seed, uniq: w.uniq}
}

func (w *Workload) threads() int {
	f, _ := strconv.ParseFloat(strings.TrimSpace(w.opts["threads"]), 64)
	return max(int(f), 1)
}

// Prepare runs the script's prepare command, in --threads Lua states at once when
// the script declares it parallel (oltp_common does), as sysbench does.
func (w *Workload) Prepare(ctx context.Context, t target.Target, _ workload.Progress) error {
	if err := w.UseTarget(t); err != nil {
		return err
	}
	return w.Command(ctx, "prepare", nil)
}

// Cleanup runs the script's cleanup command on conn.
func (w *Workload) Cleanup(ctx context.Context, conn target.Conn) error {
	if w.driver == "" {
		return fmt.Errorf("internal: cleanup of a sysbench script before UseTarget")
	}
	return w.Command(ctx, "cleanup", conn)
}

// HasCommand reports whether the script defines the command (prepare, cleanup, or
// one of sysbench.cmdline.commands) for the target given to UseTarget.
func (w *Workload) HasCommand(ctx context.Context, name string) (bool, error) {
	e, err := newEnv(ctx, w.config(0, name))
	if err != nil {
		return false, err
	}
	defer e.close()
	return e.command(name) != nil, nil
}

// Command runs one of the script's commands (prepare, cleanup, prewarm, its own)
// as sysbench does: in --threads states at once for a parallel command, else once.
// conn, if given, is the connection the first drv:connect() returns.
func (w *Workload) Command(ctx context.Context, name string, conn target.Conn) error {
	e, err := newEnv(ctx, w.config(0, name))
	if err != nil {
		return err
	}
	e.primary = conn
	f, parallel := e.customCommand(name)
	if f == nil {
		f = e.command(name)
	}
	if f == nil {
		e.close()
		return fmt.Errorf("%s has no %s command (neither in sysbench.cmdline.commands nor a function %s())", w.s.Path, name, name)
	}
	if !parallel || w.threads() == 1 {
		defer e.close()
		return e.callFn(f)
	}
	n := w.threads()
	envs := []*env{e}
	for tid := 1; tid < n; tid++ {
		et, err := newEnv(ctx, w.config(tid, name))
		if err != nil {
			for _, x := range envs {
				x.close()
			}
			return err
		}
		envs = append(envs, et)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, et := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer et.close()
			fn, _ := et.customCommand(name)
			errs[i] = et.callFn(fn)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Setup checks that the script can run (it has an event function) and runs its
// init() once, before the clients start, as sysbench does.
func (w *Workload) Setup(ctx context.Context, conn target.Conn) error {
	e, err := newEnv(ctx, w.config(0, "run"))
	if err != nil {
		return err
	}
	defer e.close()
	if _, ok := e.L.GetGlobal("event").(*lua.LFunction); !ok {
		return fmt.Errorf("cannot find the event() function in %s", w.s.Path)
	}
	e.primary = conn
	return e.call("init")
}
