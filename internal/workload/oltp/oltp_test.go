package oltp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	my "github.com/fathom-lab/fathom/internal/db/mysql/target"
	pg "github.com/fathom-lab/fathom/internal/db/postgres/target"
	lite "github.com/fathom-lab/fathom/internal/db/sqlite/target"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

func TestOptionDefaults(t *testing.T) {
	w, err := resolveScript("oltp_read_write", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := w.cfg
	if c.tables != 1 || c.tableSize != 0 || c.sizeGiven || c.rangeSize != 100 || c.pointSelects != 10 ||
		c.simpleRanges != 1 || c.sumRanges != 1 || c.orderRanges != 1 || c.distinctRanges != 1 || !c.rangeSelects ||
		c.indexUpdates != 1 || c.nonIndexUpd != 1 || c.deleteInserts != 1 || c.skipTrx || c.randType.String() != "special" ||
		c.params.ZipfExp != 0.8 || c.params.Iter != 12 || c.params.SpecialPct != 1 || c.params.SpecialRes != 75 {
		t.Errorf("defaults: %+v", c)
	}
	o := w.Options()
	if o["table_size"] != "" || o["rand_type"] != "special" || o["point_selects"] != "10" || o["skip_trx"] != "off" {
		t.Errorf("Options: %v", o)
	}
	w.cfg.tableSize = 1234
	if w.Options()["table_size"] != "1234" {
		t.Errorf("detected size not reported: %v", w.Options())
	}
}

func TestOptionErrors(t *testing.T) {
	for _, c := range []struct {
		wl     string
		params workload.Params
		err    string
	}{
		{"oltp_read_write", workload.Params{"tables": "0"}, "option tables: 0 is out of range (1 to 100000)"},
		{"oltp_read_write", workload.Params{"table_size": "0"}, "option table_size: 0 is out of range (1 to 2147483647)"},
		{"oltp_read_write", workload.Params{"table_size": "ten"}, `option table_size: "ten" is not a whole number`},
		{"oltp_read_write", workload.Params{"point_selects": "-1"}, "option point_selects: -1 is out of range"},
		{"oltp_read_write", workload.Params{"range_size": "0"}, "option range_size: 0 is out of range"},
		{"oltp_read_write", workload.Params{"skip_trx": "maybe"}, `option skip_trx: "maybe" is not on or off`},
		{"oltp_read_write", workload.Params{"rand_type": "pareto"}, `option rand_type: unknown distribution "pareto" (use uniform, zipfian, gaussian, special)`},
		{"oltp_read_write", workload.Params{"rand_zipfian_exp": "-1"}, "option rand_zipfian_exp"},
		{"oltp_read_write", workload.Params{"rand_spec_res": "100"}, "option rand_spec_res: 100 is out of range (0 to 99)"},
		{"oltp_read_write", workload.Params{"scale": "1"}, "workload oltp_read_write has no option scale"},
		{"oltp_point_select", workload.Params{"point_selects": "3"}, "workload oltp_point_select has no option point_selects"},
		{"oltp_insert", workload.Params{"skip_trx": "on"}, "has no option skip_trx"},
	} {
		_, err := Spec(c.wl).New(c.params)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %v: %v, want %q", c.wl, c.params, err, c.err)
		}
	}
	w, err := resolveScript("oltp_read_only", workload.Params{"tables": "4", "table_size": "500", "rand_type": "Zipfian", "skip_trx": "on", "range_selects": "off"})
	if err != nil {
		t.Fatal(err)
	}
	if w.cfg.tables != 4 || w.cfg.tableSize != 500 || !w.cfg.sizeGiven || w.cfg.randType.String() != "zipfian" || !w.cfg.skipTrx || w.cfg.rangeSelects {
		t.Errorf("parsed: %+v", w.cfg)
	}
	if _, err := resolveScript("oltp_nope", nil); err == nil {
		t.Error("unknown script accepted")
	}
}

func TestScriptOptions(t *testing.T) {
	common := []string{"rand_spec_iter", "rand_spec_pct", "rand_spec_res", "rand_type", "rand_zipfian_exp", "table_size", "tables"}
	for name, extra := range map[string][]string{
		"oltp_point_select":     nil,
		"oltp_insert":           nil,
		"oltp_delete":           nil,
		"oltp_update_index":     {"index_updates"},
		"oltp_update_non_index": {"non_index_updates"},
		"oltp_write_only":       {"delete_inserts", "index_updates", "non_index_updates", "skip_trx"},
		"oltp_read_only":        {"distinct_ranges", "order_ranges", "point_selects", "range_selects", "range_size", "simple_ranges", "skip_trx", "sum_ranges"},
		"oltp_read_write": {"delete_inserts", "distinct_ranges", "index_updates", "non_index_updates", "order_ranges", "point_selects",
			"range_selects", "range_size", "simple_ranges", "skip_trx", "sum_ranges"},
	} {
		want := append(append([]string(nil), common...), extra...)
		slices.Sort(want)
		if got := optionNames(Spec(name)); !slices.Equal(got, want) {
			t.Errorf("%s options: %v, want %v", name, got, want)
		}
	}
	if len(names()) != 8 {
		t.Errorf("Names: %v", names())
	}
}

