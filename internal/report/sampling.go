package report

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/store"
)

// WriteStallList prints one line per stall of a run just finished (fathom run, watch) (or that there were none).
func WriteStallList(w io.Writer, stalls []store.Stall, runID int64) {
	if len(stalls) == 0 {
		fmt.Fprintln(w, "stalls: none (throughput never fell below the threshold of its baseline)")
		return
	}
	fmt.Fprintf(w, "stalls: %d (details: fathom show %d)\n", len(stalls), runID)
	for _, s := range stalls {
		cause := s.Title
		if cause == "" {
			cause = "no known cause"
		}
		fmt.Fprintf(w, "  #%d %s–%s %s %s → %s (-%.0f%%): %s\n", s.Number, fmtSecs(s.Start), fmtSecs(s.End), s.Throughput,
			FormatNumber(s.Baseline), FormatNumber(s.Mean), s.Depth*100, cause)
	}
}

func fmtSecs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// writeSampling prints what show adds for a sampled run: the collectors' record, the
// key metrics over the measured intervals, and the stalls with their explanations.
// keyMetrics are the run's kind's key metrics then the host's (KindFigures).
func writeSampling(ctx context.Context, w io.Writer, st store.Store, run *store.Run, keyMetrics []string) error {
	src, err := st.SampleSource(ctx, run.ID)
	if err != nil {
		return nil // not sampled (--no-collect, or a run from before sampling existed)
	}
	fmt.Fprintln(w)
	srv := src.Server
	fmt.Fprintf(w, "Server and OS samples (every %s; %s)\n", src.Interval, sampleWhere(src))
	crs, err := st.Collectors(ctx, run.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  collectors: %d", len(crs))
	if src.Skipped > 0 {
		fmt.Fprintf(w, ", %d boundaries skipped (sampling could not keep up)", src.Skipped)
	}
	fmt.Fprintln(w)
	for _, b := range collectorProblems(crs) {
		fmt.Fprintf(w, "  ! %s\n", b)
	}
	for _, n := range srv.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if h, ok, err := analyze.RunHostLoad(ctx, st, run); err == nil && ok && h.Saturated {
		fmt.Fprintf(w, "  ! %s\n", h.Warning())
	}
	if err := writeKeyMetrics(ctx, w, st, run, keyMetrics); err != nil {
		return err
	}
	stalls, _, analyzed, err := st.Stalls(ctx, run.ID)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	if !analyzed {
		fmt.Fprintln(w, "stalls: not analysed yet (the run may still be going)")
		return nil
	}
	WriteStalls(w, stalls, run.ID)
	return nil
}

// sampleWhere says where the server runs, as far as the sampler knows, and so what
// the OS metrics describe.
func sampleWhere(src *store.SampleSource) string {
	srv := src.Server
	where := "remote server: OS metrics describe this host only"
	if srv.OSMetrics == collect.OSMetricsUnsupported && !srv.Local {
		where = "no OS metrics here, so whether the server runs on this host is not known"
	}
	if srv.Local {
		where = "server on this host"
		if len(srv.Devices) > 0 {
			where += fmt.Sprintf(", disk %s (%s)", strings.Join(srv.Devices, "+"), srv.DiskScope)
		}
	}
	return where
}

// collectorProblems is a line for each collector that failed or was skipped, and for
// each whose counters reset.
func collectorProblems(crs []store.CollectorRun) []string {
	var bad []string
	for _, c := range crs {
		switch {
		case c.Failed+c.Timeouts > 0:
			bad = append(bad, fmt.Sprintf("%s failed %d/%d (%s)", c.Collector, c.Failed+c.Timeouts, c.OK+c.Failed+c.Timeouts, c.LastError))
		case c.OK == 0 && c.Skipped > 0:
			bad = append(bad, fmt.Sprintf("%s skipped (%s)", c.Collector, c.LastError))
		}
		if c.Resets > 0 {
			bad = append(bad, fmt.Sprintf("%s: counters reset %d time(s), no rate shown there", c.Collector, c.Resets))
		}
	}
	return bad
}

// writeKeyMetrics writes the median, p95 and max of the key metrics over the measured
// intervals (those that stay zero are left out).
func writeKeyMetrics(ctx context.Context, w io.Writer, st store.Store, run *store.Run, keyMetrics []string) error {
	ms, err := st.MetricSeries(ctx, run.ID, keyMetrics...)
	if err != nil {
		return err
	}
	warm := map[int]bool{}
	if ivs, err := st.EncodedIntervals(ctx, run); err == nil {
		for _, iv := range ivs {
			if iv.Warmup {
				warm[iv.Index] = true
			}
		}
	}
	if len(ms) > 0 {
		byName := map[string]*store.MetricSeries{}
		for i := range ms {
			byName[ms[i].Name] = &ms[i]
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  metric\tmedian\tp95\tmax\t")
		for _, name := range keyMetrics {
			ser := byName[name]
			if ser == nil {
				continue
			}
			ys := measuredValues(ser, warm)
			if len(ys) == 0 {
				continue
			}
			sort.Float64s(ys)
			if ys[0] == 0 && ys[len(ys)-1] == 0 {
				continue
			}
			label := name
			if ser.IsCounter() && ser.Unit != "%" {
				label += "/s"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\n", label, FormatValue(analyze.QuantileSorted(ys, 0.5), ser.Unit),
				FormatValue(analyze.QuantileSorted(ys, 0.95), ser.Unit), FormatValue(ys[len(ys)-1], ser.Unit))
		}
		tw.Flush()
	}
	return nil
}

// measuredValues is a series' values (rates for a counter) in the measured intervals.
func measuredValues(ser *store.MetricSeries, warm map[int]bool) []float64 {
	var ys []float64
	for i := range ser.Points {
		if warm[ser.Points[i].Interval] || ser.Points[i].Interval < 0 {
			continue
		}
		if y, ok := ser.Y(i); ok {
			ys = append(ys, y)
		}
	}
	return ys
}

// foldClientHost separates the stalls that only a saturated client host explains (no
// server-side cause matched them) from the rest: on such a host they are many and
// say one thing, so they are shown as one run-level warning with their spans.
func foldClientHost(stalls []store.Stall) (kept, folded []store.Stall) {
	for _, s := range stalls {
		if s.Cause == "client_host" && len(s.Causes) == 1 {
			folded = append(folded, s)
		} else {
			kept = append(kept, s)
		}
	}
	return kept, folded
}

// clientHostNote is the one line that stands for the folded stalls ("" for none).
func clientHostNote(folded []store.Stall) string {
	if len(folded) == 0 {
		return ""
	}
	var spans []string
	lost := 0.0
	for _, s := range folded {
		spans = append(spans, fmt.Sprintf("%s–%s", fmtSecs(s.Start), fmtSecs(s.End)))
		lost += s.Lost
	}
	return fmt.Sprintf("%d dip(s) only the saturated client host explains (no server-side cause matched; they may be fathom's own), not listed one by one: %s (~%s lost in all)",
		len(folded), strings.Join(spans, ", "), FormatNumber(lost))
}

// WriteStalls prints each stall with its explanation, settings and evidence; the dips
// only a saturated client host explains are one line (FoldClientHost).
func WriteStalls(w io.Writer, all []store.Stall, runID int64) {
	if len(all) == 0 {
		fmt.Fprintln(w, "Stalls: none (throughput never fell below the threshold of its baseline)")
		return
	}
	stalls, folded := foldClientHost(all)
	fmt.Fprintf(w, "Stalls: %d\n", len(stalls))
	if n := clientHostNote(folded); n != "" {
		fmt.Fprintf(w, "! %s\n", n)
	}
	for _, s := range stalls {
		title := s.Title
		if title == "" {
			title = "no known cause matches"
		}
		fmt.Fprintf(w, "\n  #%d  %s–%s (intervals %d–%d)  %s %s → %s (-%.0f%%, min %s, ~%s lost)\n", s.Number, fmtSecs(s.Start), fmtSecs(s.End),
			s.FirstInterval, s.LastInterval, s.Throughput, FormatNumber(s.Baseline), FormatNumber(s.Mean), s.Depth*100, FormatNumber(s.Min), FormatNumber(s.Lost))
		fmt.Fprintf(w, "      %s\n", title)
		for _, line := range wrap(s.Explanation, 90) {
			fmt.Fprintf(w, "      %s\n", line)
		}
		var set []string
		for _, x := range s.Settings {
			v := x.Value
			if v == "" {
				v = "?"
			}
			set = append(set, x.Name+"="+v)
		}
		if len(set) > 0 {
			fmt.Fprintf(w, "      settings: %s\n", strings.Join(set, ", "))
		}
		if len(s.Evidence) > 0 {
			fmt.Fprintln(w, "      unusual during it (baseline → during, robust z over the run's own spread):")
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			for _, e := range s.Evidence {
				name := e.Metric
				if e.Kind == "counter" && e.Unit != "%" {
					name += "/s"
				}
				reset := ""
				if e.Reset {
					reset = "  (counter reset)"
				}
				fmt.Fprintf(tw, "        %s\t%s → %s\tz=%+.1f%s\n", name, FormatValue(e.Baseline, e.Unit), FormatValue(e.During, e.Unit), e.Score, reset)
			}
			tw.Flush()
		}
	}
}

// wrap breaks text into lines of at most n characters at spaces.
func wrap(s string, n int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > n {
			out = append(out, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

// SamplingJSON is what show --json adds for a sampled run.
type SamplingJSON struct {
	Source     *store.SampleSource  `json:"source"`
	Collectors []store.CollectorRun `json:"collectors"`
	Analyzed   bool                 `json:"stalls_analyzed"`
	Stalls     []store.Stall        `json:"stalls"`
	// HostWarning says the client host was saturated during the run ("" when not).
	HostWarning string `json:"host_warning,omitempty"`
}

func samplingFor(ctx context.Context, st store.Store, run *store.Run) *SamplingJSON {
	src, err := st.SampleSource(ctx, run.ID)
	if err != nil {
		return nil
	}
	out := &SamplingJSON{Source: src, Stalls: []store.Stall{}}
	out.Collectors, _ = st.Collectors(ctx, run.ID)
	if h, ok, err := analyze.RunHostLoad(ctx, st, run); err == nil && ok {
		out.HostWarning = h.Warning()
	}
	if stalls, _, analyzed, err := st.Stalls(ctx, run.ID); err == nil {
		out.Analyzed = analyzed
		if stalls != nil {
			out.Stalls = stalls
		}
	}
	return out
}
