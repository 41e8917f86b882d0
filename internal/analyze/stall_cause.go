package analyze

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
)

// Stall attribution. Each metric is compared between the stall (with the interval
// before it, where causes often begin) and the run's own baseline (intervals away from
// every stall) with a robust z-score: the distance of the stall's mean from the
// baseline median, in units of the baseline's scaled median absolute deviation.
// Metrics that merely follow throughput down (commits, rows, bytes sent) are not
// evidence. Known patterns are then matched on the evidence.

// stallMaxScore caps z-scores: a metric that is constant in the baseline and moves in the
// stall is as unusual as it gets, and an infinite score would tell nothing more.
const stallMaxScore = 99

type stallMetric struct {
	ser      *store.MetricSeries
	y        map[int]float64
	base     float64 // baseline median
	scale    float64 // robust spread of the baseline
	follows  bool    // moves with throughput
	constant bool    // never changes outside the stall
}

type stallAttributor struct {
	in       StallInput
	p        StallParams
	metrics  map[string]*stallMetric
	names    []string
	baseline []int
}

func newStallAttributor(in StallInput, p StallParams, baseline []int, tp map[int]float64) *stallAttributor {
	a := &stallAttributor{in: in, p: p, metrics: map[string]*stallMetric{}, baseline: baseline}
	for i := range in.Metrics {
		ser := &in.Metrics[i]
		y := ser.ByInterval()
		var bv []float64
		for _, idx := range baseline {
			if v, ok := y[idx]; ok {
				bv = append(bv, v)
			}
		}
		ms := &stallMetric{ser: ser, y: y}
		if len(bv) > 0 {
			ms.base, ms.scale = stallRobust(bv)
			ms.constant = bv[0] == bv[len(bv)-1] && ms.scale == 0
		}
		ms.follows = stallCorrelation(y, tp) > 0.6
		a.metrics[ser.Name] = ms
		a.names = append(a.names, ser.Name)
	}
	sort.Strings(a.names)
	return a
}

// stallRobust returns the median and 1.4826 × MAD of v, falling back to the mean
// absolute deviation when more than half the values are equal, and to 0 for a
// constant series.
func stallRobust(v []float64) (med, scale float64) {
	s := append([]float64(nil), v...)
	med = stallMedian(s)
	dev := make([]float64, len(v))
	var sum float64
	for i, x := range v {
		dev[i] = math.Abs(x - med)
		sum += dev[i]
	}
	scale = 1.4826 * stallMedian(dev)
	if scale == 0 {
		scale = sum / float64(len(v))
	}
	return med, scale
}

