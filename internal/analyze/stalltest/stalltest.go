// Package stalltest builds the synthetic runs the stall tests of analyze and of each
// database kind (internal/db/KIND) feed to stall analysis.
package stalltest

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/store"
)

// Synth builds a run: n one-second intervals at about base tps (a fixed wobble of
// ±3%), with the given intervals at the given throughput.
func Synth(n int, base float64, dips map[int]float64) []analyze.ThroughputPoint {
	out := make([]analyze.ThroughputPoint, n)
	for i := range out {
		v := base * (1 + 0.03*math.Sin(float64(i)*1.7))
		if d, ok := dips[i]; ok {
			v = d
		}
		out[i] = analyze.ThroughputPoint{Index: i, Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second, Value: v}
	}
	return out
}

// Series builds a metric with one value per interval (f gives it).
func Series(name, kind, unit string, n int, f func(i int) float64) store.MetricSeries {
	s := store.MetricSeries{Metric: store.Metric{Name: name, Kind: kind, Unit: unit, Collector: "test"}}
	for i := 0; i < n; i++ {
		v := f(i)
		p := store.MetricPoint{Interval: i, At: time.Duration(i+1) * time.Second}
		if kind == "counter" {
			p.Rate, p.HasRate = v, true
		} else {
			p.Value = v
		}
		s.Points = append(s.Points, p)
	}
	return s
}

// Wobble is v give or take 5%, varying with i: a metric's ordinary noise.
func Wobble(i int, v float64) float64 { return v * (1 + 0.05*math.Cos(float64(i)*2.3)) }

// In says whether i is one of set.
func In(i int, set ...int) bool {
	for _, s := range set {
		if i == s {
			return true
		}
	}
	return false
}

// SpanList is the stalls' interval spans, for messages.
func SpanList(ss []store.Stall) [][2]int {
	var out [][2]int
	for _, s := range ss {
		out = append(out, [2]int{s.FirstInterval, s.LastInterval})
	}
	return out
}

// DipRange is intervals from to to at throughput v, for Synth.
func DipRange(from, to int, v float64) map[int]float64 {
	m := map[int]float64{}
	for i := from; i <= to; i++ {
		m[i] = v
	}
	return m
}

// Statuses builds per-sample collector outcomes: the server collectors time out in the
// given intervals.
func Statuses(n int, kind string, unanswered ...int) []store.SampleStatus {
	var out []store.SampleStatus
	for i := -1; i < n; i++ {
		for _, c := range []string{"a", "b", "c"} {
			st := store.SampleStatus{Interval: i, Collector: kind + "_" + c, Source: kind, Status: "ok"}
			if In(i, unanswered...) {
				st.Status, st.Error = "timeout", "no answer within 1s"
			}
			out = append(out, st)
		}
		out = append(out, store.SampleStatus{Interval: i, Collector: "os_cpu", Source: "os", Status: "ok"})
	}
	return out
}

// OneStall finds the stalls of in (whose Rules are the kind's) and fails unless there is
// exactly one.
func OneStall(t testing.TB, in analyze.StallInput) store.Stall {
	t.Helper()
	s := analyze.FindStalls(in, analyze.DefaultStallParams())
	if len(s) != 1 {
		t.Fatalf("%d stalls, want 1: %v", len(s), SpanList(s))
	}
	return s[0]
}

// SettingNames lists a stall's settings by name.
func SettingNames(s store.Stall) string {
	var out []string
	for _, x := range s.Settings {
		out = append(out, x.Name)
	}
	return strings.Join(out, " ")
}
