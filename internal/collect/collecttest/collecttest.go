// Package collecttest has the checks the collector tests of every database kind
// (internal/db/KIND) run on the samples real servers gave.
package collecttest

import (
	"math"
	"testing"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/sample"
)

// Reading finds a reading of a sample by name.
func Reading(s *sample.Sample, name string) (sample.Reading, bool) {
	for _, r := range s.Readings {
		if r.Name == name {
			return r, true
		}
	}
	return sample.Reading{}, false
}

// CheckReadings fails for values that are not numbers, counters' negative rates and
// gauges with a rate or a reset.
func CheckReadings(t testing.TB, s *sample.Sample) {
	t.Helper()
	for _, r := range s.Readings {
		if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
			t.Errorf("%s: value %v", r.Name, r.Value)
		}
		if r.Kind == sample.Counter && r.HasRate && r.Rate < 0 {
			t.Errorf("%s: negative rate %v", r.Name, r.Rate)
		}
		if r.Kind == sample.Gauge && (r.HasRate || r.Reset) {
			t.Errorf("%s: a gauge with a rate or reset", r.Name)
		}
	}
}

// CheckDeclared fails for every reading of a sample that its collector (one of the
// host's or of kind k) does not declare, or declares with another kind or unit.
func CheckDeclared(t testing.TB, k collect.Database, s *sample.Sample) {
	t.Helper()
	v, err := collect.NewVocabulary(k)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Readings) == 0 {
		t.Fatal("no readings to check against the declarations")
	}
	for _, r := range s.Readings {
		d, ok := v.DeclaredBy(r.Collector, r.Name)
		if !ok {
			t.Errorf("%s emits %s, which it does not declare", r.Collector, r.Name)
			continue
		}
		if d.Kind != r.Kind || d.Unit != r.Unit {
			t.Errorf("%s: emitted as %s %q, declared as %s %q", r.Name, r.Kind, r.Unit, d.Kind, d.Unit)
		}
	}
}
