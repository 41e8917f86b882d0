package measure

import (
	"math"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// A dense histogram drained into an HDR histogram gives exactly the HDR histogram of
// the same values recorded directly: same buckets, counts, min, max and total.
func TestDenseMatchesHDR(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := newDense()
	for round := 0; round < 3; round++ {
		want := NewHistogram()
		values := []int64{0, 1, 999, minLatency, minLatency + 1, 2047 << 9, 2048 << 9, maxLatency - 1, maxLatency, maxLatency + 5}
		for i := 0; i < 20000; i++ {
			// Latency-like: log-uniform from 1µs to 1h.
			values = append(values, int64(float64(minLatency)*math.Pow(3.6e9, rng.Float64())))
		}
		for _, v := range values {
			d.record(v)
			record(want, v)
		}
		var got *hdr.Histogram
		d.drainInto(&got)
		if !got.Equals(want) {
			t.Fatalf("round %d: drained histogram differs: total %d/%d, max %d/%d, p50 %d/%d", round, got.TotalCount(), want.TotalCount(), got.Max(), want.Max(), got.ValueAtQuantile(50), want.ValueAtQuantile(50))
		}
		if d.totalCount() != 0 || d.used != [usedWords]uint64{} {
			t.Fatalf("round %d: not empty after drain", round)
		}
		for bi, b := range d.blocks {
			for i, c := range b {
				if c != 0 {
					t.Fatalf("round %d: count %d left at index %d", round, c, bi*blockLen+i)
				}
			}
		}
	}
	if n := len(NewHistogram().Export().Counts); denseLen > n || denseLen > denseBlocks*blockLen {
		t.Fatalf("%d buckets: hdr has %d, the blocks %d", denseLen, n, denseBlocks*blockLen)
	}
}

// One client's interval: 3,000 latencies around 1ms with a tail to 100ms.
func intervalValues() []int64 {
	rng := rand.New(rand.NewPCG(3, 4))
	vs := make([]int64, 3000)
	for i := range vs {
		vs[i] = int64(500_000 + rng.ExpFloat64()*800_000)
		if i%500 == 0 {
			vs[i] = 100_000_000
		}
	}
	return vs
}

// What a cut costs per client and outcome with the dense counts.
func BenchmarkDrain(b *testing.B) {
	vs := intervalValues()
	d := newDense()
	dst := NewHistogram()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for _, v := range vs {
			d.record(v)
		}
		b.StartTimer()
		d.drainInto(&dst)
	}
}

// The same with an HDR histogram per client: Merge, then Reset.
func BenchmarkMergeHDR(b *testing.B) {
	vs := intervalValues()
	h := NewHistogram()
	dst := NewHistogram()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for _, v := range vs {
			record(h, v)
		}
		b.StartTimer()
		dst.Merge(h)
		h.Reset()
	}
}

// A count that a 32-bit counter cannot hold goes to the spill histogram, and the
// drained histogram still has every value.
func TestDenseSpill(t *testing.T) {
	d := newDense()
	d.record(5000)
	i := denseIndex(5000)
	d.blocks[i>>blockBits][i&(blockLen-1)] = math.MaxInt32 - 1
	d.total = math.MaxInt32 - 1
	for k := 0; k < 3; k++ {
		d.record(5000)
	}
	var h *hdr.Histogram
	d.drainInto(&h)
	if got, want := h.TotalCount(), int64(math.MaxInt32)+2; got != want {
		t.Fatalf("drained %d values, want %d", got, want)
	}
	if d.spill.TotalCount() != 0 || d.totalCount() != 0 {
		t.Fatal("not empty after drain")
	}
}
