package serve

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/fathom-lab/fathom/internal/report"
)

// apiRunExport is GET /api/runs/{id}/export?format=F: the run as `fathom export
// RUN -f F` writes it (csv by default), as a file to download. The formats come from
// report's registry: a new one is offered here without a change.
func (s *server) apiRunExport(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "csv"
	}
	out, err := report.Choose("export", format, report.KindIntervals, report.KindRun)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx := r.Context()
	if _, err := s.o.Store.Run(ctx, id); err != nil {
		storeError(w, err) // 404 for one that does not exist
		return
	}
	v, err := report.LoadRunView(ctx, s.o.Store, s.o.Figures, strconv.FormatInt(id, 10))
	if err != nil {
		storeError(w, err)
		return
	}
	name := fmt.Sprintf("run-%d", id)
	if out.Kind == report.KindIntervals {
		name += "-intervals"
	}
	download(ctx, w, out, name, v)
}

// download renders v in the chosen format as an attachment named name+extension.
func download(ctx context.Context, w http.ResponseWriter, out report.Choice, name string, v any) {
	h := w.Header()
	h.Set("Content-Type", out.MediaType)
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name+out.Ext))
	h.Set("Cache-Control", "no-store")
	if err := out.Write(ctx, w, v); err != nil {
		// Headers may be gone with the first bytes; the log has the reason.
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
