package tpcb

import (
	"context"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/workload"
)

func TestOptions(t *testing.T) {
	for _, c := range []struct {
		params workload.Params
		scale  int64
		err    string
	}{
		{nil, 0, ""},
		{workload.Params{"scale": ""}, 0, ""},
		{workload.Params{"scale": "3"}, 3, ""},
		{workload.Params{"scale": " 20000 "}, 20000, ""},
		{workload.Params{"scale": "0"}, 0, "option scale: 0 is out of range (1 to 1000000)"},
		{workload.Params{"scale": "-1"}, 0, "option scale: -1 is out of range"},
		{workload.Params{"scale": "1.5"}, 0, `option scale: "1.5" is not a whole number`},
		{workload.Params{"tables": "2"}, 0, "workload tpcb has no option tables (options: scale)"},
	} {
		w, err := Spec(TPCBLike).New(c.params)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.params, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.params, err)
			continue
		}
		if got := w.(*Workload).scaleInEffect(); got != c.scale {
			t.Errorf("%v: scale %d, want %d", c.params, got, c.scale)
		}
	}
}

func TestNamesAndTypes(t *testing.T) {
	for v, want := range map[variant][2]string{
		TPCBLike: {"tpcb", "tpcb-like"}, SelectOnly: {"tpcb-select", "select-only"}, SimpleUpdate: {"tpcb-simple-update", "simple-update"},
	} {
		w, err := New(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		if w.Name() != want[0] || Spec(v).Name != want[0] || len(w.TxnTypes()) != 1 || w.TxnTypes()[0] != want[1] {
			t.Errorf("variant %d: %s %v", v, w.Name(), w.TxnTypes())
		}
		if w.Options()["scale"] != "" {
			t.Errorf("undetected scale reported as %q", w.Options()["scale"])
		}
	}
	w, _ := New(TPCBLike, workload.Params{"scale": "7"})
	if w.Options()["scale"] != "7" {
		t.Errorf("Options: %v", w.Options())
	}
}

func TestTables(t *testing.T) {
	small, big := tables(1), tables(bigintScale)
	if small[2].Columns[0].Type != "int" || big[2].Columns[0].Type != "bigint" || big[3].Columns[2].Type != "bigint" {
		t.Errorf("aid types: %s / %s %s", small[2].Columns[0].Type, big[2].Columns[0].Type, big[3].Columns[2].Type)
	}
	want := map[string]string{
		branches: "bid int not null, bbalance int, filler char(88)",
		tellers:  "tid int not null, bid int, tbalance int, filler char(84)",
		accounts: "aid int not null, bid int, abalance int, filler char(84)",
		history:  "tid int, bid int, aid int, delta int, mtime timestamp, filler char(22)",
	}
	for _, tb := range small {
		var cols []string
		for _, c := range tb.Columns {
			s := c.Name + " " + c.Type
			if c.NotNull {
				s += " not null"
			}
			cols = append(cols, s)
		}
		if got := strings.Join(cols, ", "); got != want[tb.Name] {
			t.Errorf("%s: %s, want %s", tb.Name, got, want[tb.Name])
		}
	}
}

// The statements each variant sends, in order, with consistent values.
func TestTransactions(t *testing.T) {
	ctx := context.Background()
	for v, want := range map[variant][]string{
		TPCBLike:     {"BEGIN", sqlUpdateAccount, sqlSelectAccount, sqlUpdateTeller, sqlUpdateBranch, sqlInsertHistory, "COMMIT"},
		SimpleUpdate: {"BEGIN", sqlUpdateAccount, sqlSelectAccount, sqlInsertHistory, "COMMIT"},
		SelectOnly:   {sqlSelectAccount},
	} {
		w, _ := New(v, workload.Params{"scale": "3"})
		k := w.NewWorker(0, 1)
		c := &fakeConn{record: true}
		if err := k.Bind(ctx, c); err != nil {
			t.Fatal(err)
		}
		for range 2000 {
			c.log = c.log[:0]
			if typ := k.Next(); typ != 0 {
				t.Fatalf("type %d", typ)
			}
			n, err := k.Do(ctx)
			if err != nil || n != len(want) || len(c.log) != len(want) {
				t.Fatalf("variant %d: %d statements, err %v, log %v", v, n, err, c.log)
			}
			for i, s := range want {
				if c.log[i].sql != s {
					t.Fatalf("variant %d statement %d: %q, want %q", v, i, c.log[i].sql, s)
				}
			}
			first := c.log[len(c.log)-1]
			if v == SelectOnly {
				if aid := first.args[0].Int; aid < 1 || aid > 300_000 {
					t.Fatalf("aid %d", aid)
				}
				continue
			}
			upd, hist := c.log[1].args, c.log[len(c.log)-2].args
			delta, aid := upd[0].Int, upd[1].Int
			tid, bid := hist[0].Int, hist[1].Int
			if aid < 1 || aid > 300_000 || bid < 1 || bid > 3 || tid < 1 || tid > 30 || delta < -5000 || delta > 5000 {
				t.Fatalf("values out of range: aid %d bid %d tid %d delta %d", aid, bid, tid, delta)
			}
			if hist[2].Int != aid || hist[3].Int != delta || c.log[2].args[0].Int != aid {
				t.Fatalf("history %v does not match update %v", hist, upd)
			}
			if v == TPCBLike && (c.log[3].args[1].Int != tid || c.log[4].args[1].Int != bid || c.log[3].args[0].Int != delta) {
				t.Fatalf("teller/branch updates %v %v", c.log[3].args, c.log[4].args)
			}
		}
	}
}

// A retry sends the same values again; the same seed and id give the same values.
func TestRetryAndDeterminism(t *testing.T) {
	ctx := context.Background()
	w, _ := New(TPCBLike, workload.Params{"scale": "10"})
	seq := func(id int) []int64 {
		k := w.NewWorker(id, 99)
		c := &fakeConn{record: true}
		_ = k.Bind(ctx, c)
		var out []int64
		for range 50 {
			k.Next()
			c.log = c.log[:0]
			k.Do(ctx)
			a := c.log[5].args
			c.log = c.log[:0]
			k.Do(ctx)
			b := c.log[5].args
			for i := range a {
				if a[i].Int != b[i].Int {
					t.Fatalf("retry sent %v after %v", b, a)
				}
			}
			out = append(out, a[0].Int, a[1].Int, a[2].Int, a[3].Int)
		}
		return out
	}
	a, b, c := seq(0), seq(0), seq(1)
	same := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed and id differ")
		}
		if a[i] == c[i] {
			same++
		}
	}
	if same > len(a)/2 {
		t.Errorf("workers 0 and 1 share %d of %d values", same, len(a))
	}
}

