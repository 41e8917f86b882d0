package report

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/store"
)

// WriteRunDir writes the report of one stored run to its default directory
// (report-run-ID) and returns its index.html. generated says who made it and when;
// figs gives the run's kind's default charts.
func WriteRunDir(ctx context.Context, st store.Store, figs KindFigures, id int64, generated string) (string, error) {
	sel, err := Select(ctx, st, []string{strconv.FormatInt(id, 10)})
	if err != nil {
		return "", err
	}
	data, err := LoadRuns(ctx, st, sel.Runs, DefaultMaxPoints)
	if err != nil {
		return "", errkind.WithKind(errkind.Failed, err)
	}
	if err := LoadSamples(ctx, st, figs, data, true); err != nil {
		return "", errkind.WithKind(errkind.Failed, err)
	}
	rep, err := New(data, Options{Generated: generated})
	if err != nil {
		return "", errkind.WithKind(errkind.Failed, err)
	}
	files, err := rep.Files()
	if err != nil {
		return "", errkind.WithKind(errkind.Failed, err)
	}
	index, err := WriteDir(DefaultDir(sel), files, false)
	if err != nil {
		if errors.Is(err, safefile.ErrUnsafe) {
			return "", errkind.WithKind(errkind.Usage, err)
		}
		return "", errkind.WithKind(errkind.Failed, fmt.Errorf("writing the report: %v", err))
	}
	return index, nil
}
