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
// data. k is what the run's kind's bundle says of stalls (db.StallOf(run.TargetKind)).
func StallsFromStore(ctx context.Context, st store.Store, run *store.Run, k StallKind) (StallInput, error) {
	in := StallInput{Unit: "tps", Kind: run.TargetKind, Settings: map[string]string{}, Version: run.ServerVersion, Clients: run.Clients,
		Rules: k.Rules, Vocabulary: k.Vocabulary}
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
		in.Throughput, in.Unit = ServerThroughput(in.Metrics, k.Vocabulary.ServerRates)
	}
	return in, nil
}

// ServerThroughput derives per-interval throughput from the server's own counters:
// the first of rates (the kind's Vocabulary.ServerRates: PostgreSQL's committed
// transactions, MySQL's statements) that was sampled. Interval i spans the readings
// i-1 and i.
func ServerThroughput(ms []store.MetricSeries, rates []string) ([]ThroughputPoint, string) {
	for _, name := range rates {
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

// AnalyzeStored finds a stored run's stalls with p (and what its kind says of stalls)
// and stores them.
func AnalyzeStored(ctx context.Context, st store.Store, run *store.Run, p StallParams, k StallKind) ([]store.Stall, error) {
	p = p.withDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	in, err := StallsFromStore(ctx, st, run, k)
	if err != nil {
		return nil, err
	}
	stalls := FindStalls(in, p)
	if err := st.SaveStalls(ctx, run.ID, p, stalls); err != nil {
		return nil, err
	}
	return stalls, nil
}
