package report

import (
	"strings"
	"testing"
	"time"
)

// TestCautions: the page says when the runs grouped differ in more than their axes
// (the try=1/try=2 report that drew a curve over try while query mode and warm-up
// differed too), and when the repetitions are too few for any two cells to differ
// significantly; a plan's runs that differ only where its axes say are not flagged.
func TestCautions(t *testing.T) {
	runs := []fixtureRun{
		{labels: map[string]string{"try": "1"}, clients: 2, intervals: 4, tps: 100, latencyMs: 2, seed: 1},
		{labels: map[string]string{"try": "2"}, clients: 2, intervals: 4, tps: 90, latencyMs: 2, seed: 2},
	}
	st, ids := newFixtureStore(t, runs)
	data := loadFixture(t, st, ids)
	data[1].Run.QueryMode, data[1].Run.Warmup = "prepared", 5*time.Second
	data[0].Run.QueryMode = "simple"
	e, err := groupRuns("", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := strings.Join(e.Cautions(), "\n")
	t.Logf("cautions:\n%s", cs)
	for _, want := range []string{"more than the axis try", "query mode (prepared, simple)", "warm-up (0s, 5s)", "one run a cell", "may be noise"} {
		if !strings.Contains(cs, want) {
			t.Errorf("the cautions lack %q", want)
		}
	}
	if strings.Contains(cs, "label.try") {
		t.Error("the axis itself is named as a difference")
	}
	r, err := newWithExperiment(e, Options{Generated: "fathom test"})
	if err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	if err := r.writeHTML(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<ul class="warnings cautions"><li>The runs differ in more than the axis try`) {
		t.Error("the HTML page does not show the caution")
	}

	// Four runs a cell of a plan, differing in a setting only where the axis sets it:
	// nothing to say.
	var many []fixtureRun
	for i := 0; i < 8; i++ {
		v := []string{"on", "off"}[i%2]
		many = append(many, fixtureRun{labels: map[string]string{"sc": v}, clients: 2, intervals: 4, tps: float64(100 + 10*(i%2)), latencyMs: 2,
			seed: uint64(i + 1), settings: map[string]string{"synchronous_commit": v}})
	}
	st, ids = newFixtureStore(t, many)
	data = loadFixture(t, st, ids)
	var specs []memberSpec
	for _, d := range data {
		specs = append(specs, memberSpec{Data: d, Values: map[string]string{"durability": d.Run.Labels["sc"]}})
	}
	e, err = newExperiment("plan", []axisSpec{{Name: "durability", Values: []string{"on", "off"}}}, specs)
	if err != nil {
		t.Fatal(err)
	}
	if cs := e.Cautions(); len(cs) != 0 {
		t.Errorf("a plan's runs with 4 a cell: cautions %q, want none", cs)
	}
	// An axis of targets: the server's kind and version follow the axis, nothing to
	// say; a version that changes within one target is.
	for _, d := range data {
		d.Run.TargetKind, d.Run.ServerVersion = map[string]string{"on": "postgres", "off": "mysql"}[d.Run.Labels["sc"]], map[string]string{"on": "16.1", "off": "10.11.6"}[d.Run.Labels["sc"]]
	}
	if cs := e.Cautions(); len(cs) != 0 {
		t.Errorf("targets by axis: cautions %q, want none", cs)
	}
	data[0].Run.ServerVersion = "16.2"
	if cs := strings.Join(e.Cautions(), "\n"); !strings.Contains(cs, "server version (10.11.6, 16.1, 16.2)") {
		t.Errorf("a version changed within a target: cautions %q", cs)
	}
	data[0].Run.ServerVersion = "16.1"
	// Three a cell cannot tell two cells apart (smallest p 0.1).
	e, err = newExperiment("plan", []axisSpec{{Name: "durability", Values: []string{"on", "off"}}}, specs[:6])
	if err != nil {
		t.Fatal(err)
	}
	if cs := strings.Join(e.Cautions(), "\n"); !strings.Contains(cs, "With 3 repetitions a cell no difference between two cells can be significant") || !strings.Contains(cs, "p-value is 0.1,") {
		t.Errorf("3 a cell: cautions %q", cs)
	}
}
