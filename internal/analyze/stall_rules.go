package analyze

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/store"
)

// Minimum effects. A pattern names a cause only when its evidence is unusual for the
// run (MinScore robust spreads from the baseline) and material in absolute terms:
//
//	server stopped answering  in at least one interval of the stall, at least half of
//	                          the server collectors got no answer (timeout) or failed,
//	                          against fewer than 1 in 10 baseline intervals
//	restart                   clients reconnected, or the server's counters restarted
//	lock waits                sessions waiting for locks: on average at least 1 more
//	                          than in the baseline over the stall, and at least 2 at
//	                          its peak (or half the clients of a smaller run); or lock
//	                          wait time of at least 1000 ms per second (one session
//	                          waiting all the time)
//	autovacuum                at least 1 more autovacuum worker on average
//	OS writeback              at least 16 MB under writeback, or dirty pages at the
//	                          dirty_ratio threshold
//	client host saturated     on average at least twice as many runnable tasks as
//	                          CPUs, or at least 10% steal, during the stall, and the
//	                          clients did not stop: a saturated host slows its
//	                          clients, it does not stop them for a whole interval
//	                          (under 5% of the baseline)
//
// A server sample missing altogether (the sampler still waiting on the previous one)
// counts as unanswered when the sampler seldom misses samples in the baseline, or
// when the clients stopped in the same intervals: both were waiting for the server.
//
// Checkpoint and binary-log patterns rest on events that happened (a checkpoint
// started, the binary log rotated) rather than on a level.
const (
	stallMinLockSessions  = 1.0
	stallMinLockPeak      = 2.0
	stallMinLockTimeMS    = 1000.0
	stallMinWriteback     = 16 << 20
	stallMinUnanswered    = 0.5
	stallMaxBaselineNoAns = 0.1
	stallSaturatedRunQ    = 2.0
	stallSaturatedSteal   = 10.0
)

// The lock pattern reads the metrics the run's kind names in its Vocabulary:
// sessions waiting for table-level (metadata) locks, for row locks, for either, and
// the time spent waiting for row locks. The kinds declare them (internal/db/KIND);
// db's TestUndeclared fails when one of them is renamed there.
func stallLockWaits(a *stallAttributor, st *store.Stall, w []int, _ int64) (stallMatch, bool) {
	peakMin := stallMinLockPeak
	if c := a.in.Clients; c > 0 && float64(c)/2 < peakMin {
		peakMin = math.Max(1, float64(c)/2)
	}
	type found struct {
		name string
		d    stallDuring
	}
	check := func(names []string) []found {
		var out []found
		for _, n := range names {
			if d, ok := a.rise(n, st, stallMinLockSessions); ok && d.peak >= peakMin {
				out = append(out, found{n, d})
			}
		}
		return out
	}
	v := &a.in.Vocabulary
	table, row, any := check(v.TableLockSessions), check(v.RowLockSessions), check(v.AnyLockSessions)
	var rowTime *stallDuring
	if v.RowLockTime != "" {
		if d, ok := a.rise(v.RowLockTime, st, stallMinLockTimeMS); ok {
			rowTime = &d
		}
	}
	if len(table)+len(row)+len(any) == 0 && rowTime == nil {
		return stallMatch{}, false
	}
	m := stallMatch{key: "lock_waits", score: 4}
	var why []string
	for _, f := range append(append(table, row...), any...) {
		m.metrics = append(m.metrics, f.name)
		if len(why) < 2 {
			why = append(why, fmt.Sprintf("%s averaged %s (peak %s) against %s normally", f.name, stallNum(f.d.mean), stallNum(f.d.peak), stallNum(f.d.ms.base)))
		}
	}
	if rowTime != nil {
		m.metrics = append(m.metrics, v.RowLockTime)
		why = append(why, fmt.Sprintf("row lock wait time was %s ms/s against %s ms/s normally", stallNum(rowTime.mean), stallNum(rowTime.ms.base)))
	}
	// Which states the waiting sessions were in (when the kind counts sessions by
	// state: MySQL), for the reader.
	var states []string
	for _, n := range a.names {
		if v.SessionStates != "" && strings.HasPrefix(n, v.SessionStates) && strings.Contains(n, "lock") {
			if d, ok := a.rise(n, st, stallMinLockSessions); ok {
				states = append(states, fmt.Sprintf("%q %s", strings.ReplaceAll(strings.TrimPrefix(n, v.SessionStates), "_", " "), stallNum(d.mean)))
			}
		}
	}
	if len(states) > 0 {
		why = append(why, "sessions by state: "+strings.Join(states, ", "))
	}
	tableLevel := len(table) > 0 && len(table) >= len(row)
	lead := fmt.Sprintf("Throughput fell from %s to %s at %s–%s while sessions waited for locks: %s.",
		stallNum(st.Baseline), stallNum(st.Mean), stallAt(st.Start), stallAt(st.End), strings.Join(why, "; "))
	var wording func(Attributor, bool, string) (string, string, []store.StallSetting)
	for _, r := range a.in.Rules {
		if r.LockWaits != nil {
			wording = r.LockWaits
		}
	}
	switch {
	case wording != nil:
		m.title, m.explanation, m.settings = wording(Attributor{a}, tableLevel, lead)
	case tableLevel:
		m.title = "table lock waits: sessions blocked by LOCK TABLE or DDL"
		m.explanation = lead + " A session held or queued for a table lock (LOCK TABLE, ALTER TABLE or other DDL, often itself waiting behind a long transaction) and every query on the table queued behind it. Set lock_timeout in the session that runs DDL so that it gives up instead of blocking everyone. `fathom snapshot` lists blocked sessions and what blocks them."
		m.settings = []store.StallSetting{a.setting("lock_timeout", "give up waiting for a lock after this long (set it for DDL sessions)")}
	default:
		m.title = "lock waits: sessions blocked by other sessions' locks"
		m.explanation = lead + " Sessions waited for locks held by other transactions (a long or bulk write, hot rows, explicit locks). `fathom snapshot` lists blocked sessions and what blocks them."
		m.settings = []store.StallSetting{a.setting("lock_timeout", "give up waiting after this long"), a.setting("deadlock_timeout", "when deadlock checks run")}
	}
	return m, true
}

