package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/chart"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/report"
)

func (s *server) apiExperiments(w http.ResponseWriter, r *http.Request) {
	exps, err := s.o.Store.Experiments(r.Context(), 0)
	if err != nil {
		storeError(w, err)
		return
	}
	for i := range exps {
		exps[i].Plan = "" // the list needs no plan text
	}
	writeJSON(w, exps)
}

func (s *server) apiExperiment(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	exp, err := s.o.Store.Experiment(r.Context(), id)
	if err != nil {
		storeError(w, err)
		return
	}
	v, err := report.ExperimentJSON(r.Context(), s.o.Store, exp)
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, v)
}

// apiExperimentFigures answers the experiment's charts as models (report's
// ExperimentFigures): the same box plots, bars, scaling curves, time overlays and
// small multiples that the static report draws as SVG.
func (s *server) apiExperimentFigures(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	if _, err := s.o.Store.Experiment(ctx, id); err != nil {
		storeError(w, err) // 404 for one that does not exist
		return
	}
	sel, err := report.Select(ctx, s.o.Store, []string{fmt.Sprintf("exp:%d", id)})
	if err != nil {
		compareError(w, err)
		return
	}
	data, err := report.LoadRuns(ctx, s.o.Store, sel.Runs, report.DefaultMaxPoints)
	if err != nil {
		storeError(w, err)
		return
	}
	if err := report.SetJudge(data, sel.Exp.Judge); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	rep, err := report.Build(sel, data, report.Options{Selection: sel.What, Judge: sel.Exp.Judge})
	if err != nil {
		compareError(w, err)
		return
	}
	writeJSON(w, rep.ExperimentFigures())
}

// experimentReport serves the files of the experiment's static report (what
// `fathom report exp:ID` writes: index.html with the cells, box plots, scaling curves,
// per-cell time series side by side and comparisons, and the CSV files it links to);
// the experiment page shows index.html in a frame.
func (s *server) experimentReport(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	name := r.PathValue("file")
	ctx := r.Context()
	sel, err := report.Select(ctx, s.o.Store, []string{fmt.Sprintf("exp:%d", id)})
	if err != nil {
		htmlError(w, err)
		return
	}
	rep, err := s.buildReport(ctx, sel, sel.Exp.Judge)
	if err != nil {
		htmlError(w, err)
		return
	}
	files, err := rep.Files()
	if err != nil {
		htmlError(w, err)
		return
	}
	for _, f := range files {
		if f.Name != name {
			continue
		}
		w.Header().Set("Content-Type", report.MediaTypeOf(name))
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(f.Data)
		return
	}
	http.NotFound(w, r)
}

func (s *server) buildReport(ctx context.Context, sel *report.Selection, judge string) (*report.Report, error) {
	data, err := report.LoadRuns(ctx, s.o.Store, sel.Runs, report.DefaultMaxPoints)
	if err != nil {
		return nil, err
	}
	if err := report.LoadSamples(ctx, s.o.Store, s.o.Figures, data, false); err != nil {
		return nil, err
	}
	if err := report.SetJudge(data, judge); err != nil {
		return nil, err
	}
	return report.Build(sel, data, report.Options{Selection: sel.What, Judge: judge, Generated: "fathom serve " + s.o.Version})
}

func htmlError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errkind.KindOf(err) == errkind.Usage {
		code = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, err.Error())
}

// comparePage is what GET /api/compare answers: `fathom compare`'s table (as text and
// as its JSON) and the runs' throughput and p99 latency overlaid.
type comparePage struct {
	A, B       string          `json:"-"`
	Text       string          `json:"text"`
	Comparison json.RawMessage `json:"comparison"`
	Notes      []string        `json:"notes,omitempty"`
	Charts     []chart.Chart   `json:"charts"`
}

