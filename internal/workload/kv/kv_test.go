package kv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/db/redis/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		spec *workload.Spec
		p    workload.Params
	}{
		{KVSpec(), workload.Params{"dist": "pareto"}},
		{KVSpec(), workload.Params{"read": "120"}},
		{KVSpec(), workload.Params{"prefix": "a*"}},
		{KVSpec(), workload.Params{"pipeline": "0"}},
		{BenchSpec(), workload.Params{"tests": "set,nosuch"}},
		{YCSBSpec(), workload.Params{"mix": "g"}},
		{YCSBSpec(), workload.Params{"mix": "e", "scan_length": "0"}},
	} {
		if _, err := tc.spec.New(tc.p); err == nil {
			t.Errorf("%s %v: no error", tc.spec.Name, tc.p)
		}
	}
}

func TestKeyDistributions(t *testing.T) {
	w, err := newKV(KVSpec(), workload.Params{"dist": "hotspot", "keys": "1000", "hot_keys": "10", "hot_share": "90"})
	if err != nil {
		t.Fatal(err)
	}
	wk := w.NewWorker(0, 1).(*kvWorker)
	hot := 0
	for i := 0; i < 10000; i++ {
		k := w.dist.next(wk.g)
		if k < 0 || k >= 1000 {
			t.Fatalf("key %d out of range", k)
		}
		if k < 100 {
			hot++
		}
	}
	if hot < 8700 || hot > 9300 {
		t.Errorf("hotspot 10%%/90%%: %d of 10000 draws hot", hot)
	}
}

