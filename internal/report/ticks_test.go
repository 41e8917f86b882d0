package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/store"
)

// A scaling curve over a count (clients 2 and 4) labels whole numbers only: the
// held-out rerun of scenario 1 drew ticks at 2.25, 2.5 … 3.75 clients.
func TestScalingCurveWholeTicks(t *testing.T) {
	var runs []fixtureRun
	seed := uint64(7)
	for rep := 1; rep <= 2; rep++ {
		for _, clients := range []int{2, 4} {
			seed++
			runs = append(runs, fixtureRun{labels: map[string]string{"rep": fmt.Sprint(rep), "clients": fmt.Sprint(clients)},
				clients: clients, intervals: 6, tps: float64(clients) * 50, latencyMs: 2, seed: seed})
		}
	}
	r := buildReport(t, runs, Options{Selection: "ticks"})
	page := string(files(t, r)["index.html"])
	tick := regexp.MustCompile(`<text class="tick x"[^>]*>([^<]*)</text>`)
	for _, id := range []string{"exp-scaling-tps", "exp-scaling-latency"} {
		i := strings.Index(page, `id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no chart %s", id)
		}
		svg := page[i : i+strings.Index(page[i:], "</svg>")]
		var labels []string
		for _, m := range tick.FindAllStringSubmatch(svg, -1) {
			labels = append(labels, m[1])
		}
		if got := strings.Join(labels, " "); got != "2 3 4" {
			t.Errorf("%s: x ticks %q, want 2 3 4", id, got)
		}
	}
}

// The small multiples of the static page share one y scale (the held-out rerun of
// scenario 4 drew 'relaxed' up to 1,200 tps beside 'durable' up to 500).
func TestSmallMultiplesShareY(t *testing.T) {
	var runs []fixtureRun
	seed := uint64(17)
	for rep := 1; rep <= 2; rep++ {
		for _, clients := range []int{2, 8} {
			seed++
			runs = append(runs, fixtureRun{labels: map[string]string{"rep": fmt.Sprint(rep), "clients": fmt.Sprint(clients)},
				clients: clients, intervals: 6, tps: float64(clients) * 100, latencyMs: 2, seed: seed})
		}
	}
	page := string(files(t, buildReport(t, runs, Options{Selection: "small"}))["index.html"])
	ytick := regexp.MustCompile(`<text class="tick y"[^>]*>([^<]*)</text>`)
	var tops []string
	for _, id := range []string{"exp-small-0", "exp-small-1"} {
		i := strings.Index(page, `id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no panel %s", id)
		}
		ticks := ytick.FindAllStringSubmatch(page[i:i+strings.Index(page[i:], "</svg>")], -1)
		if len(ticks) == 0 {
			t.Fatalf("panel %s has no y ticks", id)
		}
		tops = append(tops, ticks[len(ticks)-1][1])
	}
	if tops[0] != tops[1] {
		t.Errorf("the panels' y axes end at %v, want one top", tops)
	}
}

// A plan with one axis, a sweep of three values (scenario 5: shared_buffers 16MB,
// 32MB, 128MB), is compared value by value against its baseline, as the page's
// "Baseline (side A of every comparison …)" line promises: the held-out rerun's page
// said so and had no comparison at all.
func TestOneSweepAxisCompared(t *testing.T) {
	var runs []fixtureRun
	seed := uint64(40)
	for rep := 1; rep <= 4; rep++ {
		for _, clients := range []int{2, 4, 8} {
			seed++
			runs = append(runs, fixtureRun{labels: map[string]string{"rep": fmt.Sprint(rep), "clients": fmt.Sprint(clients)},
				clients: clients, intervals: 6, tps: float64(clients)*100 + float64(rep), latencyMs: 2, seed: seed})
		}
	}
	page := string(files(t, buildReport(t, runs, Options{Selection: "sweep"}))["index.html"])
	for _, want := range []string{"Comparison by clients", "Kruskal–Wallis", "clients=4 against clients=2", "clients=8 against clients=2"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// Four values compared with one baseline (three comparisons, Holm–Bonferroni) at
// four repetitions: the page says how many runs a side the corrected test needs (5),
// not the 4 an uncorrected test would (the held-out rerun of scenario 11 said "need ≥
// 4 per side" under "p-values adjusted for 3 comparisons").
func TestCorrectedRepetitionsNeeded(t *testing.T) {
	var runs []fixtureRun
	seed := uint64(60)
	for rep := 1; rep <= 4; rep++ {
		for i, mode := range []string{"always", "everysec", "no", "rdb"} {
			seed++
			runs = append(runs, fixtureRun{labels: map[string]string{"rep": fmt.Sprint(rep), "persistence": mode},
				clients: 4, intervals: 6, tps: float64(1000*(i+1) + 10*rep), latencyMs: float64(i + 1), seed: seed})
		}
	}
	page := string(files(t, buildReport(t, runs, Options{Selection: "modes"}))["index.html"])
	if !strings.Contains(page, "p-values adjusted for 3 comparisons") {
		t.Fatal("no comparisons adjusted for 3")
	}
	if strings.Contains(page, "need ≥ 4 per side") {
		t.Error("the page says 4 runs a side are enough, under a correction for 3 comparisons")
	}
	if !strings.Contains(page, "smallest possible adjusted p-value is 0.0857 (≥ α 0.05); need ≥ 5 per side") {
		t.Error("the page does not say that 5 runs a side are needed after the correction")
	}
}

// Runs on servers of two kinds (a plan's axis of instances: PostgreSQL against
// MariaDB) differ in the kind and version, and each has settings of its own: those are
// counted on one line instead of listed one by one against "(none)" (the held-out
// rerun of scenario 2 listed 40 such lines above the figures).
func TestDifferencesFoldOtherKinds(t *testing.T) {
	mk := func(kind, version string, settings map[string]string) *RunData {
		d := &RunData{Run: &store.Run{TargetKind: kind, ServerVersion: version, Settings: settings, Labels: map[string]string{"server": kind}}}
		return d
	}
	a := []*RunData{mk("postgres", "PostgreSQL 15.20", map[string]string{"fsync": "on", "jit": "on", "shared_buffers": "128MB"})}
	b := []*RunData{mk("mysql", "10.11.19-MariaDB", map[string]string{"innodb_flush_method": "O_DIRECT", "log_bin": "OFF"})}
	var keys []string
	for _, d := range differences(a, b) {
		keys = append(keys, d.Key)
		if d.Key == "settings of one server kind" && (d.A[0] != "3 of postgres's own" || d.B[0] != "2 of mysql's own") {
			t.Errorf("folded settings: %v against %v", d.A, d.B)
		}
	}
	if got := strings.Join(keys, ","); strings.Contains(got, "setting.") || !strings.Contains(got, "target") || !strings.Contains(got, "server version") || !strings.Contains(got, "settings of one server kind") {
		t.Errorf("differences %s", got)
	}
	// The same kind on both sides: every setting is listed.
	c := []*RunData{mk("postgres", "PostgreSQL 15.20", map[string]string{"fsync": "off"})}
	if ds := differences(a, c); !slices.ContainsFunc(ds, func(d difference) bool { return d.Key == "setting.jit" }) {
		t.Errorf("same kind: %v", ds)
	}
}
