package measure

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The sparse decoder must answer exactly as the library's dense histogram does.
func TestSparseMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var dec SparseDecoder
	qs := []float64{0, 0.1, 1, 25, 50, 90, 95, 99, 99.9, 99.99, 100}
	var prev *hdr.Histogram
	var prevSparse *Sparse
	for trial := 0; trial < 200; trial++ {
		h := NewHistogram()
		n := rng.IntN(5000)
		if trial == 0 {
			n = 0
		}
		scale := []float64{1e3, 1e5, 1e7, 1e9, 1e12}[rng.IntN(5)]
		for i := 0; i < n; i++ {
			v := int64(rng.ExpFloat64() * scale)
			if rng.IntN(50) == 0 {
				v = maxLatency + 5 // clamped like the recorder does
			}
			record(h, v)
			if rng.IntN(7) == 0 {
				_ = h.RecordValues(v%maxLatency+minLatency, 1<<uint(rng.IntN(40)))
			}
		}
		blob, err := Encode(h)
		if err != nil {
			t.Fatal(err)
		}
		s, err := dec.Decode(blob)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if s.TotalCount() != h.TotalCount() || (n > 0 && s.max() != h.Max()) || s.mean() != h.Mean() {
			t.Fatalf("trial %d: total %d/%d max %d/%d mean %v/%v", trial, s.TotalCount(), h.TotalCount(), s.max(), h.Max(), s.mean(), h.Mean())
		}
		for _, q := range qs {
			if a, b := s.valueAtQuantile(q), h.ValueAtQuantile(q); a != b {
				t.Fatalf("trial %d q %v: sparse %d dense %d", trial, q, a, b)
			}
		}
		if s.Latency() != LatencyOf(h) || s.Figures().Latency() != LatencyOf(h) {
			t.Fatalf("trial %d: Latency %+v vs %+v", trial, s.Latency(), LatencyOf(h))
		}
		if f := s.Figures(); n > 0 && (f.P50 != h.ValueAtQuantile(50) || f.P90 != h.ValueAtQuantile(90) || f.P95 != h.ValueAtQuantile(95) ||
			f.P99 != h.ValueAtQuantile(99) || f.P999 != h.ValueAtQuantile(99.9) || f.Max != h.Max() || f.Mean != h.Mean()) {
			t.Fatalf("trial %d: figures %+v", trial, f)
		}
		// The uncompressed form decodes to the same histogram, with or without reuse.
		raw, err := dec.uncompressed(blob)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if n > 0 && raw[0] != 0x1c {
			t.Fatalf("trial %d: uncompressed form starts with %#x", trial, raw[0])
		}
		// EncodeV2 writes exactly those bytes, and Decode reads them back into the
		// dense histogram hdr.Decode makes of Encode's form.
		if v2 := EncodeV2(h); !bytes.Equal(v2, raw) {
			t.Fatalf("trial %d: EncodeV2 differs from the uncompressed Encode:\n%x\n%x", trial, v2, raw)
		}
		if n > 0 {
			dv2, err := Decode(raw)
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			dz, err := Decode(blob)
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			if !reflect.DeepEqual(dv2.Export(), dz.Export()) || !reflect.DeepEqual(dv2.Export().Counts, h.Export().Counts) ||
				LatencyOf(dv2) != LatencyOf(h) || dv2.Min() != h.Min() || dv2.TotalCount() != h.TotalCount() {
				t.Fatalf("trial %d: Decode(EncodeV2) differs from Decode(Encode)", trial)
			}
		}
		for _, b := range [][]byte{raw, blob} {
			u, err := dec.Decode(b)
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			tmp, err := dec.DecodeTemp(b)
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			if !reflect.DeepEqual(u, s) || tmp.TotalCount() != s.TotalCount() || tmp.Figures() != s.Figures() ||
				(n > 0 && !reflect.DeepEqual(tmp.idx, s.idx)) {
				t.Fatalf("trial %d: decoding the uncompressed form differs", trial)
			}
		}
		got := make([]int64, len(qs))
		s.Quantiles(qs, got)
		for i, q := range qs {
			if got[i] != h.ValueAtQuantile(q) {
				t.Fatalf("trial %d: Quantiles[%v] %d, dense %d", trial, q, got[i], h.ValueAtQuantile(q))
			}
		}
		// Merging with the previous trial's histogram equals the dense merge.
		if prev != nil {
			m, err := MergeSparse(s, prevSparse)
			if err != nil {
				t.Fatal(err)
			}
			var sum SparseSum
			_ = sum.Add(prevSparse)
			_ = sum.Add(s)
			if sum.TotalCount() != h.TotalCount()+prev.TotalCount() || sum.Sparse().Latency() != m.Latency() {
				t.Fatalf("trial %d: SparseSum %+v, MergeSparse %+v", trial, sum.Sparse().Latency(), m.Latency())
			}
			sq, vq := make([]int64, len(qs)), make([]int64, len(qs))
			sum.Quantiles(qs, sq)
			sum.View().Quantiles(qs, vq)
			if !reflect.DeepEqual(sq, vq) {
				t.Fatalf("trial %d: SparseSum.Quantiles %v, View().Quantiles %v", trial, sq, vq)
			}
			if v := sum.View(); v.TotalCount() != m.TotalCount() || v.Figures() != m.Figures() || (m.TotalCount() > 0 && !reflect.DeepEqual(v.idx, m.idx)) {
				t.Fatalf("trial %d: SparseSum.View %+v, MergeSparse %+v", trial, v.Figures(), m.Figures())
			}
			sum.Reset()
			_ = sum.Add(s)
			if sum.Sparse().Latency() != s.Latency() || sum.View().Figures() != s.Figures() {
				t.Fatalf("trial %d: SparseSum after Reset differs", trial)
			}
			dm := NewHistogram()
			dm.Merge(h)
			dm.Merge(prev)
			if m.TotalCount() != dm.TotalCount() || m.Latency() != LatencyOf(dm) {
				t.Fatalf("trial %d: MergeSparse %+v, dense %+v", trial, m.Latency(), LatencyOf(dm))
			}
		}
		prev, prevSparse = h, s
		back := NewHistogram()
		if d := s.mergeInto(back); d != 0 || back.TotalCount() != h.TotalCount() || LatencyOf(back) != LatencyOf(h) {
			t.Fatalf("trial %d: MergeInto differs (dropped %d)", trial, d)
		}
	}
}

