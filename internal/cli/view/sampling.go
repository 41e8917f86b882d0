package view

import (
	"fmt"
	"io"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/run"
)

// WriteSampling prints what sampling found after a run's summary: the saturated-host
// warning and the stalls (nil: nothing).
func WriteSampling(w io.Writer, rs *run.SamplingResult, runID int64) {
	if rs == nil {
		return
	}
	if rs.Host != "" {
		fmt.Fprintf(w, "! %s\n", rs.Host)
	}
	if rs.StallErr != nil {
		fmt.Fprintf(w, "stalls: not analysed: %v\n", rs.StallErr)
		return
	}
	if rs.Measured < analyze.MinStallIntervals && len(rs.Stalls) == 0 {
		fmt.Fprintf(w, "stalls: too few measured intervals to look for them (%d; a stall is judged against the run's own baseline)\n", rs.Measured)
		return
	}
	report.WriteStallList(w, rs.Stalls, runID)
}
