package sblua

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/fathom-lab/fathom/internal/lua"

	"github.com/fathom-lab/fathom/internal/measure"
)

// Statement classes as sysbench counts them (its SB_CNT_OTHER, _READ and _WRITE).
const (
	classOther = iota
	classRead
	classWrite
)

// queryClass is the class sysbench counts a statement in: a read for SELECT, a
// write for INSERT, UPDATE, DELETE and REPLACE, other for the rest (BEGIN, COMMIT …).
func queryClass(q string) int {
	q = strings.TrimLeft(q, " \t\r\n(")
	word := q
	if i := strings.IndexAny(q, " \t\r\n("); i >= 0 {
		word = q[:i]
	}
	// EqualFold, not ToUpper: this runs for every statement and must not allocate.
	if strings.EqualFold(word, "SELECT") {
		return classRead
	}
	for _, w := range [...]string{"INSERT", "UPDATE", "DELETE", "REPLACE"} {
		if strings.EqualFold(word, w) {
			return classWrite
		}
	}
	return classOther
}

// sent counts one statement sent in the event: in the event's count, and by class.
func (e *env) sent(q string) { e.sentClass(queryClass(q)) }

func (e *env) sentClass(c int) {
	e.stmts++
	e.byClass[c].Add(1)
}

// reporter runs a script's report hooks (sysbench.hooks.report_intermediate and
// report_cumulative) in a Lua state of its own, as sysbench runs them in its
// reporting thread's, with sysbench's statistics table.
type reporter struct {
	mu       sync.Mutex
	e        *env
	failed   bool
	total    *measure.Interval // the measured intervals so far
	last     [3]int64          // statements by class at the last report
	json     bool              // sysbench.report_json has opened its list
	envs     []*env            // the clients' states, whose statements are counted
	finished int               // clients whose thread_done ran
	pct      float64           // sysbench's --percentile
}

// addEnv counts a client's state among those whose statements are reported.
func (r *reporter) addEnv(e *env) {
	r.mu.Lock()
	r.envs = append(r.envs, e)
	r.mu.Unlock()
}

func (r *reporter) done() {
	r.mu.Lock()
	r.finished++
	r.mu.Unlock()
}

// reportState is the Lua state the report hooks run in, made at the first report
// (the script's main chunk runs in it, as in sysbench's reporting thread).
func (w *Workload) reportState() (*env, error) {
	if w.rep.e == nil && !w.rep.failed {
		e, err := newEnv(context.Background(), w.config(0, "run"))
		if err != nil {
			w.rep.failed = true
			return nil, err
		}
		e.rep = &w.rep
		w.rep.e = e
	}
	return w.rep.e, nil
}

// ReportInterval calls the script's report_intermediate hook with the interval's
// figures, when the script sets one and the run's --report-interval was given (as
// sysbench calls it only then); intervals of the measured time also add to what
// report_cumulative gets at the end. Events, errors, reconnects and the latency
// percentile are the interval's own; the statements by class are those the clients
// sent between this report and the last.
func (w *Workload) ReportInterval(iv *measure.Interval) error {
	r := &w.rep
	r.mu.Lock()
	defer r.mu.Unlock()
	if !iv.Warmup {
		if r.total == nil {
			r.total = measure.NewInterval(0, w.TxnTypes())
			r.total.Start = iv.Start
		}
		r.total.Add(iv)
		r.total.End = iv.End
	}
	by := r.statements()
	if !w.reportIntervals || r.failed {
		r.last = by
		return nil
	}
	e, err := w.reportState()
	if err != nil {
		return err
	}
	hook, ok := e.hook("report_intermediate").(*lua.LFunction)
	if !ok {
		r.last = by
		return nil
	}
	stat := r.stat(e.L, iv, iv.End.Seconds(), by)
	r.last = by
	return r.call(e, hook, stat)
}

// ReportEnd calls the script's report_cumulative hook with the measured time's
// figures, and closes the list sysbench.report_json opened.
func (w *Workload) ReportEnd() error {
	r := &w.rep
	r.mu.Lock()
	defer r.mu.Unlock()
	defer func() {
		if r.e != nil {
			if r.json {
				_, _ = io.WriteString(r.e.out, "\n]\n")
			}
			r.e.close()
			r.e = nil
		}
	}()
	if r.total == nil || r.failed {
		return nil
	}
	e, err := w.reportState()
	if err != nil {
		return err
	}
	hook, ok := e.hook("report_cumulative").(*lua.LFunction)
	if !ok {
		return nil
	}
	r.last = [3]int64{}
	stat := r.stat(e.L, r.total, r.total.End.Seconds(), r.statements())
	lat := r.total.Total().Latency
	if n := lat.TotalCount(); n > 0 {
		e.L.SetField(stat, "latency_min", lua.LNumber(float64(lat.Min())/1e9))
		e.L.SetField(stat, "latency_max", lua.LNumber(float64(lat.Max())/1e9))
		e.L.SetField(stat, "latency_avg", lua.LNumber(lat.Mean()/1e9))
		e.L.SetField(stat, "latency_sum", lua.LNumber(lat.Mean()*float64(n)/1e9))
	}
	return r.call(e, hook, stat)
}