// stallCorrelation is Pearson's r between a metric and throughput over the intervals both
// have (0 when undefined).
func stallCorrelation(y, tp map[int]float64) float64 {
	var xs, ys []float64
	for idx, t := range tp {
		if v, ok := y[idx]; ok {
			xs = append(xs, t)
			ys = append(ys, v)
		}
	}
	n := float64(len(xs))
	if n < 5 {
		return 0
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// stallDuring summarises a metric over a stall window.
type stallDuring struct {
	ms    *stallMetric
	mean  float64
	peak  float64 // the extreme in the direction of the change
	max   float64
	score float64 // signed robust z
	n     int
	reset bool
}

func (a *stallAttributor) during(name string, window []int) (stallDuring, bool) {
	ms := a.metrics[name]
	if ms == nil {
		return stallDuring{}, false
	}
	d := stallDuring{ms: ms, max: math.Inf(-1)}
	var vals []float64
	for _, idx := range window {
		if v, ok := ms.y[idx]; ok {
			vals = append(vals, v)
			if v > d.max {
				d.max = v
			}
		}
	}
	for i := range ms.ser.Points {
		pt := &ms.ser.Points[i]
		if pt.Reset && pt.Interval >= window[0] && pt.Interval <= window[len(window)-1] {
			d.reset = true
		}
	}
	if len(vals) == 0 {
		return d, false
	}
	d.n = len(vals)
	for _, v := range vals {
		d.mean += v
	}
	d.mean /= float64(len(vals))
	d.peak = vals[0]
	for _, v := range vals {
		if d.mean >= ms.base && v > d.peak || d.mean < ms.base && v < d.peak {
			d.peak = v
		}
	}
	diff := d.mean - ms.base
	peakDiff := d.peak - ms.base
	scale := ms.scale
	if scale == 0 {
		scale = math.Max(math.Abs(ms.base)*0.05, 1e-9)
	}
	z := diff / scale
	if pz := 0.75 * peakDiff / scale; math.Abs(pz) > math.Abs(z) {
		z = pz
	}
	d.score = math.Max(-stallMaxScore, math.Min(stallMaxScore, z))
	return d, true
}

// stallIgnored are metrics that are effects of any slowdown, or settings.
func stallIgnored(name string) bool {
	switch {
	case strings.HasSuffix(name, "idle_pct"), strings.HasPrefix(name, "os.vm.dirty_ratio"),
		strings.HasPrefix(name, "os.vm.dirty_background_ratio"), strings.HasSuffix(name, "_setting"),
		strings.HasSuffix(name, "_centisecs"), name == "os.cpus", name == "os.mem.total_bytes",
		name == "pg.max_wal_size_bytes", name == "mysql.innodb.redo_capacity_bytes",
		strings.HasPrefix(name, "mysql.Uptime"), name == "pg.checkpoint_age_seconds",
		name == "os.fathom.cpu_pct", strings.HasPrefix(name, "mysql.Innodb_buffer_pool_pages_total"),
		name == "mysql.Innodb_checkpoint_max_age", name == "mysql.Innodb_page_size":
		return true
	}
	return false
}

// evidence ranks the metrics that changed most unusually in the window.
func (a *stallAttributor) evidence(window []int) []store.StallEvidence {
	var out []store.StallEvidence
	for _, n := range a.names {
		if stallIgnored(n) {
			continue
		}
		d, ok := a.during(n, window)
		if !ok {
			continue
		}
		// Less work done is the stall itself, not its cause.
		if d.ms.follows && d.score < 0 {
			continue
		}
		if math.Abs(d.score) < a.p.MinScore && !d.reset {
			continue
		}
		out = append(out, store.StallEvidence{
			Metric: n, Kind: d.ms.ser.Kind, Unit: d.ms.ser.Unit,
			Baseline: stallSig(d.ms.base), During: stallSig(d.mean), Peak: stallSig(d.peak),
			Score: math.Round(d.score*10) / 10, Reset: d.reset,
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return math.Abs(out[i].Score) > math.Abs(out[j].Score) })
	return out
}

// stallSig rounds to 4 significant digits for storage and display.
func stallSig(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	mag := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*mag) / mag
}

// signal tests used by the patterns.

// up reports a metric clearly above its baseline during the window.
func (a *stallAttributor) up(name string, window []int) (stallDuring, bool) {
	d, ok := a.during(name, window)
	return d, ok && d.score >= a.p.MinScore && d.mean > d.ms.base
}

// happened reports a counter that moved (its rate was positive) in the window.
func (a *stallAttributor) happened(name string, window []int) bool {
	ms := a.metrics[name]
	if ms == nil {
		return false
	}
	for _, idx := range window {
		if v, ok := ms.y[idx]; ok && v > 0 {
			return true
		}
	}
	return false
}

// atLeast reports a gauge reaching v somewhere in the window, above its baseline
// median (a level that is always that high explains nothing).
func (a *stallAttributor) atLeast(name string, window []int, v float64) (float64, bool) {
	ms := a.metrics[name]
	if ms == nil {
		return 0, false
	}
	best, ok := math.Inf(-1), false
	for _, idx := range window {
		if x, has := ms.y[idx]; has && x >= v && x > best && (x > ms.base*1.05 || ms.base < v) {
			best, ok = x, true
		}
	}
	return best, ok
}

// minimum is a gauge's lowest value in the window.
func (a *stallAttributor) minimum(name string, window []int) (float64, bool) {
	ms := a.metrics[name]
	if ms == nil {
		return 0, false
	}
	lo, ok := math.Inf(1), false
	for _, idx := range window {
		if x, has := ms.y[idx]; has && x < lo {
			lo, ok = x, true
		}
	}
	return lo, ok
}

func (a *stallAttributor) has(list []string, name string) bool {
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}

// baselineShare is the share of baseline intervals in which a counter moved.
func (a *stallAttributor) baselineShare(name string) float64 {
	ms := a.metrics[name]
	if ms == nil {
		return 0
	}
	n, moved := 0, 0
	for _, idx := range a.baseline {
		if v, ok := ms.y[idx]; ok {
			n++
			if v > 0 {
				moved++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(moved) / float64(n)
}

// stallMatch is one pattern's verdict on a stall.
type stallMatch struct {
	key, title, explanation string
	score                   float64
	metrics                 []string
	settings                []store.StallSetting
}

func (a *stallAttributor) setting(name, hint string) store.StallSetting {
	return store.StallSetting{Name: name, Value: a.in.Settings[name], Hint: hint}
}

// explain fills a stall's evidence and cause.
func (a *stallAttributor) explain(st *store.Stall, window []int, reconnects int64) {
	st.Evidence = a.evidence(window)
	defer func() {
		if len(st.Evidence) > a.p.Evidence {
			st.Evidence = st.Evidence[:a.p.Evidence]
		}
	}()
	var ms []stallMatch
	for _, pat := range stallPatterns {
		if m, ok := pat(a, st, window, reconnects); ok {
			ms = append(ms, m)
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].score > ms[j].score })
	for _, m := range ms {
		st.Causes = append(st.Causes, store.StallCause{Key: m.key, Title: m.title, Score: math.Round(m.score*10) / 10, Metrics: m.metrics})
	}
	if len(ms) == 0 {
		st.Explanation = "No known pattern matches"
		if len(st.Evidence) > 0 {
			st.Explanation += "; the metrics below changed most unusually during it"
		} else {
			st.Explanation += " and no metric changed unusually (was anything sampled? a client-side pause or a busy host can do this)"
		}
		st.Explanation += "."
		return
	}
	best := ms[0]
	st.Cause, st.Title, st.Explanation, st.Settings = best.key, best.title, best.explanation, best.settings
	// The cause's own metrics first, then the rest by score.
	sort.SliceStable(st.Evidence, func(i, j int) bool {
		bi, bj := a.has(best.metrics, st.Evidence[i].Metric), a.has(best.metrics, st.Evidence[j].Metric)
		return bi && !bj
	})
	if len(ms) > 1 {
		var also []string
		for _, m := range ms[1:] {
			also = append(also, m.title)
		}
		st.Explanation += " Also matching: " + strings.Join(also, "; ") + "."
	}
}

// stallPatterns are the known causes, each a function deciding whether it matches.
var stallPatterns = []func(a *stallAttributor, st *store.Stall, window []int, reconnects int64) (stallMatch, bool){
	stallPGCheckpoint, stallInnoDBCheckpoint, stallBinlogRotation, stallOSWriteback, stallLockWaits, stallAutovacuum, stallWALFlush, stallRestart,
}

func stallRate(v float64, unit string) string {
	switch unit {
	case "bytes":
		return stallBytes(v) + "/s"
	}
	if unit == "" {
		return fmt.Sprintf("%s/s", stallNum(v))
	}
	return fmt.Sprintf("%s %s/s", stallNum(v), unit)
}

func stallLevel(v float64, unit string) string {
	switch unit {
	case "bytes":
		return stallBytes(v)
	case "%":
		return fmt.Sprintf("%.0f%%", v)
	}
	if unit == "" {
		return stallNum(v)
	}
	return stallNum(v) + " " + unit
}

func stallNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

func stallBytes(v float64) string {
	for _, u := range []struct {
		s string
		n float64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}} {
		if math.Abs(v) >= u.n {
			return fmt.Sprintf("%.1f %s", v/u.n, u.s)
		}
	}
	return fmt.Sprintf("%.0f B", v)
}

// stallChange describes a metric's move: "from 120/s to 5,400/s".
func stallChange(d stallDuring) string {
	if d.ms.ser.IsCounter() {
		return fmt.Sprintf("from %s to %s", stallRate(d.ms.base, d.ms.ser.Unit), stallRate(d.mean, d.ms.ser.Unit))
	}
	return fmt.Sprintf("from %s to %s", stallLevel(d.ms.base, d.ms.ser.Unit), stallLevel(d.peak, d.ms.ser.Unit))
}

func stallAt(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

func stallPGCheckpoint(a *stallAttributor, st *store.Stall, w []int, _ int64) (stallMatch, bool) {
	if a.in.Kind != "postgres" {
		return stallMatch{}, false
	}
	m := stallMatch{key: "checkpoint"}
	var why []string
	req := a.happened("pg.checkpoints_req", w)
	timed := a.happened("pg.checkpoints_timed", w)
	if req || timed {
		// A checkpoint that starts in nearly every interval explains nothing.
		share := math.Max(a.baselineShare("pg.checkpoints_req"), a.baselineShare("pg.checkpoints_timed"))
		m.score += 2 * (1 - share)
		if req {
			m.metrics = append(m.metrics, "pg.checkpoints_req")
			why = append(why, "a checkpoint was requested because the WAL written since the last one reached max_wal_size")
		} else {
			m.metrics = append(m.metrics, "pg.checkpoints_timed")
			why = append(why, "a timed checkpoint (checkpoint_timeout) started")
		}
	}
	if d, ok := a.up("pg.checkpointer_busy", w); ok {
		m.score += 1
		m.metrics = append(m.metrics, "pg.checkpointer_busy")
		_ = d
		if len(why) == 0 {
			why = append(why, "the checkpointer was writing")
		}
	}
	if d, ok := a.up("pg.buffers_checkpoint", w); ok {
		m.score += 1
		m.metrics = append(m.metrics, "pg.buffers_checkpoint")
		why = append(why, "buffers written by the checkpoint went "+stallChange(d))
	}
	for _, n := range []string{"pg.checkpoint_write_time", "pg.checkpoint_sync_time"} {
		if _, ok := a.up(n, w); ok {
			m.score += 0.5
			m.metrics = append(m.metrics, n)
		}
	}
	if d, ok := a.up("pg.wal_fpi", w); ok {
		m.score += 1
		m.metrics = append(m.metrics, "pg.wal_fpi")
		why = append(why, "full-page images in WAL went "+stallChange(d)+" (after a checkpoint the first change to each page writes the whole page)")
	}
	// A checkpoint that began shortly before the window (its full-page images are what
	// slow the stall down) shows as a young checkpoint age.
	if !req && !timed {
		if age, ok := a.minimum("pg.checkpoint_age_seconds", w); ok && age < 2*(st.End-st.Start).Seconds()+5 {
			if _, fpi := a.up("pg.wal_fpi", w); fpi || a.has(m.metrics, "pg.buffers_checkpoint") {
				m.score += 1.5
				m.metrics = append(m.metrics, "pg.checkpoint_age_seconds")
				why = append(why, fmt.Sprintf("a checkpoint had started %.0fs before", age))
			}
		}
	}
	if v, ok := a.atLeast("pg.wal_since_checkpoint_pct", w, 70); ok {
		m.score += 0.5
		m.metrics = append(m.metrics, "pg.wal_since_checkpoint_pct")
		why = append(why, fmt.Sprintf("WAL since the last checkpoint reached %.0f%% of max_wal_size", v))
	}
	if m.score < 2 || !(req || timed || len(m.metrics) >= 2) {
		return stallMatch{}, false
	}
	m.title = "PostgreSQL checkpoint"
	switch {
	case req:
		m.title += " (requested: WAL reached max_wal_size)"
	case timed:
		m.title += " (timed: checkpoint_timeout)"
	}
	m.explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s: %s. Checkpoints write every dirty buffer and fsync the data files, and the full-page images after them multiply WAL volume. Space them out: raise max_wal_size so that checkpoints are timed rather than requested, lengthen checkpoint_timeout, keep checkpoint_completion_target near 0.9; wal_compression shrinks full-page images.",
		stallNum(st.Baseline), stallNum(st.Mean), stallAt(st.Start), stallAt(st.End), strings.Join(why, "; "))
	m.settings = []store.StallSetting{
		a.setting("max_wal_size", "WAL between requested checkpoints"),
		a.setting("checkpoint_timeout", "time between timed checkpoints"),
		a.setting("checkpoint_completion_target", "share of the interval the writes are spread over"),
		a.setting("full_page_writes", "whole pages in WAL after each checkpoint"),
		a.setting("wal_compression", "compresses those full-page images"),
		a.setting("shared_buffers", "how much can be dirty"),
	}
	return m, true
}

func stallInnoDBCheckpoint(a *stallAttributor, st *store.Stall, w []int, _ int64) (stallMatch, bool) {
	if a.in.Kind != "mysql" {
		return stallMatch{}, false
	}
	m := stallMatch{key: "innodb_checkpoint"}
	var why []string
	for _, n := range []string{"mysql.innodb.checkpoint_age_capacity_pct", "mysql.innodb.checkpoint_age_pct"} {
		if v, ok := a.atLeast(n, w, 75); ok {
			m.score += 1.5
			m.metrics = append(m.metrics, n)
			why = append(why, fmt.Sprintf("the checkpoint age reached %.0f%% of the redo log's capacity (InnoDB flushes furiously from about 75%% and stalls writers near the limit)", v))
			break
		}
	}
	if d, ok := a.up("mysql.Innodb_buffer_pool_pages_flushed", w); ok {
		m.score += 1
		m.metrics = append(m.metrics, "mysql.Innodb_buffer_pool_pages_flushed")
		why = append(why, "pages flushed went "+stallChange(d))
	}
	for _, n := range []string{"mysql.Innodb_log_waits", "mysql.Innodb_buffer_pool_wait_free"} {
		if a.happened(n, w) && a.baselineShare(n) < 0.5 {
			m.score += 1
			m.metrics = append(m.metrics, n)
			why = append(why, strings.TrimPrefix(n, "mysql.")+" increased")
		}
	}
	if _, ok := a.up("mysql.Innodb_data_pending_fsyncs", w); ok {
		m.score += 0.5
		m.metrics = append(m.metrics, "mysql.Innodb_data_pending_fsyncs")
	}
	if m.score < 2 {
		return stallMatch{}, false
	}
	m.title = "InnoDB checkpoint: flushing to keep the checkpoint age within the redo log"
	m.explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s: %s. When the redo log fills faster than the page cleaners flush, InnoDB flushes dirty pages in bursts and writers wait. A larger redo log (innodb_log_file_size, innodb_redo_log_capacity on MySQL 8.0.30+) and an innodb_io_capacity that matches the storage smooth this out.",
		stallNum(st.Baseline), stallNum(st.Mean), stallAt(st.Start), stallAt(st.End), strings.Join(why, "; "))
	m.settings = []store.StallSetting{
		a.setting("innodb_log_file_size", "redo log size (× innodb_log_files_in_group before MySQL 8.0.30)"),
		a.setting("innodb_redo_log_capacity", "redo log size on MySQL 8.0.30+"),
		a.setting("innodb_io_capacity", "background flushing rate"),
		a.setting("innodb_io_capacity_max", "flushing rate when behind"),
		a.setting("innodb_max_dirty_pages_pct", "dirty pages allowed"),
		a.setting("innodb_adaptive_flushing", "flush ahead of the redo log"),
	}
	return m, true
}

func stallBinlogRotation(a *stallAttributor, st *store.Stall, w []int, _ int64) (stallMatch, bool) {
	if !a.happened("mysql.binlog.file_seq", w) || a.baselineShare("mysql.binlog.file_seq") > 0.5 {
		return stallMatch{}, false
	}
	m := stallMatch{key: "binlog_rotation", score: 2.5, metrics: []string{"mysql.binlog.file_seq"}}
	m.title = "binary log rotation"
	m.explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s as the binary log rotated to a new file: the old file is synced and closed while commits wait. Fewer, larger rotations (max_binlog_size) or a less strict sync_binlog reduce these pauses.",
		stallNum(st.Baseline), stallNum(st.Mean), stallAt(st.Start), stallAt(st.End))
	m.settings = []store.StallSetting{
		a.setting("max_binlog_size", "size at which the binary log rotates"),
		a.setting("sync_binlog", "how often the binary log is fsynced"),
	}
	return m, true
}

func stallOSWriteback(a *stallAttributor, st *store.Stall, w []int, _ int64) (stallMatch, bool) {
	if !a.in.Local {
		return stallMatch{}, false
	}
	m := stallMatch{key: "os_writeback"}
	var why []string
	if d, ok := a.up("os.mem.writeback_bytes", w); ok && d.peak > 1<<20 {
		m.score += 1.5
		m.metrics = append(m.metrics, "os.mem.writeback_bytes")
		why = append(why, "pages under writeback went "+stallChange(d))
	}
	if v, ok := a.atLeast("os.vm.dirty_threshold_pct", w, 100); ok {
		m.score += 1.5
		m.metrics = append(m.metrics, "os.vm.dirty_threshold_pct")
		why = append(why, fmt.Sprintf("dirty pages reached %.0f%% of the dirty_ratio threshold, where writers are throttled", v))
	} else if v, ok := a.atLeast("os.vm.dirty_background_threshold_pct", w, 100); ok {
		m.score += 0.5
		m.metrics = append(m.metrics, "os.vm.dirty_background_threshold_pct")
		why = append(why, fmt.Sprintf("dirty pages reached %.0f%% of the background threshold, where the kernel starts writing back", v))
	}
	if d, ok := a.up("os.disk.write_bytes", w); ok {
		m.score += 0.5
		m.metrics = append(m.metrics, "os.disk.write_bytes")
		why = append(why, "disk writes went "+stallChange(d))
	}
	for _, n := range []string{"os.disk.await_ms", "os.pressure.io_full_pct", "os.cpu.iowait_pct", "os.disk.util_pct"} {
		if d, ok := a.up(n, w); ok {
			m.score += 0.5
			m.metrics = append(m.metrics, n)
			if n == "os.disk.await_ms" {
				why = append(why, "disk await went "+stallChange(d))
			}
		}
	}
	if d, ok := a.during("os.mem.dirty_bytes", w); ok && d.score <= -a.p.MinScore {
		m.score += 0.5
		m.metrics = append(m.metrics, "os.mem.dirty_bytes")
		why = append(why, "dirty page cache fell "+stallChange(d))
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

func stallLockWaits(a *stallAttributor, st *store.Stall, w []int, _ int64) (stallMatch, bool) {
	m := stallMatch{key: "lock_waits"}
	var why []string
	for _, n := range []string{"pg.lock_waits", "pg.blocked_sessions", "pg.waiting.lock", "mysql.Innodb_row_lock_current_waits",
		"mysql.threads.waiting_for_lock", "mysql.innodb.transactions_in_lock_wait", "mysql.Innodb_row_lock_time", "mysql.Innodb_row_lock_waits"} {
		if d, ok := a.up(n, w); ok && d.peak >= 1 {
			m.score += 1
			m.metrics = append(m.metrics, n)
			if len(why) < 2 {
				why = append(why, n+" went "+stallChange(d))
			}
		}
	}
	if m.score < 1 {
		return stallMatch{}, false
	}
	m.score += 1
	m.title = "lock waits: sessions blocked by other sessions' locks"
	m.explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s while sessions waited for locks: %s. Find the blocker (a long transaction, DDL, an explicit LOCK): `fathom snapshot` lists blocked sessions and what blocks them.",
		stallNum(st.Baseline), stallNum(st.Mean), stallAt(st.Start), stallAt(st.End), strings.Join(why, "; "))
	if a.in.Kind == "postgres" {
		m.settings = []store.StallSetting{a.setting("lock_timeout", "give up waiting after this long"), a.setting("deadlock_timeout", "when deadlock checks run")}
	} else {
		m.settings = []store.StallSetting{a.setting("innodb_lock_wait_timeout", "give up waiting after this long")}
	}
	return m, true
}

func stallAutovacuum(a *stallAttributor, st *store.Stall, w []int, _ int64) (stallMatch, bool) {
	m := stallMatch{key: "autovacuum"}
	for _, n := range []string{"pg.autovacuum_workers", "pg.vacuums"} {
		if d, ok := a.up(n, w); ok && d.peak >= 1 {
			m.score += 1.5
			m.metrics = append(m.metrics, n)
		}
	}
	if m.score < 1.5 {
		return stallMatch{}, false
	}
	m.title = "autovacuum"
	m.explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s while autovacuum workers ran: their reads and writes compete with the workload. Throttle them (autovacuum_vacuum_cost_limit, autovacuum_vacuum_cost_delay), or vacuum big tables at quiet times.",
		stallNum(st.Baseline), stallNum(st.Mean), stallAt(st.Start), stallAt(st.End))
	m.settings = []store.StallSetting{
		a.setting("autovacuum_vacuum_cost_limit", "work between pauses (-1: vacuum_cost_limit)"),
		a.setting("autovacuum_vacuum_cost_delay", "the pause"),
		a.setting("autovacuum_max_workers", "workers at once"),
	}
	return m, true
}

func stallWALFlush(a *stallAttributor, st *store.Stall, w []int, _ int64) (stallMatch, bool) {
	if a.in.Kind != "postgres" {
		return stallMatch{}, false
	}
	m := stallMatch{key: "wal_flush"}
	for _, n := range []string{"pg.wait_event.lwlock.walwrite", "pg.wait_event.io.walsync", "pg.wait_event.io.walwrite", "pg.wal_buffers_full", "pg.wal_sync_time", "pg.wal_write_time"} {
		if _, ok := a.up(n, w); ok {
			m.score += 0.75
			m.metrics = append(m.metrics, n)
		}
	}
	if m.score < 1.5 {
		return stallMatch{}, false
	}
	m.title = "WAL write and flush waits"
	m.explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s while sessions waited to write or flush WAL. A slow WAL device, a small wal_buffers or bursts of WAL (full-page images after checkpoints, bulk writes) cause this.",
		stallNum(st.Baseline), stallNum(st.Mean), stallAt(st.Start), stallAt(st.End))
	m.settings = []store.StallSetting{
		a.setting("wal_buffers", "WAL kept in memory before it must be written"),
		a.setting("wal_sync_method", "how WAL is flushed"),
		a.setting("synchronous_commit", "whether commits wait for the flush"),
	}
	return m, true
}

func stallRestart(a *stallAttributor, st *store.Stall, w []int, reconnects int64) (stallMatch, bool) {
	m := stallMatch{key: "restart"}
	if reconnects > 0 {
		m.score += 2
		m.metrics = append(m.metrics, "reconnects")
	}
	for _, n := range a.names {
		if strings.HasPrefix(n, "os.") {
			continue
		}
		if d, ok := a.during(n, w); ok && d.reset {
			m.score += 1
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
