package compat

import (
	"fmt"
	"io"
	"math"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// WritePercentile prints sysbench's percentile line for the run's latencies h (ns).
func WritePercentile(w io.Writer, h *hdr.Histogram, p int) {
	if h == nil || h.TotalCount() == 0 || p <= 0 {
		return
	}
	fmt.Fprintf(w, "latency %dth percentile: %.3f ms (--percentile %d)\n", p, float64(h.ValueAtQuantile(float64(p)))/1e6, p)
}

// Histogram buckets, as sysbench's: 1024 logarithmic steps from 0.001 ms to 100 s.
const (
	histBuckets = 1024
	histMinMS   = 0.001
	histMaxMS   = 100000.0
)

// WriteHistogram prints the run's latencies h (ns) as sysbench's --histogram does: one
// line per non-empty bucket, its upper bound in ms, a bar of up to 40 '*' scaled to
// the fullest bucket, and its count.
func WriteHistogram(w io.Writer, h *hdr.Histogram) {
	if h == nil || h.TotalCount() == 0 {
		return
	}
	mult := float64(histBuckets-1) / math.Log(histMaxMS/histMinMS)
	counts := make([]int64, histBuckets)
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		ms := float64(b.To) / 1e6
		i := 0
		if ms > histMinMS {
			i = min(int(math.Ceil(math.Log(ms/histMinMS)*mult)), histBuckets-1)
		}
		counts[i] += b.Count
	}
	var most int64
	for _, c := range counts {
		most = max(most, c)
	}
	fmt.Fprintln(w, "Latency histogram (values are in milliseconds)")
	fmt.Fprintln(w, "       value  ------------- distribution ------------- count")
	for i, c := range counts {
		if c == 0 {
			continue
		}
		bound := histMinMS * math.Exp(float64(i)/mult)
		bar := int(math.Ceil(float64(c) * 40 / float64(most)))
		fmt.Fprintf(w, "%12.3f |%-40s %d\n", bound, strings.Repeat("*", bar), c)
	}
}