func (s *server) apiCompare(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	args := [2]string{strings.TrimSpace(q.Get("a")), strings.TrimSpace(q.Get("b"))}
	if args[0] == "" || args[1] == "" {
		apiError(w, http.StatusBadRequest, "compare needs two sides, a and b: runs (12, 3-7, 3,5,9), label:k=v or exp:NAME:k=v")
		return
	}
	for _, arg := range args {
		if countRuns(arg) > maxCompareRuns {
			apiError(w, http.StatusBadRequest, fmt.Sprintf("compare: a side names more than %d runs: compare at most %d a side", maxCompareRuns, maxCompareRuns))
			return
		}
	}
	judge := q.Get("judge")
	// ?format=F: the comparison as `fathom compare -f F` writes it, to download.
	var out report.Choice
	if f := q.Get("format"); f != "" {
		var err error
		if out, err = report.Choose("compare", f, report.KindComparison); err != nil {
			apiError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	var sides [2]report.Side
	var page comparePage
	for i, arg := range args {
		sel, err := report.Select(ctx, s.o.Store, []string{arg})
		if err != nil {
			compareError(w, err)
			return
		}
		if len(sel.Runs) > maxCompareRuns {
			apiError(w, http.StatusBadRequest, fmt.Sprintf("compare: %s selects %d runs, at most %d: narrow it (e.g. exp:NAME:k=v)", arg, len(sel.Runs), maxCompareRuns))
			return
		}
		data, err := report.LoadRuns(ctx, s.o.Store, sel.Runs, report.DefaultMaxPoints)
		if err != nil {
			storeError(w, err)
			return
		}
		sides[i] = report.Side{Name: arg, Runs: data}
		if judge == "" && sel.Exp != nil {
			judge = sel.Exp.Judge
		}
	}
	if err := report.SetJudge(append(append([]*report.RunData(nil), sides[0].Runs...), sides[1].Runs...), judge); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	for _, a := range sides[0].Runs {
		for _, b := range sides[1].Runs {
			if a.Run.ID == b.Run.ID {
				apiError(w, http.StatusBadRequest, fmt.Sprintf("run %d is on both sides: A and B must be different runs", a.Run.ID))
				return
			}
		}
	}
	for _, side := range sides {
		for _, d := range side.Runs {
			if d.Run.Status != "complete" {
				page.Notes = append(page.Notes, fmt.Sprintf("run %d: %s; its %d finished intervals are compared", d.Run.ID, d.Run.Status, d.Summary.Intervals))
			}
		}
	}
	c := report.Compare("", sides[0], sides[1])
	if out.Format != nil {
		download(ctx, w, out, "compare", c)
		return
	}
	var t, j bytes.Buffer
	if err := c.WriteText(&t); err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if err := c.WriteJSON(&j); err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	page.Text, page.Comparison = t.String(), json.RawMessage(bytes.TrimSpace(j.Bytes()))
	page.Charts = c.Overlays()
	writeJSON(w, page)
}

// maxCompareRuns bounds each side of GET /api/compare, so that one request cannot
// hold the server's CPUs for long.
const maxCompareRuns = 300

// countRuns is how many runs a list of ids and ranges (3,5,9-12) names, counted
// before anything is read and only up to just past MaxCompareRuns (label: and exp:
// selections count after).
func countRuns(arg string) int {
	if strings.Contains(arg, ":") {
		return 0
	}
	n := 0
	for part := range strings.SplitSeq(arg, ",") {
		lo, hi, ok := strings.Cut(part, "-")
		a, err1 := strconv.ParseInt(lo, 10, 64)
		b, err2 := strconv.ParseInt(hi, 10, 64)
		if ok && err1 == nil && err2 == nil && b >= a && b-a < 1<<20 {
			n += int(b - a + 1)
		} else {
			n++
		}
		if n > maxCompareRuns {
			return n
		}
	}
	return n
}

func compareError(w http.ResponseWriter, err error) {
	if errkind.KindOf(err) == errkind.Usage {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	storeError(w, err)
}

func (s *server) apiInfo(w http.ResponseWriter, r *http.Request) {
	id := who(r)
	writeJSON(w, map[string]any{"store": s.o.Store.Path(), "writable": s.write, "version": s.o.Version,
		"user": id.name, "role": id.role.String(), "basic": id.basic,
		// The formats GET /api/runs/ID/export and /api/compare?format= offer.
		"downloads": map[string][]string{"run": report.FormatNames(report.KindIntervals, report.KindRun),
			"comparison": report.FormatNames(report.KindComparison)}})
}
