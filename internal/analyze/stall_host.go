package analyze

import (
	"context"
	"fmt"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/store"
)

// hostLoadSummary says how loaded the host fathom ran on was (its OS collector samples that
// host): a saturated client host can make throughput dips that are fathom's own.
type hostLoadSummary struct {
	// Saturated: the median run queue was at least twice the CPUs, or the median
	// steal at least 10%.
	Saturated bool `json:"saturated"`
	// RunQueue is the median of runnable tasks (os.procs_running), CPUs the host's.
	RunQueue float64 `json:"run_queue"`
	CPUs     float64 `json:"cpus"`
	// StealPct is the median CPU steal, % of all CPUs.
	StealPct float64 `json:"steal_pct"`
	// Text says it in one line.
	Text string `json:"text"`
}

// Metric names the host load is read from (the os_cpu collector's).
const (
	metricRunQueue = collect.OSProcsRunning
	metricCPUs     = collect.OSCPUs
	metricSteal    = collect.OSCPUStealPct
)

func (h hostLoadSummary) metrics() []string { return []string{metricRunQueue, metricSteal} }

// hostLoad summarises the host's load over the intervals keep accepts; ok is false
// when the run queue was not sampled.
func hostLoad(ms []store.MetricSeries, keep func(int) bool) (hostLoadSummary, bool) {
	var rq, cpus, steal []float64
	for i := range ms {
		ser := &ms[i]
		var dst *[]float64
		switch ser.Name {
		case metricRunQueue:
			dst = &rq
		case metricCPUs:
			dst = &cpus
		case metricSteal:
			dst = &steal
		default:
			continue
		}
		for j := range ser.Points {
			if !keep(ser.Points[j].Interval) {
				continue
			}
			if y, ok := ser.Y(j); ok {
				*dst = append(*dst, y)
			}
		}
	}
	if len(rq) == 0 || len(cpus) == 0 {
		return hostLoadSummary{}, false
	}
	h := hostLoadSummary{RunQueue: stallMedian(rq), CPUs: stallMedian(cpus)}
	if len(steal) > 0 {
		h.StealPct = stallMedian(steal)
	}
	h.Saturated = h.RunQueue >= stallSaturatedRunQ*h.CPUs || h.StealPct >= stallSaturatedSteal
	h.Text = fmt.Sprintf("a median of %.0f runnable tasks on %.0f CPUs", h.RunQueue, h.CPUs)
	if h.StealPct >= 1 {
		h.Text += fmt.Sprintf(", %.0f%% CPU steal", h.StealPct)
	}
	return h, true
}

// RunHostLoad is a stored run's client-host load over its measured intervals (warm-up
// left out); ok is false when the run has no OS samples.
func RunHostLoad(ctx context.Context, st store.Store, run *store.Run) (hostLoadSummary, bool, error) {
	ms, err := st.MetricSeries(ctx, run.ID, metricRunQueue, metricCPUs, metricSteal)
	if err != nil || len(ms) == 0 {
		return hostLoadSummary{}, false, err
	}
	warm := map[int]bool{}
	if ivs, err := st.EncodedIntervals(ctx, run); err == nil {
		for _, iv := range ivs {
			if iv.Warmup {
				warm[iv.Index] = true
			}
		}
	}
	h, ok := hostLoad(ms, func(i int) bool { return i >= 0 && !warm[i] })
	return h, ok, nil
}

// Warning is the line to print when the host was saturated ("" when not), after a
// benchmark: its clients ran on this host.
func (h hostLoadSummary) Warning() string {
	if !h.Saturated {
		return ""
	}
	return fmt.Sprintf("client host saturated: %s; throughput dips and stalls may be fathom's own (its clients not scheduled), not the server's", h.Text)
}

// WatchWarning is the line for a watch session, which has no clients: what a
// saturated host may distort is the sampling ("" when not saturated).
func (h hostLoadSummary) WatchWarning() string {
	if !h.Saturated {
		return ""
	}
	return fmt.Sprintf("host saturated: %s; samples may be late or missed (fathom's sampler not scheduled), and a server on this host is slowed by the same load", h.Text)
}
