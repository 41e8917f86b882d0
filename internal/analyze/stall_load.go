package analyze

import (
	"context"
	"errors"
	"maps"

	"github.com/fathom-lab/fathom/internal/store"
)

// StallsFromStore reads what stall analysis needs for a stored run: its intervals'
// throughput (or, for a watch session without client intervals, the server's own
// transaction rate), its metric series and settings. It is a pure function of stored
// data. rules are the run's kind's own patterns (db.StallRulesOf(run.TargetKind)).
func StallsFromStore(ctx context.Context, st store.Store, run *store.Run, rules []Rule) (StallInput, error) {
	in := StallInput{Unit: "tps", Kind: run.TargetKind, Settings: map[string]string{}, Version: run.ServerVersion, Clients: run.Clients, Rules: rules}
	maps.Copy(in.Settings, run.Settings)
	src, err := st.SampleSource(ctx, run.ID)
	switch {
	case err == nil:
		in.Local = src.Server.Local
		maps.Copy(in.Settings, src.Server.Settings)
	case errors.Is(err, store.ErrNotFound):
	default:
		return in, err
	}
	ivs, err := st.EncodedIntervals(ctx, run)
	if err != nil {
		return in, err
	}
	for _, iv := range ivs {
		var ok int64
		for _, t := range iv.Types {
			ok += t.OK
		}
		pt := ThroughputPoint{Index: iv.Index, Start: iv.Start, End: iv.End, Warmup: iv.Warmup, Reconnects: iv.Reconnects}
		if s := (iv.End - iv.Start).Seconds(); s > 0 {
			pt.Value = float64(ok) / s
		}
		in.Throughput = append(in.Throughput, pt)
	}
	if in.Metrics, err = st.MetricSeries(ctx, run.ID); err != nil {
		return in, err
	}
	if in.Samples, err = st.SampleStatuses(ctx, run.ID); err != nil {
		return in, err
	}
	if len(in.Throughput) == 0 {
		in.Throughput, in.Unit = ServerThroughput(in.Metrics, src)
	}
	return in, nil
}

// serverRates are the server counters that stand for throughput when no client
// measured it (watch sessions), in order of preference: the kinds' names, checked by
// TestStallMetricsDeclared.
var serverRates = []string{"pg.xact_commit", "mysql.Questions", "mysql.Queries", "redis.total_commands_processed"}

// ServerThroughput derives per-interval throughput from the server's own counters:
// PostgreSQL's committed transactions, MySQL's statements (Questions). Interval i
// spans the readings i-1 and i.
func ServerThroughput(ms []store.MetricSeries, src *store.SampleSource) ([]ThroughputPoint, string) {
	for _, name := range serverRates {
		for i := range ms {
			ser := &ms[i]
			if ser.Name != name {
				continue
			}
			var out []ThroughputPoint
			for j := 1; j < len(ser.Points); j++ {
				prev, cur := ser.Points[j-1], ser.Points[j]
				if !cur.HasRate || cur.Interval < 0 {
					continue
				}
				out = append(out, ThroughputPoint{Index: cur.Interval, Start: prev.At, End: cur.At, Value: cur.Rate})
			}
			return out, name
		}
	}
	return nil, ""
}

// AnalyzeStored finds a stored run's stalls with p (and its kind's rules) and stores them.
func AnalyzeStored(ctx context.Context, st store.Store, run *store.Run, p StallParams, rules []Rule) ([]store.Stall, error) {
	p = p.withDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	in, err := StallsFromStore(ctx, st, run, rules)
	if err != nil {
		return nil, err
	}
	stalls := FindStalls(in, p)
	if err := st.SaveStalls(ctx, run.ID, p, stalls); err != nil {
		return nil, err
	}
	return stalls, nil
}