func TestTableDef(t *testing.T) {
	want := map[string]string{
		"postgres": "CREATE TABLE sbtest3 (id serial, k integer NOT NULL DEFAULT 0, c char(120) NOT NULL DEFAULT '', pad char(60) NOT NULL DEFAULT '', PRIMARY KEY (id))",
		"mysql":    "CREATE TABLE sbtest3 (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id)) ENGINE=InnoDB",
		"sqlite":   "CREATE TABLE sbtest3 (id INTEGER PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '')",
	}
	for _, d := range []*target.Dialect{pg.SQLDialect, my.SQLDialect, lite.SQLDialect} {
		sql, err := d.CreateTable(tableDef(3), false)
		if err != nil || sql != want[d.Name] {
			t.Errorf("%s:\n got %s (%v)\nwant %s", d.Name, sql, err, want[d.Name])
		}
		if pk := d.AddPrimaryKey(tableDef(3)); pk != "" {
			t.Errorf("%s: primary key added again: %s", d.Name, pk)
		}
		if ix := d.CreateIndexes(tableDef(3)); len(ix) != 1 || ix[0] != "CREATE INDEX k_3 ON sbtest3 (k)" {
			t.Errorf("%s: indexes %v", d.Name, ix)
		}
	}
}

var tableNum = regexp.MustCompile(`sbtest(\d+)`)

// shape reduces a logged statement to its text with the table number replaced by N.
func shape(sql string) string { return tableNum.ReplaceAllString(sql, "sbtestN") }

func TestTransactions(t *testing.T) {
	ctx := context.Background()
	ps := "SELECT c FROM sbtestN WHERE id=?"
	rng := []string{
		"SELECT c FROM sbtestN WHERE id BETWEEN ? AND ?",
		"SELECT SUM(k) FROM sbtestN WHERE id BETWEEN ? AND ?",
		"SELECT c FROM sbtestN WHERE id BETWEEN ? AND ? ORDER BY c",
		"SELECT DISTINCT c FROM sbtestN WHERE id BETWEEN ? AND ? ORDER BY c",
	}
	writes := []string{
		"UPDATE sbtestN SET k=k+1 WHERE id=?",
		"UPDATE sbtestN SET c=? WHERE id=?",
		"DELETE FROM sbtestN WHERE id=?",
		"INSERT INTO sbtestN (id, k, c, pad) VALUES (?, ?, ?, ?)",
	}
	tenPS := slices.Repeat([]string{ps}, 10)
	seq := func(parts ...[]string) []string { return slices.Concat(parts...) }
	for _, c := range []struct {
		wl     string
		params workload.Params
		want   []string
	}{
		{"oltp_point_select", nil, []string{ps}},
		{"oltp_read_only", nil, seq([]string{"BEGIN"}, tenPS, rng, []string{"COMMIT"})},
		{"oltp_read_only", workload.Params{"skip_trx": "on", "range_selects": "off", "point_selects": "2"}, []string{ps, ps}},
		{"oltp_read_only", workload.Params{"sum_ranges": "0", "point_selects": "0", "simple_ranges": "2"}, seq([]string{"BEGIN", rng[0], rng[0], rng[2], rng[3], "COMMIT"})},
		{"oltp_read_write", nil, seq([]string{"BEGIN"}, tenPS, rng, writes, []string{"COMMIT"})},
		{"oltp_write_only", nil, seq([]string{"BEGIN"}, writes, []string{"COMMIT"})},
		{"oltp_write_only", workload.Params{"delete_inserts": "2", "index_updates": "0"}, seq([]string{"BEGIN"}, writes[1:], writes[2:], []string{"COMMIT"})},
		{"oltp_update_index", nil, writes[:1]},
		{"oltp_update_index", workload.Params{"index_updates": "3"}, slices.Repeat(writes[:1], 3)},
		{"oltp_update_non_index", nil, writes[1:2]},
		{"oltp_insert", nil, []string{"INSERT INTO sbtestN (k, c, pad) VALUES (?, ?, ?)"}},
		{"oltp_delete", nil, writes[2:3]},
	} {
		p := workload.Params{"tables": "3", "table_size": "1000"}
		for k, v := range c.params {
			p[k] = v
		}
		w, err := resolveScript(c.wl, p)
		if err != nil {
			t.Fatal(err)
		}
		k := w.NewWorker(1, 5)
		fc := &fakeConn{record: true}
		if err := k.Bind(ctx, fc); err != nil {
			t.Fatal(err)
		}
		tablesSeen := map[string]bool{}
		for range 300 {
			fc.log = fc.log[:0]
			if k.Next() != 0 {
				t.Fatal("type")
			}
			n, err := k.Do(ctx)
			var got []string
			for _, l := range fc.log {
				got = append(got, shape(l.sql))
				tablesSeen[tableNum.FindString(l.sql)] = true
			}
			if err != nil || n != len(c.want) || !slices.Equal(got, c.want) {
				t.Fatalf("%s %v: %d statements (%v):\n got %q\nwant %q", c.wl, c.params, n, err, got, c.want)
			}
			checkValues(t, c.wl, fc.log, 1000, 100)
		}
		delete(tablesSeen, "")
		if len(tablesSeen) != 3 {
			t.Errorf("%s: tables used %v", c.wl, tablesSeen)
		}
	}
}

