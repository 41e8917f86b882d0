package report

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/store"
)

// BenchmarkExperimentReport renders the report of an experiment of 100 runs × 3,600
// one-second intervals (10 clients values × 10 repetitions), from the store to every
// file's bytes: what `fathom report exp:…` does.
//
//	go test ./internal/report -run XXX -bench ExperimentReport -benchtime 1x
func BenchmarkExperimentReport(b *testing.B) {
	st, runs := benchStore(b, 100, 3600)
	b.ResetTimer()
	for b.Loop() {
		t0, c0 := time.Now(), cpuTime()
		data, err := LoadRuns(context.Background(), st, runs, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := LoadSamples(context.Background(), st, db.Figures(), data, true); err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), cpuTime()
		r, err := New(data, Options{Axes: []string{"clients"}})
		if err != nil {
			b.Fatal(err)
		}
		fs, err := r.Files()
		t2, c2 := time.Now(), cpuTime()
		// CPU time as well as wall time: on a shared machine it varies much less.
		b.Logf("load %v (CPU %v), render %v (CPU %v)", t1.Sub(t0), c1-c0, t2.Sub(t1), c2-c1)
		b.ReportMetric((c2 - c0).Seconds(), "cpu-s/op")
		if err != nil {
			b.Fatal(err)
		}
		size := 0
		for _, f := range fs {
			size += len(f.Data)
		}
		b.ReportMetric(float64(size)/1e6, "MB-written")
		b.ReportMetric(float64(len(fs[0].Data))/1e6, "MB-html")
	}
}

// benchStore writes one run through the store's API and copies it in SQL (writing
// 360,000 intervals one transaction each would take minutes).
func benchStore(b *testing.B, n, intervals int) (store.Store, []*store.Run) {
	b.Helper()
	st, ids := newFixtureStore(b, []fixtureRun{{clients: 10, intervals: intervals, warmup: 60, tps: 500, latencyMs: 2, seed: 1,
		errEvery: 1000, labels: map[string]string{"clients": "10", "rep": "1"}, dip: [2]int{1000, 1100}}})
	db, err := sql.Open("sqlite", "file:"+st.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	// Every column but run_id, so that the copy keeps up with the schema.
	cols := func(table string) string {
		rows, err := db.Query(`SELECT name FROM pragma_table_info(?) WHERE name != 'run_id' ORDER BY cid`, table)
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
		var names []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				b.Fatal(err)
			}
			names = append(names, n)
		}
		return strings.Join(names, ", ")
	}
	ivCols, typeCols := cols("intervals"), cols("interval_types")
	// The runs row is copied column by column too, with its own id, uuid, clients and
	// start (it listed the columns of its day, and failed once the table grew).
	runCols := strings.Split(cols("runs"), ", ")
	runExprs := make([]string, len(runCols))
	for i, c := range runCols {
		switch c {
		case "id":
			runExprs[i] = "%[1]d"
		case "uuid":
			runExprs[i] = "'%[2]d-'||uuid"
		case "clients":
			runExprs[i] = "%[3]d"
		case "started_at":
			runExprs[i] = "%[4]d"
		default:
			runExprs[i] = c
		}
	}
	runCopy := `INSERT INTO runs (` + strings.Join(runCols, ", ") + `) SELECT ` + strings.Join(runExprs, ", ") + ` FROM runs WHERE id = %[5]d`
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := 1; i < n; i++ {
		id := ids[0] + int64(i)
		start := epoch.Add(time.Duration(i) * time.Hour).UnixNano()
		stmts := []string{
			fmt.Sprintf(runCopy, id, i, 10*(i%10+1), start, ids[0]),
			fmt.Sprintf(`INSERT INTO run_labels VALUES (%d, 'clients', '%d'), (%d, 'rep', '%d')`, id, 10*(i%10+1), id, i/10+1),
			fmt.Sprintf(`INSERT INTO intervals (run_id, %s) SELECT %d, %s FROM intervals WHERE run_id = %d`, ivCols, id, ivCols, ids[0]),
			fmt.Sprintf(`INSERT INTO interval_types (run_id, %s) SELECT %d, %s FROM interval_types WHERE run_id = %d`, typeCols, id, typeCols, ids[0]),
		}
		for _, s := range stmts {
			if _, err := tx.Exec(s); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	var runs []*store.Run
	for i := 0; i < n; i++ {
		r, err := st.Run(context.Background(), ids[0]+int64(i))
		if err != nil {
			b.Fatal(err)
		}
		runs = append(runs, r)
	}
	return st, runs
}
