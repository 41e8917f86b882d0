package report

import (
	"fmt"
	"io"

	"github.com/fathom-lab/fathom/internal/measure"
)

// writeThresholds lists the run's --threshold bars, each with the run's figure and
// whether it passed.
func writeThresholds(w io.Writer, s *measure.Summary) {
	if len(s.Thresholds) == 0 {
		return
	}
	failed := len(measure.FailedThresholds(s.Thresholds))
	fmt.Fprintf(w, "thresholds: %d of %d passed\n", len(s.Thresholds)-failed, len(s.Thresholds))
	for _, r := range s.Thresholds {
		mark := "✓"
		if !r.Pass {
			mark = "✗"
		}
		fmt.Fprintf(w, "  %s %s\n", mark, r)
	}
}
