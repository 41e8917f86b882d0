package workload_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	sqlite "github.com/fathom-lab/fathom/internal/db/sqlite/target"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/tpcb"
)

// A marker keeps the sizes its prepare was given, and a marker table an older fathom
// left (without them) still reads, and takes new markers.
func TestMarkerSizes(t *testing.T) {
	ctx := context.Background()
	tg, err := sqlite.Open("sqlite:"+filepath.Join(t.TempDir(), "m.db"), target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// An older fathom's marker, left by a killed prepare.
	for _, q := range []string{
		"CREATE TABLE " + workload.MarkerTable + " (tbl VARCHAR(200) NOT NULL PRIMARY KEY, workload VARCHAR(200) NOT NULL, started_at VARCHAR(40) NOT NULL)",
		"INSERT INTO " + workload.MarkerTable + " VALUES ('pgbench_accounts', 'tpcb', '2026-01-01T00:00:00Z')",
	} {
		if err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	wl, err := tpcb.New(tpcb.TPCBLike, workload.Params{"scale": "3"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := workload.UnfinishedPrepare(ctx, tg, c, wl)
	if err != nil || !strings.Contains(u.Msg, "pgbench_accounts may be incomplete") || len(u.Sizes) != 0 {
		t.Fatalf("the old marker: %+v, %v", u, err)
	}
	// A prepare that fails part-way leaves a new marker in the old table, with its scale.
	if err := workload.Prepare(ctx, tg, failing{wl}, false, nil); err == nil {
		t.Fatal("the failing prepare succeeded")
	}
	u, err = workload.UnfinishedPrepare(ctx, tg, c, wl)
	if err != nil || !strings.Contains(u.Msg, "may be incomplete") || u.Sizes["scale"] != "3" {
		t.Fatalf("the new marker: %+v, %v", u, err)
	}
}

// failing is a workload whose Prepare fails after the markers are written.
type failing struct{ *tpcb.Workload }

func (failing) Prepare(context.Context, target.Target, workload.Progress) error {
	return errors.New("killed")
}
