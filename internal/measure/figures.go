package measure

// Figures are what a latency distribution is charted by: percentiles, maximum and mean
// in nanoseconds, as HdrHistogram reports them (ValueAtQuantile, Max, Mean).
type Figures struct {
	P50, P90, P95, P99, P999, Max int64
	Mean                          float64
}

var figureQuantiles = []float64{50, 90, 95, 99, 99.9}

// Figures returns s's figures; all zero for an empty histogram.
func (s *Sparse) Figures() Figures {
	if s.TotalCount() == 0 {
		return Figures{}
	}
	var q [5]int64
	s.Quantiles(figureQuantiles, q[:])
	return Figures{P50: q[0], P90: q[1], P95: q[2], P99: q[3], P999: q[4], Max: s.max(), Mean: s.mean()}
}

// Latency is f in milliseconds, rounded as LatencyOf rounds: LatencyOf(h) equals
// f.Latency() for the figures of h.
func (f Figures) Latency() Latency {
	ms := func(ns int64) float64 { return round3(float64(ns) / 1e6) }
	return Latency{P50: ms(f.P50), P90: ms(f.P90), P95: ms(f.P95), P99: ms(f.P99), P999: ms(f.P999), Max: ms(f.Max),
		Mean: round3(f.Mean / 1e6)}
}