// stallAnswers counts, in one sample, the server collectors that ran and those that got
// no answer (timed out) or failed.
type stallAnswers struct{ ran, bad int }

func (a *stallAttributor) answers() map[int]stallAnswers {
	if a.ans != nil {
		return a.ans
	}
	a.ans = map[int]stallAnswers{}
	for _, s := range a.in.Samples {
		if s.Source == "os" || s.Status == "skipped" {
			continue
		}
		x := a.ans[s.Interval]
		x.ran++
		if s.Status == "timeout" || s.Status == "failed" {
			x.bad++
		}
		a.ans[s.Interval] = x
	}
	return a.ans
}

// stallMostlyUnanswered: at least half of the server collectors that ran in the
// sample got no answer or failed (the documented rule: one slow answer is not a
// server that stopped answering).
func stallMostlyUnanswered(x stallAnswers) bool {
	return x.bad > 0 && float64(x.bad) >= stallMinUnanswered*float64(x.ran)
}

// stallWindow is what the sampler got from the server in a stall's window.
type stallWindow struct {
	hit, bad, ran   int       // intervals mostly unanswered; their unanswered and run collector calls
	missing         int       // intervals with no sample at all
	hitTPS, missTPS []float64 // throughput in the unanswered intervals, and in those not sampled
}

// window counts the unanswered and unsampled intervals in every sample index the
// window spans: a watch session's throughput has no point where the server's
// statement counter was not read.
func (a *stallAttributor) window(ans map[int]stallAnswers, w []int) stallWindow {
	var sw stallWindow
	for idx := w[0]; idx <= w[len(w)-1]; idx++ {
		x, ok := ans[idx]
		if !ok {
			sw.missing++ // no sample at all: the sampler was still waiting on the last one
			if v, ok := a.tp[idx]; ok {
				sw.missTPS = append(sw.missTPS, v)
			}
			continue
		}
		if !stallMostlyUnanswered(x) {
			continue
		}
		sw.hit++
		sw.bad += x.bad
		sw.ran += x.ran
		if v, ok := a.tp[idx]; ok {
			sw.hitTPS = append(sw.hitTPS, v)
		}
	}
	return sw
}

