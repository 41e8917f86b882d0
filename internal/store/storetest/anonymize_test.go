package storetest_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/storecopy"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// planted are identifiers written into every field a store keeps; none may survive
// an anonymized copy.
var planted = []string{
	"pg-prod-17", "acme.internal", "loadgen-zeta", "loadgen-eta", "10.77.3.21", "fd00:dead:beef", "39157", "zorbauser", "carol.smith",
	"quentin", "evc_ledger", "/srv/pgdata", "cluster-zeta", "nvme7n3", "48213", "zetakernel", "zetacore", "02:42:ac:11:00:07",
	"3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b", "s3cr3t-planted", "orders_svc", "/var/run/zeta",
}

// plant writes runs and an experiment with the identifiers above in every field it
// can reach: target, command, options, settings, host, labels, warnings, reasons, the
// sampled server (data directory, pid, devices, settings, notes), sample errors,
// stalls, plan, axes, cells, slots and hooks.
func plant(t *testing.T, s store.Store) []int64 {
	t.Helper()
	ctx := context.Background()
	origin := time.Unix(1700000000, 0)
	var ids []int64
	for i, client := range []string{"loadgen-zeta.acme.internal", "loadgen-zeta.acme.internal", "loadgen-eta.acme.internal"} {
		r := storetest.Run()
		r.Target = "postgres://zorbauser:xxxxx@pg-prod-17.acme.internal:39157/evc_ledger?sslmode=require"
		r.Command = "fathom run -c 8 --target 'host=10.77.3.21 port=39157 user=orders_svc dbname=evc_ledger' --store /home/quentin/results.db -l owner=carol.smith"
		r.Options = map[string]string{"scale": "3", "spec": "/home/quentin/specs/zeta.yaml"}
		r.Settings = map[string]string{"shared_buffers": "128MB", "data_directory": "/srv/pgdata/cluster-zeta", "port": "39157",
			"listen_addresses": "10.77.3.21,fd00:dead:beef::17", "hba_file": "/srv/pgdata/cluster-zeta/pg_hba.conf",
			"unix_socket_directories": "/var/run/zeta", "server_uuid": "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b",
			"archive_command": "scp %p carol.smith@pg-prod-17.acme.internal:/srv/archive/%f", "cluster_name": "pg-prod-17"}
		r.Host = store.Host{Hostname: client, OS: "linux/amd64", Kernel: "6.1.0-99-zetakernel #1 SMP", CPUModel: "ZetaCore Q9-7777 @ 3.1GHz",
			CPUs: 8, MemoryBytes: 1 << 34, GoVersion: "go1.26"}
		r.Labels = map[string]string{"owner": "carol.smith", "note": "tried on pg-prod-17 (10.77.3.21) by quentin, mac 02:42:ac:11:00:07", "rep": fmt.Sprint(i)}
		r.Warnings = []string{"tables of evc_ledger on pg-prod-17 not vacuumed"}
		id, err := s.CreateRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 3 {
			if err := s.AddInterval(ctx, id, storetest.Interval(k, 10*(k+1))); err != nil {
				t.Fatal(err)
			}
		}
		w, err := s.SampleWriter(ctx, id, origin, &sample.Server{Kind: "postgres", Flavor: "postgresql", DataDir: "/srv/pgdata/cluster-zeta", Local: true,
			PID: 48213, Devices: []string{"nvme7n3", "dm-7"}, DiskScope: "data directory",
			Settings: map[string]string{"checkpoint_timeout": "5min", "data_directory": "/srv/pgdata/cluster-zeta"},
			Notes:    []string{"postmaster 48213 on nvme7n3 (fd00:dead:beef::17)"}, VersionString: "PostgreSQL 15.20 on pg-prod-17"}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for k := -1; k < 3; k++ {
			smp := storetest.Sample(k, origin.Add(time.Duration(k+1)*time.Second), float64(1000+100*k), false)
			smp.Results[1].Error = "connect to 10.77.3.21:39157 (pg-prod-17) as zorbauser: timeout"
			if err := w.Add(ctx, smp); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SaveStalls(ctx, id, map[string]float64{"depth": 0.5}, []store.Stall{{Number: 1, FirstInterval: 1, LastInterval: 1, Throughput: "tps",
			Baseline: 20, Mean: 5, Min: 4, Depth: 0.75, Lost: 15, Cause: "checkpoint", Title: "Checkpoint",
			Explanation: "writes to nvme7n3 under /srv/pgdata/cluster-zeta peaked",
			Settings:    []store.StallSetting{{Name: "data_directory", Value: "/srv/pgdata/cluster-zeta"}, {Name: "checkpoint_timeout", Value: "5min"}},
			Evidence:    []store.StallEvidence{{Metric: "os.disk.writes", Kind: "counter", Baseline: 10, During: 50, Peak: 80, Score: 7}}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishRun(ctx, id, "failed", "lost pg-prod-17.acme.internal:39157 (postmaster 48213), see /home/quentin/log", origin.Add(4*time.Second), json.RawMessage(`{"tps":5.25,"p99_ms":3.5}`)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	e := &store.Experiment{Name: "sweep-zeta", Description: "on pg-prod-17 for carol.smith", PlanPath: "/home/quentin/plans/zeta.yaml", PlanDir: "/home/quentin/plans",
		Plan: "target: postgres://zorbauser@pg-prod-17.acme.internal:39157/evc_ledger\nhooks:\n  before_run: curl -u carol.smith:s3cr3t-planted https://10.77.3.21/x\n", Repetitions: 1,
		Order: "sequential", Target: "postgres://zorbauser@pg-prod-17.acme.internal:39157/evc_ledger", ToolVersion: "test", Host: "loadgen-zeta.acme.internal", PID: 48213, CreatedAt: origin,
		Axes: []store.ExperimentAxis{{Name: "target", Values: []string{"pg-prod-17.acme.internal", "10.77.3.21"}}}}
	cells := []store.ExperimentCell{
		{Cell: 0, Key: "target=pg-prod-17.acme.internal", Coords: []store.Coord{{Axis: "target", Value: "pg-prod-17.acme.internal"}}, Params: json.RawMessage(`{"target":"pg-prod-17.acme.internal","clients":8}`)},
		{Cell: 1, Key: "target=10.77.3.21", Coords: []store.Coord{{Axis: "target", Value: "10.77.3.21"}}, Params: json.RawMessage(`{"target":"10.77.3.21","clients":8}`)}}
	exp, err := s.CreateExperiment(ctx, e, cells, []store.ExperimentSlot{{Seq: 0, Cell: 0, Repetition: 1}, {Seq: 1, Cell: 1, Repetition: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for seq, run := range ids[:2] {
		if _, err := s.StartSlot(ctx, exp, seq, origin); err != nil {
			t.Fatal(err)
		}
		if err := s.LinkRun(ctx, exp, seq, 1, 0, run); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishSlot(ctx, exp, seq, "failed", "pg-prod-17 (10.77.3.21) went away", origin.Add(5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range []store.ExperimentHook{
		{Seq: 0, Attempt: 1, Phase: "before_run", Index: 1, Kind: "shell", Command: "ssh quentin@pg-prod-17.acme.internal 'pg_ctl -D /srv/pgdata/cluster-zeta restart'",
			Output: "waiting for server 48213 on nvme7n3 ... done\n", Error: "exit 1 on loadgen-zeta", Started: origin},
		{Seq: 0, Attempt: 1, Phase: "after_run", Index: 1, Kind: "sql", Command: "CHECKPOINT", Server: "postgres://zorbauser@10.77.3.21:39157/evc_ledger", OK: true, Started: origin},
		{Seq: 0, Attempt: 1, Phase: "restart", Index: 1, Kind: "rdb", Command: "restart from RDB", Server: "redis://pg-prod-17.acme.internal:39157/0", OK: true,
			Output: `{"format":"rdb","seconds":0.5,"file_bytes":100,"keys":3,"used_memory":2000}`, Started: origin, Elapsed: 500 * time.Millisecond},
	} {
		if err := s.AddHook(ctx, exp, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.FinishExperiment(ctx, exp, "failed", "carol.smith stopped it on loadgen-zeta", origin.Add(6*time.Second)); err != nil {
		t.Fatal(err)
	}
	return ids
}

// dump is every row of every table of a store, as text.
func dump(t *testing.T, value string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	if strings.HasPrefix(value, "postgres") {
		c, err := pgx.Connect(ctx, value)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		rows, err := c.Query(ctx, `SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'`)
		if err != nil {
			t.Fatal(err)
		}
		var tables []string
		for rows.Next() {
			var sch, name string
			if err := rows.Scan(&sch, &name); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, pgx.Identifier{sch, name}.Sanitize())
		}
		if len(tables) < 5 {
			t.Fatalf("only %d tables: %v", len(tables), tables)
		}
		for _, tb := range tables {
			rows, err := c.Query(ctx, "SELECT t::text FROM "+tb+" t")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				b.WriteString(tb + " " + line + "\n")
			}
			if rows.Err() != nil {
				t.Fatal(rows.Err())
			}
		}
		return b.String()
	}
	db, err := sql.Open("sqlite", "file:"+value+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	if len(tables) < 5 {
		t.Fatalf("only %d tables: %v", len(tables), tables)
	}
	for _, tb := range tables {
		rows, err := db.Query(`SELECT * FROM "` + tb + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			b.WriteString(tb)
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, " %v", v)
			}
			b.WriteString("\n")
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
	}
	return b.String()
}

// figures are what must come through anonymization unchanged.
func figures(t *testing.T, rec *store.RunRecord) string {
	t.Helper()
	stalls := make([]store.Stall, len(rec.Stalls))
	for i, s := range rec.Stalls {
		stalls[i] = store.Stall{Number: s.Number, FirstInterval: s.FirstInterval, LastInterval: s.LastInterval, Start: s.Start, End: s.End,
			Baseline: s.Baseline, Mean: s.Mean, Min: s.Min, Depth: s.Depth, Lost: s.Lost, Cause: s.Cause, Evidence: s.Evidence}
	}
	j, err := json.Marshal([]any{rec.Intervals, rec.Points, rec.Metrics, stalls, rec.Run.Summary, rec.StallParams, rec.Run.Clients, rec.Run.Duration,
		rec.Run.StartedAt, rec.Run.EndedAt, rec.Run.TxnTypes, rec.Run.Host.CPUs, rec.Run.Host.MemoryBytes, len(rec.Samples)})
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

// An anonymized copy holds none of the planted identifiers in any table of either
// kind of store, keeps every figure, and gives one host one pseudonym.
func TestCopyAnonymizedFindsNoIdentifier(t *testing.T) {
	ctx := context.Background()
	for _, from := range factories {
		for _, to := range factories {
			t.Run(from.name+"_to_"+to.name, func(t *testing.T) {
				srcPath, dstPath := from.fresh(t), to.fresh(t)
				src := from.open(t, srcPath)
				ids := plant(t, src)
				var uuids []string
				for _, id := range ids {
					r, err := src.Run(ctx, id)
					if err != nil {
						t.Fatal(err)
					}
					uuids = append(uuids, r.UUID)
				}
				exps, _ := src.Experiments(ctx, 0)
				uuids = append(uuids, exps[0].UUID)
				before := dump(t, srcPath)
				for _, p := range append(planted, uuids...) { // the planting reached the store
					if !strings.Contains(strings.ToLower(before), strings.ToLower(p)) {
						t.Fatalf("%q is not in the source store", p)
					}
				}
				var out bytes.Buffer
				if err := storecopy.Between(ctx, srcPath, dstPath, nil, storecopy.Options{Anonymize: true}, &out, io.Discard); err != nil {
					t.Fatal(err)
				}
				after := strings.ToLower(dump(t, dstPath))
				for _, p := range append(planted, uuids...) {
					if i := strings.Index(after, strings.ToLower(p)); i >= 0 {
						t.Errorf("%q is in the anonymized copy: …%s…", p, after[max(0, i-150):min(len(after), i+100)])
					}
				}
				if to.name == "sqlite" {
					raw, err := os.ReadFile(dstPath)
					if err != nil {
						t.Fatal(err)
					}
					wal, _ := os.ReadFile(dstPath + "-wal")
					for _, p := range planted {
						if bytes.Contains(bytes.ToLower(append(raw, wal...)), []byte(strings.ToLower(p))) {
							t.Errorf("%q is in the bytes of %s", p, filepath.Base(dstPath))
						}
					}
				}
				dst := to.open(t, dstPath)
				defer dst.Close()
				got, err := dst.Runs(ctx, store.RunFilter{})
				if err != nil || len(got) != 3 {
					t.Fatalf("%d runs (%v)", len(got), err)
				}
				byRep := map[string]store.Run{}
				for _, r := range got {
					byRep[r.Labels["rep"]] = r
				}
				a, b, c := byRep["0"], byRep["1"], byRep["2"]
				if a.Host.Hostname != b.Host.Hostname || a.Host.Hostname == c.Host.Hostname || !strings.HasPrefix(a.Host.Hostname, "host-") {
					t.Errorf("hosts %q %q %q: the first two ran on one host, the third on another", a.Host.Hostname, b.Host.Hostname, c.Host.Hostname)
				}
				if a.Target != b.Target || a.Labels["owner"] != b.Labels["owner"] || a.Host.CPUModel != b.Host.CPUModel || a.Host.CPUModel == "" {
					t.Errorf("one target, owner and CPU, several pseudonyms: %q %q, %q %q, %q %q", a.Target, b.Target, a.Labels["owner"], b.Labels["owner"], a.Host.CPUModel, b.Host.CPUModel)
				}
				for i, id := range ids {
					want, err := src.ExportRun(ctx, id)
					if err != nil {
						t.Fatal(err)
					}
					have, err := dst.ExportRun(ctx, byRep[fmt.Sprint(i)].ID)
					if err != nil {
						t.Fatal(err)
					}
					if x, y := figures(t, want), figures(t, have); x != y {
						t.Errorf("run %d: figures differ:\n%s\n%s", id, x, y)
					}
				}
				dexps, _ := dst.Experiments(ctx, 0)
				ers, err := dst.ExperimentRuns(ctx, dexps[0].ID)
				if err != nil || len(ers) != 2 {
					t.Errorf("experiment runs after the copy: %+v %v", ers, err)
				}
				rec, err := dst.ExportExperiment(ctx, dexps[0].ID)
				if err != nil {
					t.Fatal(err)
				}
				if v := rec.Experiment.Axes[0].Values; len(v) != 2 || rec.Cells[0].Coords[0].Value != v[0] || rec.Cells[1].Coords[0].Value != v[1] ||
					rec.Cells[0].Key != "target="+v[0] || !strings.Contains(string(rec.Cells[0].Params), v[0]) || !strings.Contains(string(rec.Cells[0].Params), `"clients":8`) {
					t.Errorf("axes %v and cells %+v no longer agree", v, rec.Cells)
				}
				src.Close()
			})
		}
	}
}

// --keep-hardware keeps the CPU model and kernel; --pseudonym-key gives the same
// pseudonyms in another copy, so copying again adds nothing.
func TestCopyAnonymizedKeyAndHardware(t *testing.T) {
	ctx := context.Background()
	f := factories[0]
	srcPath := f.fresh(t)
	src := f.open(t, srcPath)
	plant(t, src)
	src.Close()
	key := []byte("0123456789abcdef0123456789abcdef")
	dst1, dst2 := f.fresh(t), f.fresh(t)
	for _, d := range []string{dst1, dst1, dst2} {
		if err := storecopy.Between(ctx, srcPath, d, nil, storecopy.Options{Anonymize: true, KeepHardware: true, Key: key}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	s1, s2 := f.open(t, dst1), f.open(t, dst2)
	defer s1.Close()
	defer s2.Close()
	r1, _ := s1.Runs(ctx, store.RunFilter{})
	r2, _ := s2.Runs(ctx, store.RunFilter{})
	if len(r1) != 3 || len(r2) != 3 {
		t.Fatalf("%d and %d runs: copying twice with one key must add nothing", len(r1), len(r2))
	}
	for i := range r1 {
		if r1[i].UUID != r2[i].UUID || r1[i].Target != r2[i].Target || r1[i].Host.Hostname != r2[i].Host.Hostname {
			t.Errorf("one key, different pseudonyms: %+v\n%+v", r1[i], r2[i])
		}
		if r1[i].Host.CPUModel != "ZetaCore Q9-7777 @ 3.1GHz" || !strings.Contains(r1[i].Host.Kernel, "zetakernel") {
			t.Errorf("--keep-hardware: %+v", r1[i].Host)
		}
	}
	if !reflect.DeepEqual(r1[0].Settings, r2[0].Settings) {
		t.Errorf("settings differ: %v %v", r1[0].Settings, r2[0].Settings)
	}
}
