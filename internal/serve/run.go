package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/store"
)

// runPage is what GET /api/runs/{id} answers: the run with its provenance, its
// charts as the static report builds them, and its stalls.
type runPage struct {
	Run            *store.Run        `json:"run"`
	Title          string            `json:"title"`
	Intervals      int               `json:"intervals"` // finished intervals
	Group          int               `json:"group"`     // intervals merged per chart point
	Figures        report.RunFigures `json:"figures"`
	Stalls         []store.Stall     `json:"stalls"`
	StallsAnalyzed bool              `json:"stalls_analyzed"`
	Sampled        bool              `json:"sampled"`
	Types          []typeRow         `json:"types,omitempty"`
	Live           bool              `json:"live"`
	// Errors are the run's first distinct errors, in the order it met them (stored as
	// it met them, so a live run has them too); ErrorsUnlisted counts the measured
	// errors none of them is.
	Errors         []measure.SeenError `json:"errors"`
	ErrorsUnlisted int64               `json:"errors_unlisted,omitempty"`
}

type typeRow struct {
	Name   string  `json:"name"`
	TPS    float64 `json:"tps"`
	P50    float64 `json:"p50_ms"`
	P95    float64 `json:"p95_ms"`
	P99    float64 `json:"p99_ms"`
	Max    float64 `json:"max_ms"`
	Errors int64   `json:"errors"`
}

// buildRun reads a run and computes its page.
func (s *server) buildRun(ctx context.Context, id int64) (*runPage, error) {
	run, err := s.o.Store.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	data, err := report.LoadRuns(ctx, s.o.Store, []*store.Run{run}, report.DefaultMaxPoints)
	if err != nil {
		return nil, err
	}
	if err := report.LoadSamples(ctx, s.o.Store, s.o.Figures, data, false); err != nil {
		return nil, err
	}
	rep, err := report.New(data, report.Options{})
	if err != nil {
		return nil, err
	}
	d := data[0]
	// The summary computed from the stored intervals, so that a live run shows the
	// figures of what has finished so far.
	if sum, err := json.Marshal(d.Summary); err == nil {
		run.Summary = sum
	}
	p := &runPage{Run: run, Title: rep.Title, Intervals: len(d.Rows), Group: d.Group, Figures: rep.Figures(d),
		Stalls: d.Stalls, StallsAnalyzed: d.StallsAnalyzed, Sampled: d.Samples != nil, Live: run.Status == "running"}
	if p.Stalls == nil {
		p.Stalls = []store.Stall{}
	}
	p.Errors, p.ErrorsUnlisted = d.Summary.FirstErrors, d.Summary.ErrorsUnlisted
	if p.Errors == nil {
		p.Errors = []measure.SeenError{}
	}
	if len(run.TxnTypes) > 1 {
		for _, n := range run.TxnTypes {
			ts := d.Summary.ByTxn[n]
			p.Types = append(p.Types, typeRow{Name: n, TPS: ts.TPS, P50: ts.Latency.P50, P95: ts.Latency.P95, P99: ts.Latency.P99,
				Max: ts.Latency.Max, Errors: ts.Errors})
		}
	}
	return p, nil
}

func (s *server) apiRun(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	p, err := s.buildRun(r.Context(), id)
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, p)
}

// labelChange is the body of POST /api/runs/{id}/labels.
type labelChange struct {
	Set    map[string]string `json:"set"`
	Remove []string          `json:"remove"`
}

func (s *server) apiLabels(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	var c labelChange
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
			apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("labels: the body is over %d bytes: send fewer or shorter labels", tooBig.Limit))
			return
		}
		apiError(w, http.StatusBadRequest, fmt.Sprintf(`labels: %v: send {"set": {"key": "value"}, "remove": ["key"]}`, err))
		return
	}
	for k, v := range c.Set {
		if k == "" || len(k) > 100 || len(v) > 4000 {
			apiError(w, http.StatusBadRequest, "labels: a key needs 1 to 100 characters and a value at most 4000")
			return
		}
		if slices.Contains(c.Remove, k) {
			apiError(w, http.StatusBadRequest, fmt.Sprintf("labels: %q is both set and removed", k))
			return
		}
	}
	if err := s.o.Store.(store.RunEditor).SetLabels(r.Context(), id, c.Set, c.Remove); err != nil {
		storeError(w, err)
		return
	}
	run, err := s.o.Store.Run(r.Context(), id)
	if err != nil {
		storeError(w, err)
		return
	}
	s.list.refresh(r.Context(), s)
	s.hist.clear() // a run moved to another series, or left its series
	writeJSON(w, map[string]any{"id": id, "labels": run.Labels})
}

func (s *server) apiDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	run, err := s.o.Store.Run(r.Context(), id)
	if err != nil {
		storeError(w, err)
		return
	}
	if run.Status == "running" {
		apiError(w, http.StatusConflict, fmt.Sprintf("run %d is still running: stop it first", id))
		return
	}
	if err := s.o.Store.(store.RunEditor).DeleteRun(r.Context(), id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			storeError(w, err)
			return
		}
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.list.refresh(r.Context(), s)
	s.hist.clear() // a run moved to another series, or left its series
	writeJSON(w, map[string]any{"deleted": id})
}