// baselineAnswers counts the baseline's samples (n), those mostly unanswered
// (base) and those missing altogether.
func (a *stallAttributor) baselineAnswers(ans map[int]stallAnswers) (n, base, missing int) {
	for _, idx := range a.baseline {
		x, ok := ans[idx]
		if !ok {
			missing++
			continue
		}
		n++
		if stallMostlyUnanswered(x) {
			base++
		}
	}
	return n, base, missing
}

// serverCPUOff says whether the server's processes (when it runs on this host) went
// off the CPU in the window: their lowest use under a tenth of their baseline.
func (a *stallAttributor) serverCPUOff(w []int) (off bool, lo, base float64) {
	if !a.in.Local {
		return false, 0, 0
	}
	if d, ok := a.during(collect.OSServerCPUPct, w); ok && d.ms.base > 0 {
		lo, _ := a.minimum(collect.OSServerCPUPct, w)
		return lo < 0.1*d.ms.base, lo, d.ms.base
	}
	return false, 0, 0
}

// failedExamples quotes up to two distinct errors of the server collectors that
// timed out or failed in the window.
func (a *stallAttributor) failedExamples(w []int) []string {
	var examples []string
	seen := map[string]bool{}
	for _, s := range a.in.Samples {
		if s.Source != "os" && (s.Status == "timeout" || s.Status == "failed") && s.Interval >= w[0] && s.Interval <= w[len(w)-1] && !seen[s.Error] && len(examples) < 2 {
			seen[s.Error] = true
			examples = append(examples, fmt.Sprintf("%q", s.Error))
		}
	}
	return examples
}

// clientsMeanwhile says, as measured, what the clients did while the server did not
// answer: nothing, next to nothing, or how much; "" when there is nothing to say.
func (a *stallAttributor) clientsMeanwhile(st *store.Stall, w []int, hitTPS []float64) string {
	if len(hitTPS) > 0 && slices.Max(hitTPS) < 0.05*st.Baseline {
		return "the clients neither completed nor gave up transactions: they were waiting for replies"
	}
	if k := a.stoppedIntervals(st, w); k > 0 {
		return fmt.Sprintf("the clients completed next to nothing in %d interval(s) of it: they were waiting for replies", k)
	}
	if len(hitTPS) > 0 {
		return fmt.Sprintf("the clients still completed %s–%s transactions/s in those intervals (%s normally): the server answered them, slowly, while the sampler's queries waited",
			stallNum(slices.Min(hitTPS)), stallNum(slices.Max(hitTPS)), stallNum(st.Baseline))
	}
	return ""
}

func stallUnresponsive(a *stallAttributor, st *store.Stall, w []int, reconnects int64) (stallMatch, bool) {
	ans := a.answers()
	if len(ans) == 0 {
		return stallMatch{}, false
	}
	sw := a.window(ans, w)
	n, base, baseMissing := a.baselineAnswers(ans)
	// A sample missing altogether (the sampler still waiting on the previous one) is
	// an unanswered one too, unless the sampler misses samples all the time and the
	// clients went on: clients that stopped were waiting for the server as well.
	stopped := a.clientsStopped(st, w)
	missingCounts := sw.missing > 0 && (stopped || float64(baseMissing) < stallMaxBaselineNoAns*float64(len(a.baseline)))
	if sw.hit == 0 && !missingCounts {
		return stallMatch{}, false
	}
	if n == 0 || float64(base)/float64(n) >= stallMaxBaselineNoAns {
		return stallMatch{}, false // the sampler struggles all the time: not this stall's sign
	}
	hitTPS := sw.hitTPS
	if missingCounts {
		hitTPS = append(hitTPS, sw.missTPS...)
	}
	// Corroboration: the server's processes off the CPU (when it runs on this host).
	cpuOff, cpuLo, cpuBase := a.serverCPUOff(w)
	// On a saturated client host the sampler itself may not have been scheduled in
	// time: when the clients still completed transactions in the unanswered intervals
	// (the server was answering them) and no sample went missing, the unanswered
	// samples say nothing about the server unless its processes were off the CPU.
	// The client-host pattern names such a dip instead.
	answeringClients := st.Throughput == "tps" && len(hitTPS) > 0 && slices.Max(hitTPS) >= 0.05*st.Baseline
	if h, ok := a.hostDuring(st); ok && h.Saturated && !cpuOff && !missingCounts && answeringClients {
		return stallMatch{}, false
	}
	examples := a.failedExamples(w)
	m := stallMatch{key: "server_unresponsive", score: 5, metrics: []string{}}
	m.title = "server stopped answering"
	var parts []string
	if sw.hit > 0 {
		parts = append(parts, fmt.Sprintf("fathom's sampler got no answer from half or more of the server's collectors in %d interval(s) of it (%d of %d server collector calls: %s)", sw.hit, sw.bad, sw.ran, strings.Join(examples, ", ")))
	}
	if missingCounts {
		parts = append(parts, fmt.Sprintf("could not sample at all in %d interval(s), still waiting for an answer", sw.missing))
	}
	why := []string{strings.Join(parts, " and ")}
	if cpuOff {
		m.score += 0.5
		m.metrics = append(m.metrics, collect.OSServerCPUPct)
		why = append(why, fmt.Sprintf("the server's processes used %.1f%% CPU at the lowest against %.0f%% normally", cpuLo, cpuBase))
	}
	if st.Throughput == "tps" && reconnects == 0 && st.Baseline > 0 {
		if c := a.clientsMeanwhile(st, w, hitTPS); c != "" {
			why = append(why, c)
		}
	}
	m.explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s because the server stopped answering: %s. A frozen or hung server (a stopped process, a stuck storage device, a paused VM, heavy swapping) or a network partition does this; look at the server's host and its log for that time.",
		stallNum(st.Baseline), stallNum(st.Mean), stallAt(st.Start), stallAt(st.End), strings.Join(why, "; "))
	return m, true
}