// statements are the clients' statements by class so far.
func (r *reporter) statements() [3]int64 {
	var by [3]int64
	for _, x := range r.envs {
		for i := range by {
			by[i] += x.byClass[i].Load()
		}
	}
	return by
}

// stat is sysbench's statistics table for iv (whose statements by class are by
// less what the last report counted).
func (r *reporter) stat(L *lua.LState, iv *measure.Interval, total float64, by [3]int64) *lua.LTable {
	tot := iv.Total()
	errs := int64(0)
	for _, n := range tot.Errors {
		errs += n
	}
	if len(iv.Types) > 1 {
		errs += iv.Types[1].OK // events whose script counted an error
	}
	t := L.NewTable()
	set := func(k string, v float64) { L.SetField(t, k, lua.LNumber(v)) }
	set("time_interval", iv.Seconds())
	set("time_total", total)
	set("threads_running", float64(len(r.envs)-r.finished))
	set("events", float64(tot.OK))
	set("reads", float64(by[classRead]-r.last[classRead]))
	set("writes", float64(by[classWrite]-r.last[classWrite]))
	set("other", float64(by[classOther]-r.last[classOther]))
	set("errors", float64(errs))
	set("reconnects", float64(iv.Reconnects))
	set("latency_pct", float64(tot.Latency.ValueAtQuantile(r.pct))/1e9)
	set("queue_length", 0)
	set("concurrency", 0)
	return t
}

// call runs hook(stat); a hook's error is said once and its hooks are not called again.
func (r *reporter) call(e *env, hook *lua.LFunction, stat *lua.LTable) error {
	if err := e.L.CallByParam(lua.P{Fn: hook, NRet: 0, Protect: true}, stat); err != nil {
		r.failed = true
		return fmt.Errorf("the script's report hook failed, and is not called again: %v", luaError(err))
	}
	return nil
}

// registerReports provides sysbench.report_default, report_csv and report_json, the
// reports a script's hooks may call, printing the statistics table as sysbench does.
func (e *env) registerReports(sb *lua.LTable) {
	L := e.L
	num := func(t *lua.LTable, k string) float64 { return float64(lua.LVAsNumber(t.RawGetString(k))) }
	rates := func(t *lua.LTable) (secs, tps, qps, r, w, o, lat, errs, reconn float64) {
		secs = num(t, "time_interval")
		if secs <= 0 {
			secs = 1
		}
		r, w, o = num(t, "reads")/secs, num(t, "writes")/secs, num(t, "other")/secs
		return secs, num(t, "events") / secs, r + w + o, r, w, o, num(t, "latency_pct") * 1000, num(t, "errors") / secs, num(t, "reconnects") / secs
	}
	L.SetField(sb, "report_default", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		_, tps, qps, r, w, o, lat, errs, reconn := rates(t)
		pct := 95.0
		if opt, ok := sb.RawGetString("opt").(*lua.LTable); ok {
			if p := float64(lua.LVAsNumber(opt.RawGetString("percentile"))); p > 0 {
				pct = p
			}
		}
		fmt.Fprintf(e.out, "[ %.0fs ] thds: %.0f tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%.0f%%): %4.2f err/s %4.2f reconn/s: %4.2f\n",
			num(t, "time_total"), num(t, "threads_running"), tps, qps, r, w, o, pct, lat, errs, reconn)
		return 0
	}))
	L.SetField(sb, "report_csv", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		_, tps, qps, r, w, o, lat, errs, reconn := rates(t)
		fmt.Fprintf(e.out, "%.0f,%.0f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f\n",
			num(t, "time_total"), num(t, "threads_running"), tps, qps, r, w, o, lat, errs, reconn)
		return 0
	}))
	L.SetField(sb, "report_json", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		_, tps, qps, r, w, o, lat, errs, reconn := rates(t)
		sep := ",\n"
		if e.rep == nil || !e.rep.json {
			sep = "[\n"
			if e.rep != nil {
				e.rep.json = true
			}
		}
		fmt.Fprintf(e.out, "%s  {\n    \"time\": %4.0f,\n    \"threads\": %.0f,\n    \"tps\": %4.2f,\n    \"qps\": {\n      \"total\": %4.2f,\n      \"reads\": %4.2f,\n      \"writes\": %4.2f,\n      \"other\": %4.2f\n    },\n    \"latency\": %4.2f,\n    \"errors\": %4.2f,\n    \"reconnects\": %4.2f\n  }",
			sep, num(t, "time_total"), num(t, "threads_running"), tps, qps, r, w, o, lat, errs, reconn)
		return 0
	}))
}