// checkValues checks the ranges of the arguments and that a DELETE/INSERT pair shares
// its id and table.
func checkValues(t *testing.T, wl string, log []call, size, rangeSize int64) {
	t.Helper()
	inRange := func(v int64) bool { return v >= 1 && v <= size }
	for i, l := range log {
		a := l.args
		switch s := shape(l.sql); {
		case strings.Contains(s, "BETWEEN"):
			if !inRange(a[0].Int) || a[1].Int != a[0].Int+rangeSize-1 {
				t.Fatalf("%s: range %d..%d", wl, a[0].Int, a[1].Int)
			}
		case strings.HasPrefix(s, "UPDATE sbtestN SET c"):
			if len(a[0].Text) != 119 || !inRange(a[1].Int) {
				t.Fatalf("%s: %q %d", wl, a[0].Text, a[1].Int)
			}
		case strings.HasPrefix(s, "INSERT INTO sbtestN (id"):
			prev := log[i-1]
			if !strings.HasPrefix(prev.sql, "DELETE") || prev.args[0].Int != a[0].Int || tableNum.FindString(prev.sql) != tableNum.FindString(l.sql) {
				t.Fatalf("%s: insert %v after %s %v", wl, a[0].Int, prev.sql, prev.args)
			}
			if !inRange(a[1].Int) || len(a[2].Text) != 119 || len(a[3].Text) != 59 {
				t.Fatalf("%s: insert values %+v", wl, a)
			}
		case strings.HasPrefix(s, "INSERT"):
			if !inRange(a[0].Int) || len(a[1].Text) != 119 || len(a[2].Text) != 59 {
				t.Fatalf("%s: insert values %+v", wl, a)
			}
		case strings.Contains(s, "id=?"):
			if !inRange(a[0].Int) {
				t.Fatalf("%s: id %d", wl, a[0].Int)
			}
		}
	}
}

// The default distribution is sysbench's special: most ids in the middle 1%.
func TestIDDistribution(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		randType string
		min, max float64
	}{{"special", 0.7, 0.8}, {"uniform", 0.005, 0.02}} {
		w, _ := resolveScript("oltp_point_select", workload.Params{"table_size": "100000", "rand_type": c.randType})
		k := w.NewWorker(0, 1)
		fc := &fakeConn{record: true}
		_ = k.Bind(ctx, fc)
		hot := 0
		const n = 20000
		for range n {
			fc.log = fc.log[:0]
			k.Next()
			k.Do(ctx)
			if id := fc.log[0].args[0].Int; id >= 49500 && id <= 50500 {
				hot++
			}
		}
		if f := float64(hot) / n; f < c.min || f > c.max {
			t.Errorf("%s: %.3f of ids in the middle 1%%", c.randType, f)
		}
	}
}

func TestRetrySendsSameValues(t *testing.T) {
	ctx := context.Background()
	w, _ := resolveScript("oltp_read_write", workload.Params{"tables": "4", "table_size": "1000"})
	k := w.NewWorker(0, 1)
	fc := &fakeConn{record: true}
	_ = k.Bind(ctx, fc)
	for range 50 {
		k.Next()
		fc.log = fc.log[:0]
		k.Do(ctx)
		first := fmt.Sprint(fc.log)
		fc.log = fc.log[:0]
		k.Do(ctx)
		if again := fmt.Sprint(fc.log); again != first {
			t.Fatalf("retry differs:\n%s\n%s", first, again)
		}
	}
}