func stallRestart(a *stallAttributor, st *store.Stall, w []int, reconnects int64) (stallMatch, bool) {
	m := stallMatch{key: "restart"}
	if reconnects > 0 {
		m.score += 6
		m.metrics = append(m.metrics, "reconnects")
	}
	for _, n := range a.names {
		if strings.HasPrefix(n, "os.") {
			continue
		}
		if d, ok := a.during(n, w); ok && d.reset {
			m.score += 3
			m.metrics = append(m.metrics, n)
			break
		}
	}
	if m.score < 1 {
		return stallMatch{}, false
	}
	m.title = "server restart or statistics reset"
	m.explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s", stallNum(st.Baseline), stallNum(st.Mean), stallAt(st.Start), stallAt(st.End))
	if reconnects > 0 {
		m.explanation += fmt.Sprintf(" and clients reconnected %d times: the server restarted or dropped connections.", reconnects)
	} else {
		m.explanation += " and the server's counters restarted (a restart, FLUSH STATUS or pg_stat_reset())."
	}
	return m, true
}

// stallClientHost names a saturated client host: fathom's own clients may not have
// been scheduled. It is the weakest pattern: a server-side cause with material
// evidence comes first.
func stallClientHost(a *stallAttributor, st *store.Stall, w []int, _ int64) (stallMatch, bool) {
	h, ok := a.hostDuring(st)
	if !ok || !h.Saturated || a.clientsStopped(st, w) {
		return stallMatch{}, false
	}
	m := stallMatch{key: "client_host", score: 1, metrics: h.metrics()}
	m.title = "saturated client host: the dip may be fathom's own"
	m.explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s while the host fathom runs on was saturated: %s. fathom's clients compete for CPU there, so part or all of this dip may be the client's, not the server's. Run the client on a quieter host or with fewer clients before trusting it.",
		stallNum(st.Baseline), stallNum(st.Mean), stallAt(st.Start), stallAt(st.End), h.Text)
	return m, true
}

// clientsStopped: in at least one interval of the stall the clients completed under
// 5% of the baseline's transactions. Waiting for something (the server, a lock), not
// starved of CPU: a saturated host slows clients, it does not stop them.
func (a *stallAttributor) clientsStopped(st *store.Stall, w []int) bool {
	return a.stoppedIntervals(st, w) > 0
}

// stoppedIntervals counts the stall's intervals in which the clients completed under
// 5% of the baseline's transactions.
func (a *stallAttributor) stoppedIntervals(st *store.Stall, w []int) int {
	if st.Throughput != "tps" || st.Baseline <= 0 {
		return 0
	}
	k := 0
	for _, idx := range w {
		if v, ok := a.tp[idx]; ok && v < 0.05*st.Baseline {
			k++
		}
	}
	return k
}

