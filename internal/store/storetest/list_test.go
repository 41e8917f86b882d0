package storetest_test

import (
	"context"
	"database/sql"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// RunList answers what Runs does for every filter, with the list's fields alike
// (labels, status read as interrupted when the writer is gone, summary) and the
// provenance left out.
func TestRunListIsRunsWithoutProvenance(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		path := f.fresh(t)
		a, b := f.open(t, path), f.open(t, path)
		defer b.Close()
		var ids []int64
		for i := range 5 {
			r := storetest.Run()
			if i%2 == 1 {
				r.Workload = "select"
				r.Labels = map[string]string{"variant": "off"}
			}
			id, err := b.CreateRun(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if err := b.FinishRun(ctx, ids[0], "complete", "", time.Unix(1700000100, 0), []byte(`{"tps":12.5}`)); err != nil {
			t.Fatal(err)
		}
		if err := b.FinishRun(ctx, ids[1], "failed", "boom", time.Unix(1700000200, 0), nil); err != nil {
			t.Fatal(err)
		}
		// A writer that is gone: its run reads interrupted in both lists.
		gone, err := a.CreateRun(ctx, storetest.Run())
		if err != nil {
			t.Fatal(err)
		}
		a.Close()
		if f.name == "sqlite" { // a process of this machine that no longer runs
			forgetWriter(t, b, gone)
		}
		l, ok := b.(store.RunLister)
		if !ok {
			t.Fatalf("%T has no RunList", b)
		}
		for _, flt := range []store.RunFilter{{}, {Limit: 2}, {Workload: "select"}, {Status: "complete"}, {Status: "running"},
			{Status: "interrupted"}, {Labels: map[string]string{"variant": "off"}}, {Status: "interrupted", Limit: 1}} {
			full, err := b.Runs(ctx, flt)
			if err != nil {
				t.Fatal(err)
			}
			brief, err := l.RunList(ctx, flt)
			if err != nil {
				t.Fatal(err)
			}
			if len(full) != len(brief) {
				t.Fatalf("%+v: Runs has %d runs, RunList %d", flt, len(full), len(brief))
			}
			for i := range full {
				w := full[i]
				want := store.Run{ID: w.ID, UUID: w.UUID, Workload: w.Workload, TargetKind: w.TargetKind, Clients: w.Clients, Rate: w.Rate,
					StartedAt: w.StartedAt, EndedAt: w.EndedAt, Status: w.Status, Reason: w.Reason, Gone: w.Gone, Summary: w.Summary,
					PID: w.PID, Labels: w.Labels}
				if !reflect.DeepEqual(brief[i], want) {
					t.Fatalf("%+v: run %d listed as\n%+v\nwant\n%+v", flt, w.ID, brief[i], want)
				}
			}
		}
		all, _ := l.RunList(ctx, store.RunFilter{})
		got := map[int64]string{}
		for _, r := range all {
			got[r.ID] = r.Status
		}
		if got[gone] != "interrupted" || got[ids[0]] != "complete" || got[ids[2]] != "running" {
			t.Fatalf("statuses %v", got)
		}
	})
}

// forgetWriter makes run id of the SQLite store s look written by a process of this
// machine that has ended.
func forgetWriter(t *testing.T, s store.Store, id int64) {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := store.ThisProcess()
	dead.PID, dead.Start = cmd.Process.Pid, "1"
	db, err := sql.Open("sqlite", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET pid = ?, process = ? WHERE id = ?`, dead.PID, dead.String(), id); err != nil {
		t.Fatal(err)
	}
	if !dead.Gone() {
		t.Fatalf("process %d still runs", dead.PID)
	}
}