func TestDeleteInsertConflictIsRetryable(t *testing.T) {
	ctx := context.Background()
	w, _ := resolveScript("oltp_write_only", workload.Params{"table_size": "1000"})
	k := w.NewWorker(0, 1)
	dup := &target.Error{Class: target.ClassConstraint, Code: "23505", Msg: "duplicate key"}
	other := &target.Error{Class: target.ClassConstraint, Code: "23505", Msg: "duplicate key"}
	fc := &fakeConn{fail: map[string]error{"INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)": dup}}
	_ = k.Bind(ctx, fc)
	k.Next()
	n, err := k.Do(ctx)
	if n != 5 || !target.ClassOf(err).Retryable() || !errors.Is(err, dup) {
		t.Fatalf("%d statements, %v (class %v)", n, err, target.ClassOf(err))
	}
	var te *target.Error
	if !errors.As(err, &te) || te.Code != "23505" || !strings.Contains(te.Error(), "duplicate key") {
		t.Errorf("error %v", err)
	}
	// Elsewhere a constraint error stays what it is.
	w, _ = resolveScript("oltp_insert", workload.Params{"table_size": "1000"})
	k = w.NewWorker(0, 1)
	fc = &fakeConn{fail: map[string]error{"INSERT INTO sbtest1 (k, c, pad) VALUES (?, ?, ?)": other}}
	_ = k.Bind(ctx, fc)
	k.Next()
	if _, err := k.Do(ctx); target.ClassOf(err) != target.ClassConstraint {
		t.Errorf("oltp_insert: %v", err)
	}
}

func TestDeterminism(t *testing.T) {
	ctx := context.Background()
	w, _ := resolveScript("oltp_read_write", workload.Params{"tables": "2", "table_size": "100000"})
	run := func(id int) string {
		k := w.NewWorker(id, 77)
		fc := &fakeConn{record: true}
		_ = k.Bind(ctx, fc)
		for range 20 {
			k.Next()
			k.Do(ctx)
		}
		return fmt.Sprint(fc.log)
	}
	if first, again := run(3), run(3); first != again {
		t.Error("same seed and id differ")
	}
	if run(3) == run(4) {
		t.Error("different ids give the same transactions")
	}
}

func TestZeroAllocs(t *testing.T) {
	ctx := context.Background()
	for _, name := range names() {
		w, _ := resolveScript(name, workload.Params{"tables": "4", "table_size": "10000"})
		k := w.NewWorker(0, 1)
		if err := k.Bind(ctx, &fakeConn{}); err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(500, func() { k.Next() }); a != 0 {
			t.Errorf("%s Next: %v allocs", name, a)
		}
		if a := testing.AllocsPerRun(500, func() { k.Do(ctx) }); a != 0 {
			t.Errorf("%s Do: %v allocs", name, a)
		}
	}
}

func BenchmarkNext(b *testing.B) {
	for _, name := range []string{"oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_insert"} {
		for _, rt := range []string{"special", "uniform", "zipfian"} {
			w, _ := resolveScript(name, workload.Params{"tables": "16", "table_size": "1000000", "rand_type": rt})
			k := w.NewWorker(0, 1)
			b.Run(name+"/"+rt, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					k.Next()
				}
			})
		}
	}
}

// Any option value either fails with an "option NAME:" error or gives a usable worker.
func FuzzOptions(f *testing.F) {
	for _, s := range [][2]string{{"tables", "0"}, {"table_size", "ten"}, {"rand_type", "zipfian"}, {"rand_zipfian_exp", "1e308"},
		{"skip_trx", "on"}, {"range_size", "1"}, {"rand_spec_pct", "100"}, {"rand_spec_res", "0"}, {"rand_zipfian_exp", "NaN"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		w, err := resolveScript("oltp_read_write", workload.Params{name: value})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "option "+name+":") && !strings.Contains(err.Error(), "has no option") {
				t.Fatalf("%s=%q: %v", name, value, err)
			}
			return
		}
		if w.cfg.tables > 16 || w.cfg.pointSelects > 1000 || w.cfg.deleteInserts > 1000 || w.cfg.simpleRanges > 1000 {
			return // valid but too large to run here
		}
		k := w.NewWorker(0, 1)
		fc := &fakeConn{record: true}
		if err := k.Bind(context.Background(), fc); err != nil {
			t.Fatal(err)
		}
		k.Next()
		if _, err := k.Do(context.Background()); err != nil {
			t.Fatal(err)
		}
		size := w.cfg.tableSize
		if size == 0 {
			size = defaultTableSize
		}
		checkValues(t, "fuzz", fc.log, size, w.cfg.rangeSize)
	})
}