func TestZeroAllocs(t *testing.T) {
	ctx := context.Background()
	for _, v := range []variant{TPCBLike, SelectOnly, SimpleUpdate} {
		w, _ := New(v, workload.Params{"scale": "5"})
		k := w.NewWorker(0, 1)
		if err := k.Bind(ctx, &fakeConn{}); err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(1000, func() { k.Next() }); a != 0 {
			t.Errorf("%s Next: %v allocs", w.Name(), a)
		}
		if a := testing.AllocsPerRun(1000, func() { k.Do(ctx) }); a != 0 {
			t.Errorf("%s Do: %v allocs", w.Name(), a)
		}
	}
}

func BenchmarkNext(b *testing.B) {
	for _, v := range []variant{TPCBLike, SelectOnly} {
		w, _ := New(v, workload.Params{"scale": "100"})
		k := w.NewWorker(0, 1)
		b.Run(w.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				k.Next()
			}
		})
	}
}

func BenchmarkNextDo(b *testing.B) {
	ctx := context.Background()
	w, _ := New(TPCBLike, workload.Params{"scale": "100"})
	k := w.NewWorker(0, 1)
	_ = k.Bind(ctx, &fakeConn{})
	b.ReportAllocs()
	for b.Loop() {
		k.Next()
		k.Do(ctx)
	}
}
