package measure

import (
	"math"
	"math/bits"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// dense is one recorder's histogram of one outcome: HDR's buckets for fathom's range
// and precision as a plain array of counts, with the range of indices written since it
// was last emptied. A cut merges every client's recorders into the interval at each
// report interval, and hdr.Histogram.Merge walks its source value by value up to the
// largest recorded (tens of thousands of buckets for a 100ms latency) and Reset clears
// all 24,576; drainInto visits only the runs of 64 buckets in use (a bitmap) and
// empties them as it goes.
// Measured in BenchmarkDrain against BenchmarkMergeHDR (a realistic interval of one
// client): see the commit that added it.
type dense struct {
	blocks [denseBlocks][]int32 // counts by index, 1,024 a block, made on first use
	used   [usedWords]uint64    // bit r: a count in indices [64r, 64r+64)
	total  int64
	spill  *hdr.Histogram // counts a 32-bit count could not hold (never, in practice)
}

// A block holds 1,024 counts (one HDR half-bucket): a client's latencies fill a
// few of them, so a recorder costs tens of kilobytes, not the 196 KB of a whole HDR
// counts array, which at 1,000 clients and two recorders each was 390 MB.
const (
	blockBits   = 10
	blockLen    = 1 << blockBits
	denseBlocks = 24 // fathom's 24,205 buckets
	usedWords   = denseBlocks * blockLen / 64 / 64
)

// Bucket layout of fathom's histograms, as hdr computes it for MinLatency and SigFigs.
var (
	denseGeo  = mustGeometry()
	denseMask = int64(2*denseGeo.subBucketHalfCount-1) << denseGeo.unitMagnitude
	denseLen  = denseIndex(maxLatency) + 1
)

func mustGeometry() sparseGeometry {
	g, err := newSparseGeometry(minLatency, sigFigs)
	if err != nil {
		panic(err)
	}
	return g
}

// denseIndex is hdr's flat counts index of v (MinLatency <= v <= MaxLatency).
func denseIndex(v int64) int {
	g := &denseGeo
	pow2 := int32(64 - bits.LeadingZeros64(uint64(v|denseMask)))
	bucket := pow2 - g.unitMagnitude - (g.subBucketHalfCountMagnitude + 1)
	sub := int32(v >> uint(bucket+g.unitMagnitude))
	return int((bucket+1)<<uint(g.subBucketHalfCountMagnitude) + sub - g.subBucketHalfCount)
}

func newDense() *dense { return &dense{} }

// record counts v, clamped into fathom's range so that nothing is ever dropped.
func (d *dense) record(v int64) {
	if v < minLatency {
		v = minLatency
	} else if v > maxLatency {
		v = maxLatency
	}
	i := denseIndex(v)
	b := d.blocks[i>>blockBits]
	if b == nil {
		b = make([]int32, blockLen)
		d.blocks[i>>blockBits] = b
	}
	c := &b[i&(blockLen-1)]
	d.total++
	if *c == math.MaxInt32 {
		if d.spill == nil {
			d.spill = NewHistogram()
		}
		_ = d.spill.RecordValue(v)
		return
	}
	*c++
	d.used[(i>>6)/64] |= 1 << ((i >> 6) & 63)
}

// totalCount is the number of values recorded since the last drain.
func (d *dense) totalCount() int64 {
	if d == nil {
		return 0
	}
	return d.total
}

// drainInto adds the counts to *dst (created if nil) and empties d.
func (d *dense) drainInto(dst **hdr.Histogram) {
	if d == nil || d.total == 0 {
		return
	}
	if *dst == nil {
		*dst = NewHistogram()
	}
	h := *dst
	for w, bitsw := range d.used {
		for bitsw != 0 {
			lo := (w*64 + bits.TrailingZeros64(bitsw)) * 64
			bitsw &= bitsw - 1
			run := d.blocks[lo>>blockBits][lo&(blockLen-1):][:64]
			for k, c := range run {
				if c != 0 {
					low, _ := denseGeo.bucket(int32(lo + k))
					_ = h.RecordValues(low, int64(c))
					run[k] = 0
				}
			}
		}
	}
	if d.spill != nil {
		h.Merge(d.spill)
		d.spill.Reset()
	}
	d.used = [usedWords]uint64{}
	d.total = 0
}

// reset empties d.
func (d *dense) reset() {
	for w, bitsw := range d.used {
		for bitsw != 0 {
			lo := (w*64 + bits.TrailingZeros64(bitsw)) * 64
			bitsw &= bitsw - 1
			clear(d.blocks[lo>>blockBits][lo&(blockLen-1):][:64])
		}
	}
	if d.spill != nil {
		d.spill.Reset()
	}
	d.used = [usedWords]uint64{}
	d.total = 0
}