// TestWorkloads prepares, runs and cleans up each workload on the test server, and
// checks that cleanup leaves other keys alone.
func TestWorkloads(t *testing.T) {
	tg, err := redis.Open(dbtest.RedisURL(t), target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx := context.Background()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Exec(ctx, "SET fathom:other:keep 1"); err != nil {
		t.Fatal(err)
	}
	defer c.Exec(ctx, "DEL fathom:other:keep")
	for _, tc := range []struct {
		spec *workload.Spec
		p    workload.Params
	}{
		{KVSpec(), workload.Params{"keys": "500", "prefix": "fathom:t:kv:", "dist": "zipfian", "pipeline": "4"}},
		{BenchSpec(), workload.Params{"keys": "500", "prefix": "fathom:t:b:", "tests": "set,get,incr,lpush,lpop,sadd,hset,spop,zadd,zpopmin,lrange_100,mset,ping"}},
		{YCSBSpec(), workload.Params{"keys": "500", "prefix": "fathom:t:y:", "mix": "d"}},
		{YCSBSpec(), workload.Params{"keys": "500", "prefix": "fathom:t:y:", "mix": "f"}},
		{YCSBSpec(), workload.Params{"keys": "500", "prefix": "fathom:t:y:", "mix": "e", "scan_length": "20"}},
	} {
		t.Run(tc.spec.Name, func(t *testing.T) {
			wl, err := tc.spec.New(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if err := wl.Cleanup(ctx, c); err != nil {
				t.Fatal(err)
			}
			if tc.spec.Name != "redis-bench" {
				if err := wl.Setup(ctx, c); !errors.Is(err, workload.ErrNotPrepared) {
					t.Fatalf("Setup before prepare: %v, want ErrNotPrepared", err)
				}
			}
			var last int64
			if err := workload.Prepare(ctx, tg, wl, false, func(_ string, done, total int64) { last = done }); err != nil {
				t.Fatal(err)
			}
			if last != 500 {
				t.Errorf("progress ended at %d, want 500", last)
			}
			if err := wl.Setup(ctx, c); err != nil {
				t.Fatal(err)
			}
			// A run asking for more keys than were loaded (the default 100,000, say)
			// is the user's mistake, and the line names both fixes.
			// (redis-bench runs on any data.)
			more := maps.Clone(tc.p)
			more["keys"] = "600"
			if big, err := tc.spec.New(more); err != nil {
				t.Fatal(err)
			} else if err := big.Setup(ctx, c); tc.spec.Name != "redis-bench" && (!errors.Is(err, workload.ErrMismatch) ||
				!strings.Contains(fmt.Sprint(err), "run with --set keys=500, or prepare again with --set keys=600")) {
				t.Errorf("Setup asking for 600 of 500 keys: %v", err)
			}
			w := wl.NewWorker(0, 42)
			if err := w.Bind(ctx, c); err != nil {
				t.Fatal(err)
			}
			seen := map[int]bool{}
			for i := 0; i < 300; i++ {
				typ := w.Next()
				seen[typ] = true
				n, err := w.Do(ctx)
				if err != nil {
					t.Fatalf("%s: %v", wl.TxnTypes()[typ], err)
				}
				if n < 1 {
					t.Fatalf("%s sent %d commands", wl.TxnTypes()[typ], n)
				}
				// A scan: the index range, then a read of each record in it, the
				// first being the record it started from.
				if wl.TxnTypes()[typ] == "scan" && (n < 2 || n > 21) {
					t.Fatalf("a scan of at most 20 records sent %d commands", n)
				}
			}
			if len(seen) < 2 {
				t.Errorf("only %d transaction types drawn", len(seen))
			}
			if err := wl.Cleanup(ctx, c); err != nil {
				t.Fatal(err)
			}
			for cursor := "0"; ; {
				rows, err := c.Query(ctx, "SCAN ? MATCH ? COUNT 10000", target.Text([]byte(cursor)), target.Text([]byte(wl.Options()["prefix"]+"*")))
				if err != nil || len(rows) < 2 {
					t.Fatalf("SCAN: %v %v", rows, err)
				}
				if len(rows[1]) != 0 {
					t.Fatalf("keys left after cleanup: %v", rows[1])
				}
				if cursor = rows[0][0]; cursor == "0" {
					break
				}
			}
			if rows, _ := c.Query(ctx, "EXISTS fathom:other:keep"); rows[0][0] != "1" {
				t.Fatal("cleanup deleted a key outside its prefix")
			}
		})
	}
}

// BenchmarkKVWorker: allocations per transaction of redis-kv's hot path.
func BenchmarkKVWorker(b *testing.B) {
	tg, err := redis.Open(dbtest.RedisURL(b), target.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	ctx := context.Background()
	c, _ := tg.Connect(ctx)
	defer c.Close()
	wl, _ := KVSpec().New(workload.Params{"keys": "1000", "prefix": "fathom:bench:kv:", "read": "50"})
	w := wl.NewWorker(0, 1)
	if err := w.Bind(ctx, c); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Next()
		if _, err := w.Do(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = wl.Cleanup(ctx, c)
}

// redis-ycsb's index: prepare and inserts keep every record key in it, a scan walks it
// in byte order from a record, and mix e refuses data whose index is missing.
func TestYCSBScanIndex(t *testing.T) {
	tg, err := redis.Open(dbtest.RedisURL(t), target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx := context.Background()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wl, err := YCSBSpec().New(workload.Params{"keys": "300", "prefix": "fathom:t:ye:", "mix": "e", "scan_length": "5"})
	if err != nil {
		t.Fatal(err)
	}
	defer wl.Cleanup(ctx, c)
	if err := workload.Prepare(ctx, tg, wl, false, nil); err != nil {
		t.Fatal(err)
	}
	card := func() string {
		rows, err := c.Query(ctx, "ZCARD fathom:t:ye:index")
		if err != nil {
			t.Fatal(err)
		}
		return rows[0][0]
	}
	if got := card(); got != "300" {
		t.Fatalf("index after prepare: %s keys, want 300", got)
	}
	rows, err := c.Query(ctx, "ZRANGEBYLEX fathom:t:ye:index [fathom:t:ye:user1 + LIMIT 0 4")
	if err != nil || len(rows) != 4 || rows[0][0] != "fathom:t:ye:user1" || rows[1][0] != "fathom:t:ye:user10" || rows[3][0] != "fathom:t:ye:user101" {
		t.Fatalf("index range: %v %v", rows, err)
	}
	if err := wl.Setup(ctx, c); err != nil {
		t.Fatal(err)
	}
	w := wl.NewWorker(0, 7)
	if err := w.Bind(ctx, c); err != nil {
		t.Fatal(err)
	}
	inserts := 0
	for i := 0; i < 400; i++ {
		typ := w.Next()
		if _, err := w.Do(ctx); err != nil {
			t.Fatal(err)
		}
		if wl.TxnTypes()[typ] == "insert" {
			inserts++
		}
	}
	if inserts == 0 || card() != fmt.Sprint(300+inserts) {
		t.Errorf("%d inserts, index has %s keys", inserts, card())
	}
	if err := c.Exec(ctx, "DEL fathom:t:ye:index"); err != nil {
		t.Fatal(err)
	}
	if err := wl.Setup(ctx, c); !errors.Is(err, workload.ErrNotPrepared) || !strings.Contains(err.Error(), "prepare again") {
		t.Errorf("mix e without its index: %v", err)
	}
}

// BenchmarkYCSBScan: allocations per scan of redis-ycsb's mix e.
func BenchmarkYCSBScan(b *testing.B) {
	tg, err := redis.Open(dbtest.RedisURL(b), target.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	ctx := context.Background()
	c, _ := tg.Connect(ctx)
	defer c.Close()
	wl, _ := YCSBSpec().New(workload.Params{"keys": "1000", "prefix": "fathom:bench:ye:", "mix": "e", "scan_length": "10"})
	if err := workload.Prepare(ctx, tg, wl, false, nil); err != nil {
		b.Fatal(err)
	}
	defer wl.Cleanup(ctx, c)
	if err := wl.Setup(ctx, c); err != nil {
		b.Fatal(err)
	}
	w := wl.NewWorker(0, 1)
	if err := w.Bind(ctx, c); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Next()
		if _, err := w.Do(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
