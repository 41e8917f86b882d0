package measure

import (
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

func TestSlotSwapLosesNothing(t *testing.T) {
	const n = 200000
	s := NewSlot(NewRecorder(2))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			r := s.Begin()
			r.Success(i%2, int64(1000+i%5000), 0)
			r.Counts[i%2].Statements++
			s.End()
		}
	}()
	var ok, stmts, hist int64
	spare := NewRecorder(2)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	drain := func() {
		old := s.swap(spare)
		for i := 0; i < 2; i++ {
			ok += old.Counts[i].OK
			stmts += old.Counts[i].Statements
			if old.latency[i] != nil {
				hist += old.latency[i].totalCount()
			}
		}
		old.Reset()
		spare = old
	}
	for {
		select {
		case <-done:
			drain()
			if ok != n || stmts != n || hist != n {
				t.Fatalf("after swaps: ok=%d statements=%d histogram=%d, want %d each", ok, stmts, hist, n)
			}
			return
		default:
			drain()
			time.Sleep(50 * time.Microsecond)
		}
	}
}

func TestRecordNoAllocs(t *testing.T) {
	r := NewRecorder(1)
	r.Success(0, 5000, 4000) // allocate the histograms
	allocs := testing.AllocsPerRun(1000, func() {
		r.Success(0, 123456, 100000)
	})
	if allocs != 0 {
		t.Fatalf("Success allocates %v times per call", allocs)
	}
}

func TestRecordClampsOutOfRange(t *testing.T) {
	r := NewRecorder(1)
	r.Success(0, 10, 0)                   // below 1µs
	r.Success(0, 5*3600*1_000_000_000, 0) // above 1h
	if got := r.latency[0].totalCount(); got != 2 {
		t.Fatalf("recorded %d of 2 out-of-range values", got)
	}
}

func TestIntervalMergeEncodeSummary(t *testing.T) {
	types := []string{"a", "b"}
	mk := func(idx int, warm bool, okA int) *Interval {
		rec := NewRecorder(2)
		for i := 0; i < okA; i++ {
			rec.Success(0, int64((i+1)*1000_000), 0) // 1ms, 2ms, ...
		}
		rec.Success(1, 5_000_000, 0)
		rec.Failure(1, 7_000_000)
		rec.Counts[1].Errors[target.ClassDeadlock] = 2
		rec.Counts[1].Retries = 1
		rec.Counts[0].Statements = int64(okA * 3)
		iv := NewInterval(idx, types)
		iv.Start, iv.End, iv.Warmup = time.Duration(idx)*time.Second, time.Duration(idx+1)*time.Second, warm
		iv.AddRecorder(rec)
		return iv
	}
	ivs := []*Interval{mk(0, true, 1000), mk(1, false, 100), mk(2, false, 100)}
	s := Summarize(types, ivs)
	if s.Intervals != 2 || s.Seconds != 2 {
		t.Fatalf("warm-up not excluded: %d intervals, %v s", s.Intervals, s.Seconds)
	}
	if s.Transactions != 202 || s.TPS != 101 {
		t.Fatalf("transactions=%d tps=%v, want 202 and 101", s.Transactions, s.TPS)
	}
	if s.Errors != 4 || s.Failed != 2 || s.Retries != 2 || s.ErrorsBy["deadlock"] != 4 {
		t.Fatalf("errors=%d failed=%d retries=%d by=%v", s.Errors, s.Failed, s.Retries, s.ErrorsBy)
	}
	a := s.ByTxn["a"].Latency
	// Values 1..100 ms twice: the median is 50 ms, p99 99 ms, max 100 ms (3 significant figures).
	if a.P50 < 49.9 || a.P50 > 50.1 || a.P99 < 98.9 || a.P99 > 99.1 || a.Max < 99.9 || a.Max > 100.1 {
		t.Fatalf("latency of a: %+v", a)
	}
	if s.QPS != 300 {
		t.Fatalf("qps=%v, want 300", s.QPS)
	}
	// Encoded histograms decode to the same percentiles.
	b, err := Encode(ivs[1].Types[0].Latency)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 100 || h.ValueAtQuantile(99) != ivs[1].Types[0].Latency.ValueAtQuantile(99) {
		t.Fatalf("decoded histogram differs: count %d", h.TotalCount())
	}
	if _, err := Decode([]byte("not a histogram")); err == nil {
		t.Fatal("garbage decoded without error")
	}
}

func BenchmarkRecordSuccess(b *testing.B) {
	s := NewSlot(NewRecorder(1))
	r := s.Begin()
	r.Success(0, 1000, 0)
	s.End()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := s.Begin()
		r.Success(0, int64(100000+i%100000), 0)
		r.Counts[0].Statements++
		s.End()
	}
}