// hostDuring is the host's load over a stall's own intervals.
func (a *stallAttributor) hostDuring(st *store.Stall) (hostLoadSummary, bool) {
	return hostLoad(a.in.Metrics, func(i int) bool { return i >= st.FirstInterval && i <= st.LastInterval })
}

// stallNothing explains a stall no pattern matched, plainly.
func stallNothing(st *store.Stall, evidence int) string {
	s := "No known cause matches this stall"
	if evidence > 0 {
		return s + ". The metrics below rose unusually and materially during it; they may point to the cause, or merely move with it."
	}
	return s + ", and no sampled metric rose unusually and materially during it. A cause outside what fathom samples (the client side, the network, another host) is possible."
}

func stallOSWriteback(a *stallAttributor, st *store.Stall, w []int, _ int64) (stallMatch, bool) {
	if !a.in.Local {
		return stallMatch{}, false
	}
	m := stallMatch{key: "os_writeback"}
	var why []string
	if d, ok := a.up(collect.OSMemWritebackBytes, w); ok && d.peak >= stallMinWriteback {
		m.score += 1.5
		m.metrics = append(m.metrics, collect.OSMemWritebackBytes)
		why = append(why, "pages under writeback went "+stallChange(d))
	}
	if v, ok := a.atLeast(collect.OSVmDirtyThresholdPct, w, 100); ok {
		m.score += 1.5
		m.metrics = append(m.metrics, collect.OSVmDirtyThresholdPct)
		why = append(why, fmt.Sprintf("dirty pages reached %.0f%% of the dirty_ratio threshold, where writers are throttled", v))
	} else if v, ok := a.atLeast(collect.OSVmDirtyBackgroundThresholdPct, w, 100); ok {
		m.score += 0.5
		m.metrics = append(m.metrics, collect.OSVmDirtyBackgroundThresholdPct)
		why = append(why, fmt.Sprintf("dirty pages reached %.0f%% of the background threshold, where the kernel starts writing back", v))
	}
	if d, ok := a.up(collect.OSDiskWriteBytes, w); ok {
		m.score += 0.5
		m.metrics = append(m.metrics, collect.OSDiskWriteBytes)
		why = append(why, "disk writes went "+stallChange(d))
	}
	for _, n := range []string{collect.OSDiskAwaitMs, collect.OSPressureIOFullPct, collect.OSCPUIowaitPct, collect.OSDiskUtilPct} {
		if d, ok := a.up(n, w); ok {
			m.score += 0.5
			m.metrics = append(m.metrics, n)
			if n == collect.OSDiskAwaitMs {
				why = append(why, "disk await went "+stallChange(d))
			}
		}
	}
	if d, ok := a.during(collect.OSMemDirtyBytes, w); ok && d.score <= -a.p.MinScore {
		m.score += 0.5
		m.metrics = append(m.metrics, collect.OSMemDirtyBytes)
		why = append(why, "dirty page cache fell "+stallChange(d))
	}
	// Material: a real amount under writeback, or writers at the dirty limit.
	if !a.has(m.metrics, collect.OSMemWritebackBytes) && !a.has(m.metrics, collect.OSVmDirtyThresholdPct) {
		return stallMatch{}, false
	}
	if m.score < 2 {
		return stallMatch{}, false
	}
	m.title = "OS dirty-page writeback"
	m.explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s while the kernel wrote dirty page cache to disk: %s. Large bursts of writeback saturate the disk and delay the database's own fsyncs. Lower vm.dirty_background_ratio (or set vm.dirty_background_bytes) so that writeback starts earlier and in smaller pieces; vm.dirty_ratio is where writers are made to wait.",
		stallNum(st.Baseline), stallNum(st.Mean), stallAt(st.Start), stallAt(st.End), strings.Join(why, "; "))
	m.settings = []store.StallSetting{
		a.setting("vm.dirty_background_ratio", "% of memory dirty before background writeback starts"),
		a.setting("vm.dirty_background_bytes", "the same in bytes (overrides the ratio when set)"),
		a.setting("vm.dirty_ratio", "% of memory dirty before writers are throttled"),
		a.setting("vm.dirty_bytes", "the same in bytes"),
		a.setting("vm.dirty_expire_centisecs", "age at which dirty pages are written back"),
	}
	return m, true
}