func TestSparseDecodeRejectsGarbage(t *testing.T) {
	var dec SparseDecoder
	h := NewHistogram()
	_ = h.RecordValue(12345)
	good, _ := Encode(h)
	raw, err := dec.uncompressed(good)
	if err != nil {
		t.Fatal(err)
	}
	long := append(append([]byte(nil), raw...), 0)
	badCookie := append([]byte(nil), raw...)
	badCookie[3] ^= 0x01
	for _, b := range [][]byte{[]byte("!!!"), []byte("AAAA"), good[:len(good)-8], append([]byte("B"), good[1:]...),
		{0x1c}, raw[:39], raw[:len(raw)-1], long, badCookie} {
		if _, err := dec.Decode(b); err == nil {
			t.Errorf("%q: decoded garbage", b)
		}
	}
	if s, err := dec.Decode(good); err != nil || s.TotalCount() != 1 {
		t.Fatalf("decoder not reusable after errors: %v", err)
	}
	if s, err := dec.Decode(raw); err != nil || s.TotalCount() != 1 {
		t.Fatalf("uncompressed form: %v", err)
	}
	if s, err := dec.Decode(nil); err != nil || s.TotalCount() != 0 || s.valueAtQuantile(99) != 0 {
		t.Fatal("empty blob should be an empty histogram")
	}
}

func FuzzSparseDecode(f *testing.F) {
	h := NewHistogram()
	for i := int64(1); i < 2000; i++ {
		_ = h.RecordValue(i * 7919)
	}
	b, _ := Encode(h)
	f.Add(b)
	f.Add([]byte{})
	var d SparseDecoder
	raw, _ := d.uncompressed(b)
	f.Add(raw)
	f.Add(EncodeV2(h)[:60])
	f.Fuzz(func(t *testing.T, b []byte) {
		var dec SparseDecoder
		s, err := dec.Decode(b)
		if err != nil {
			return
		}
		_ = s.Latency()
		if tmp, err := dec.DecodeTemp(b); err != nil || tmp.Figures() != s.Figures() {
			t.Fatalf("DecodeTemp differs from Decode: %v", err)
		}
		if len(b) > 0 && b[0] != 0x1c {
			// Encode's form: its uncompressed form decodes to the same histogram.
			raw, err := dec.uncompressed(b)
			if err != nil {
				t.Fatalf("decoded but cannot uncompress: %v", err)
			}
			u, err := dec.Decode(raw)
			if err != nil || !reflect.DeepEqual(u, s) {
				t.Fatalf("uncompressed form differs: %v", err)
			}
		}
		dense, derr := Decode(b) // either form
		if derr == nil && dense.TotalCount() == s.TotalCount() && dense.ValueAtQuantile(99) != s.valueAtQuantile(99) {
			t.Fatalf("p99 differs: dense %d sparse %d", dense.ValueAtQuantile(99), s.valueAtQuantile(99))
		}
	})
}

func BenchmarkSparseDecode(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := NewHistogram()
	for j := 0; j < 2000; j++ {
		_ = h.RecordValue(int64(500_000 + rng.ExpFloat64()*2e6))
	}
	var dec SparseDecoder
	for _, c := range []struct {
		name string
		blob []byte
	}{{"v2", EncodeV2(h)}, {"compressed", must(Encode(h))}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.blob)))
			for b.Loop() {
				s, _ := dec.DecodeTemp(c.blob)
				_ = s.Latency()
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// The write side of each stored histogram: EncodeV2 (what the store writes from schema
// 4 on) against Encode (before).
func BenchmarkEncode(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := NewHistogram()
	for j := 0; j < 2000; j++ {
		_ = h.RecordValue(int64(500_000 + rng.ExpFloat64()*2e6))
	}
	b.Run("v2", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = EncodeV2(h)
		}
	})
	b.Run("compressed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Encode(h)
		}
	})
}

// AddBuckets puts every value in the bucket of the first bound at or above it (taking
// each value as the highest of its HDR bucket), loses none, and sums them as Mean does.
func TestSparseAddBuckets(t *testing.T) {
	h := NewHistogram()
	// 100,000 ns sits in the HDR bucket 99,840-100,351 ns (512 ns wide there): taken
	// as its highest value, it counts above the 100 µs bound, as documented.
	for _, v := range []int64{50_000, 99_000, 100_000, 200_000, 2_000_000, 3_000_000_000, 90_000_000_000} {
		record(h, v)
	}
	blob, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	var dec SparseDecoder
	s, err := dec.Decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	bounds := []int64{100_000, 1_000_000, 1_000_000_000, 60_000_000_000}
	per := make([]uint64, len(bounds)+1)
	sum := s.AddBuckets(bounds, per)
	if want := []uint64{2, 2, 1, 1, 1}; !slices.Equal(per, want) {
		t.Errorf("per bound %v, want %v", per, want)
	}
	if m := s.mean() * float64(s.TotalCount()); math.Abs(sum-m) > 1e-6*m {
		t.Errorf("sum %v, mean × count %v", sum, m)
	}
	// Adding twice adds.
	s.AddBuckets(bounds, per)
	if per[0] != 4 || per[4] != 2 {
		t.Errorf("after a second add: %v", per)
	}
}
