package measure

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Sparse is a read-only latency histogram that keeps only its populated buckets. It
// answers the same queries as a dense *hdr.Histogram with identical results, but
// decoding one costs microseconds and a few hundred bytes instead of a 184 KB counts
// array: what a report over hundreds of thousands of stored intervals needs.
type Sparse struct {
	geo   sparseGeometry
	idx   []int32 // populated flat bucket indices, ascending
	cnt   []int64
	total int64
}

// sparseGeometry is the part of HDR's bucket layout needed to map a flat counts
// index to its value range.
type sparseGeometry struct {
	unitMagnitude, subBucketHalfCountMagnitude int32
	subBucketHalfCount                         int32
}

func newSparseGeometry(lowest int64, sigFigs int32) (sparseGeometry, error) {
	if sigFigs < 0 || sigFigs > 5 {
		return sparseGeometry{}, fmt.Errorf("corrupt histogram: %d significant figures", sigFigs)
	}
	if lowest < 1 {
		lowest = 1
	}
	largest := 2 * math.Pow10(int(sigFigs))
	half := int32(math.Ceil(math.Log2(largest)))
	if half < 1 {
		half = 1
	}
	half--
	unit := int32(math.Floor(math.Log2(float64(lowest))))
	if unit < 0 {
		unit = 0
	}
	if unit+half > 61 {
		return sparseGeometry{}, fmt.Errorf("corrupt histogram: lowest value %d too large", lowest)
	}
	return sparseGeometry{unit, half, 1 << half}, nil
}

// bucket returns the lowest value of flat index i and the width of its range.
func (g sparseGeometry) bucket(i int32) (low, width int64) {
	b := (i >> g.subBucketHalfCountMagnitude) - 1
	sub := (i & (g.subBucketHalfCount - 1)) + g.subBucketHalfCount
	if b < 0 {
		sub -= g.subBucketHalfCount
		b = 0
	}
	shift := uint(b + g.unitMagnitude)
	return int64(sub) << shift, int64(1) << shift
}

// TotalCount is the number of recorded values.
func (s *Sparse) TotalCount() int64 {
	if s == nil {
		return 0
	}
	return s.total
}

// valueAtQuantile returns the value at percentile q (0–100), as
// hdr.Histogram.ValueAtQuantile does: the highest value equivalent to the bucket
// holding the rank, the lowest one for q = 0, and 0 for an empty histogram.
func (s *Sparse) valueAtQuantile(q float64) int64 {
	if s.TotalCount() == 0 {
		return 0
	}
	if q > 100 {
		q = 100
	} else if q < 0 {
		q = 0
	}
	rank := (q/100)*float64(s.total) + 0.5
	target := int64(1)
	if rank >= float64(s.total) {
		target = s.total
	} else if rank >= 1 {
		target = int64(rank)
	}
	var cum int64
	for k, c := range s.cnt {
		cum += c
		if cum >= target {
			low, w := s.geo.bucket(s.idx[k])
			if q == 0 {
				return low
			}
			return low + w - 1
		}
	}
	low, w := s.geo.bucket(s.idx[len(s.idx)-1])
	return low + w - 1
}

// max is the highest value equivalent to the largest recorded one (0 when empty).
func (s *Sparse) max() int64 {
	if s.TotalCount() == 0 {
		return 0
	}
	low, w := s.geo.bucket(s.idx[len(s.idx)-1])
	return low + w - 1
}

// mean is the mean of the recorded values, each taken at the middle of its bucket.
func (s *Sparse) mean() float64 {
	if s.TotalCount() == 0 {
		return 0
	}
	var m float64
	t := float64(s.total)
	for k, c := range s.cnt {
		low, w := s.geo.bucket(s.idx[k])
		m += float64(c) * float64(low+w>>1) / t
	}
	return m
}

// Latency summarises s exactly as LatencyOf summarises the equivalent dense histogram.
func (s *Sparse) Latency() Latency {
	if s.TotalCount() == 0 {
		return Latency{}
	}
	return s.Figures().Latency()
}

// mergeInto adds s's counts to the dense histogram h (which may have any layout at
// least as fine; fathom's histograms all share one). Values beyond h's range are
// dropped and counted.
func (s *Sparse) mergeInto(h *hdr.Histogram) (dropped int64) {
	if s == nil {
		return 0
	}
	for k, c := range s.cnt {
		low, _ := s.geo.bucket(s.idx[k])
		if h.RecordValues(low, c) != nil {
			dropped += c
		}
	}
	return dropped
}

// SparseDecoder decodes stored histograms into Sparse ones, reusing its buffers and
// decompressor between calls. It reads both forms the store has kept: EncodeV2's
// (HdrHistogram's uncompressed V2 encoding), which decodes several times faster, and
// Encode's (the same, zlib-compressed and base64). It is not safe for concurrent use.
type SparseDecoder struct {
	raw     []byte
	rd      bytes.Reader
	zr      io.ReadCloser
	header  [40]byte
	payload []byte
	scratch Sparse
}

const (
	v2Cookie           = 0x1c849303
	v2CompressedCookie = 0x1c849304
	v2HeaderLen        = 40
)

// Decode decodes one stored histogram; nil or empty input gives an empty one.
func (d *SparseDecoder) Decode(b []byte) (*Sparse, error) {
	if len(b) == 0 {
		return &Sparse{}, nil
	}
	if err := d.scan(b); err != nil {
		return nil, err
	}
	s := &Sparse{geo: d.scratch.geo, total: d.scratch.total, idx: make([]int32, len(d.scratch.idx)), cnt: make([]int64, len(d.scratch.cnt))}
	copy(s.idx, d.scratch.idx)
	copy(s.cnt, d.scratch.cnt)
	return s, nil
}

// DecodeTemp is Decode into storage the decoder reuses: the result is valid only until
// the next call. It saves two allocations per histogram where the caller only adds
// the histogram to sums or reads its figures.
func (d *SparseDecoder) DecodeTemp(b []byte) (*Sparse, error) {
	if len(b) == 0 {
		d.scratch = Sparse{idx: d.scratch.idx[:0], cnt: d.scratch.cnt[:0]}
		return &d.scratch, nil
	}
	if err := d.scan(b); err != nil {
		return nil, err
	}
	return &d.scratch, nil
}

// uncompressed returns a histogram in Encode's form in EncodeV2's: the bytes Encode
// compressed. Empty input gives nil.
func (d *SparseDecoder) uncompressed(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if err := d.inflate(b); err != nil {
		return nil, err
	}
	out := make([]byte, v2HeaderLen+len(d.payload))
	copy(out, d.header[:])
	copy(out[v2HeaderLen:], d.payload)
	return out, nil
}

// scan decodes b (either form) into d.scratch.
func (d *SparseDecoder) scan(b []byte) error {
	var (
		h, p []byte
		err  error
	)
	if b[0] == v2Cookie>>24 { // uncompressed V2 (binary); base64 text never starts with 0x1c
		h, p, err = splitUncompressed(b)
	} else if err = d.inflate(b); err == nil {
		h, p = d.header[:], d.payload
	}
	if err != nil {
		return err
	}
	geo, maxIdx, _, err := parseHeader(h)
	if err != nil {
		return err
	}
	// One pass into reused scratch slices.
	d.scratch.geo = geo
	return scanPayload(p, maxIdx, &d.scratch)
}

// splitUncompressed checks an uncompressed V2 encoding and returns its header and
// payload.
func splitUncompressed(b []byte) (header, payload []byte, err error) {
	if len(b) < v2HeaderLen {
		return nil, nil, fmt.Errorf("corrupt histogram: %d bytes", len(b))
	}
	_, _, plen, err := parseHeader(b[:v2HeaderLen])
	if err != nil {
		return nil, nil, err
	}
	if plen != int64(len(b)-v2HeaderLen) {
		return nil, nil, fmt.Errorf("corrupt histogram: payload of %d bytes, header says %d", len(b)-v2HeaderLen, plen)
	}
	return b[:v2HeaderLen], b[v2HeaderLen:], nil
}

// parseHeader checks a V2 header and returns the layout it describes, the number of
// buckets it has and the payload's length.
func parseHeader(h []byte) (geo sparseGeometry, maxIdx, plen int64, err error) {
	if int32(binary.BigEndian.Uint32(h))&^0xf0 != v2Cookie {
		return geo, 0, 0, fmt.Errorf("corrupt histogram: bad inner cookie")
	}
	plen = int64(int32(binary.BigEndian.Uint32(h[4:])))
	sig := int32(binary.BigEndian.Uint32(h[12:]))
	lowest := int64(binary.BigEndian.Uint64(h[16:]))
	if geo, err = newSparseGeometry(lowest, sig); err != nil {
		return geo, 0, 0, err
	}
	// The payload has at most 9 bytes per bucket; bound it by the layout's size.
	maxIdx = int64(geo.subBucketHalfCount) * 66
	if plen < 0 || plen > maxIdx*9 {
		return geo, 0, 0, fmt.Errorf("corrupt histogram: payload length %d", plen)
	}
	return geo, maxIdx, plen, nil
}

// inflate reads Encode's form into d.header and d.payload.
func (d *SparseDecoder) inflate(b []byte) error {
	n := base64.StdEncoding.DecodedLen(len(b))
	if cap(d.raw) < n {
		d.raw = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(d.raw[:n], b)
	if err != nil {
		return fmt.Errorf("corrupt histogram: %v", err)
	}
	raw := d.raw[:n]
	if len(raw) < 8 {
		return fmt.Errorf("corrupt histogram: %d bytes", len(raw))
	}
	if int32(binary.BigEndian.Uint32(raw))&^0xf0 != v2CompressedCookie {
		return fmt.Errorf("corrupt histogram: not a V2 compressed histogram")
	}
	clen := int64(int32(binary.BigEndian.Uint32(raw[4:])))
	if clen < 0 || clen > int64(len(raw)-8) {
		return fmt.Errorf("corrupt histogram: compressed length %d of %d bytes", clen, len(raw)-8)
	}
	d.rd.Reset(raw[8 : 8+clen])
	if d.zr == nil {
		if d.zr, err = zlib.NewReader(&d.rd); err != nil {
			return fmt.Errorf("corrupt histogram: %v", err)
		}
	} else if err := d.zr.(zlib.Resetter).Reset(&d.rd, nil); err != nil {
		return fmt.Errorf("corrupt histogram: %v", err)
	}
	if _, err := io.ReadFull(d.zr, d.header[:]); err != nil {
		return fmt.Errorf("corrupt histogram: header: %v", err)
	}
	_, _, plen, err := parseHeader(d.header[:])
	if err != nil {
		return err
	}
	if int64(cap(d.payload)) < plen {
		d.payload = make([]byte, plen)
	}
	d.payload = d.payload[:plen]
	if _, err := io.ReadFull(d.zr, d.payload); err != nil {
		return fmt.Errorf("corrupt histogram: payload: %v", err)
	}
	return nil
}

// scanPayload walks a V2 counts payload and sets s's populated buckets (replacing what
// s held, keeping its storage) and total.
//
// Counts and runs of zeros alternate unpredictably, so the loop is written without
// branches on which one it reads: each item writes a bucket that is kept only if it is
// a non-zero count, and moves the index by one or by the run's length.
func scanPayload(p []byte, maxIdx int64, s *Sparse) error {
	// Every populated bucket takes at least one byte.
	if cap(s.idx) < len(p) {
		s.idx = make([]int32, len(p))
	}
	if cap(s.cnt) < len(p) {
		s.cnt = make([]int64, len(p))
	}
	idx, cnt := s.idx[:len(p)], s.cnt[:len(p)]
	var at, total int64
	n := 0
	for i := 0; i < len(p); {
		u := uint64(p[i])
		if u < 0x80 { // most counts and runs of zeros fit one byte
			i++
		} else {
			var k int
			if u, k = leb128x9(p[i:]); k == 0 {
				return fmt.Errorf("corrupt histogram: truncated count")
			}
			i += k
		}
		// ZigZag: even u is the count u/2, odd u a run of u/2+1 zeros.
		odd := u & 1
		half := u >> 1
		// A run must end within the buckets, and a count must be in one.
		if half*odd >= uint64(maxIdx-at) {
			if odd == 1 {
				return fmt.Errorf("corrupt histogram: zero run past the end")
			}
			return fmt.Errorf("corrupt histogram: bucket index past the end")
		}
		v := int64(half) & (int64(odd) - 1) // the count, 0 for a run
		if v > math.MaxInt64-total {
			return fmt.Errorf("corrupt histogram: counts overflow")
		}
		total += v
		idx[n], cnt[n] = int32(at), v
		n += int(uint64(-v) >> 63) // kept if v > 0
		at += 1 + int64(half&-odd)
	}
	s.idx, s.cnt, s.total = idx[:n], cnt[:n], total
	return nil
}

// leb128x9 reads HdrHistogram's LEB128 variant: 7 bits a byte for up to 8 bytes, then
// a 9th byte of 8 bits. It returns 0 bytes read for truncated input.
func leb128x9(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v | uint64(b[8])<<56, 9
		}
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return v, 9
}

// Quantiles fills out[i] with ValueAtQuantile(qs[i]) in one pass; qs must be in
// ascending order.
func (s *Sparse) Quantiles(qs []float64, out []int64) {
	if s.TotalCount() == 0 {
		for i := range qs {
			out[i] = 0
		}
		return
	}
	var cum int64
	k := -1
	for i, q := range qs {
		if q > 100 {
			q = 100
		} else if q < 0 {
			q = 0
		}
		rank := (q/100)*float64(s.total) + 0.5
		target := int64(1)
		if rank >= float64(s.total) {
			target = s.total
		} else if rank >= 1 {
			target = int64(rank)
		}
		for cum < target && k+1 < len(s.cnt) {
			k++
			cum += s.cnt[k]
		}
		if k < 0 {
			k = 0
		}
		low, w := s.geo.bucket(s.idx[k])
		if q == 0 {
			out[i] = low
		} else {
			out[i] = low + w - 1
		}
	}
}

// MergeSparse returns the sum of a and b. Both must come from histograms of one
// layout (all of fathom's do); otherwise an error says so.
func MergeSparse(a, b *Sparse) (*Sparse, error) {
	switch {
	case b.TotalCount() == 0:
		return a, nil
	case a.TotalCount() == 0:
		return b, nil
	case a.geo != b.geo:
		return nil, fmt.Errorf("cannot merge histograms of different layouts")
	}
	m := &Sparse{geo: a.geo, total: a.total + b.total,
		idx: make([]int32, 0, len(a.idx)+len(b.idx)), cnt: make([]int64, 0, len(a.idx)+len(b.idx))}
	i, j := 0, 0
	for i < len(a.idx) || j < len(b.idx) {
		switch {
		case j >= len(b.idx) || (i < len(a.idx) && a.idx[i] < b.idx[j]):
			m.idx, m.cnt = append(m.idx, a.idx[i]), append(m.cnt, a.cnt[i])
			i++
		case i >= len(a.idx) || b.idx[j] < a.idx[i]:
			m.idx, m.cnt = append(m.idx, b.idx[j]), append(m.cnt, b.cnt[j])
			j++
		default:
			m.idx, m.cnt = append(m.idx, a.idx[i]), append(m.cnt, a.cnt[i]+b.cnt[j])
			i++
			j++
		}
	}
	return m, nil
}

// SparseSum adds up sparse histograms of one layout in a dense counts array that is
// reused between sums, and yields the total as a Sparse. Adding costs one addition
// per populated bucket.
type SparseSum struct {
	geo    sparseGeometry
	counts []int64
	lo, hi int32
	total  int64
	view   Sparse
}

// Add adds s.
func (a *SparseSum) Add(s *Sparse) error {
	if s.TotalCount() == 0 {
		return nil
	}
	if a.total == 0 {
		a.geo = s.geo
		a.lo, a.hi = s.idx[0], s.idx[len(s.idx)-1]
	} else if a.geo != s.geo {
		return fmt.Errorf("cannot add histograms of different layouts")
	}
	if need := int(s.idx[len(s.idx)-1]) + 1; need > len(a.counts) {
		a.counts = append(a.counts, make([]int64, need-len(a.counts))...)
	}
	for k, i := range s.idx {
		a.counts[i] += s.cnt[k]
	}
	a.lo, a.hi = min(a.lo, s.idx[0]), max(a.hi, s.idx[len(s.idx)-1])
	a.total += s.total
	return nil
}

// TotalCount is the number of values added since the last Reset.
func (a *SparseSum) TotalCount() int64 { return a.total }

// Sparse returns the sum so far.
func (a *SparseSum) Sparse() *Sparse {
	if a.total == 0 {
		return &Sparse{}
	}
	n := 0
	for _, c := range a.counts[a.lo : a.hi+1] {
		if c != 0 {
			n++
		}
	}
	s := &Sparse{geo: a.geo, total: a.total, idx: make([]int32, 0, n), cnt: make([]int64, 0, n)}
	for i := a.lo; i <= a.hi; i++ {
		if c := a.counts[i]; c != 0 {
			s.idx, s.cnt = append(s.idx, i), append(s.cnt, c)
		}
	}
	return s
}

// View returns the sum so far in storage the sum reuses: valid until the next call of
// View, Add or Reset. Unlike Sparse it allocates nothing once warm.
func (a *SparseSum) View() *Sparse {
	v := &a.view
	v.geo, v.total, v.idx, v.cnt = a.geo, a.total, v.idx[:0], v.cnt[:0]
	if a.total == 0 {
		return v
	}
	for i := a.lo; i <= a.hi; i++ {
		if c := a.counts[i]; c != 0 {
			v.idx, v.cnt = append(v.idx, i), append(v.cnt, c)
		}
	}
	return v
}

// Quantiles fills out[i] with the sum's ValueAtQuantile(qs[i]), exactly as
// View().Quantiles does, without building the view; qs must be in ascending order.
func (a *SparseSum) Quantiles(qs []float64, out []int64) {
	if a.total == 0 {
		for i := range qs {
			out[i] = 0
		}
		return
	}
	var cum int64
	i := a.lo - 1
	for j, q := range qs {
		if q > 100 {
			q = 100
		} else if q < 0 {
			q = 0
		}
		rank := (q/100)*float64(a.total) + 0.5
		target := int64(1)
		if rank >= float64(a.total) {
			target = a.total
		} else if rank >= 1 {
			target = int64(rank)
		}
		if target == a.total {
			i, cum = a.hi, a.total // the last populated bucket: no need to walk there
		}
		for cum < target && i < a.hi {
			i++
			cum += a.counts[i]
		}
		low, w := a.geo.bucket(max(i, a.lo))
		if q == 0 {
			out[j] = low
		} else {
			out[j] = low + w - 1
		}
	}
}

// Reset empties the sum, keeping its storage.
func (a *SparseSum) Reset() {
	if a.total != 0 {
		clear(a.counts[a.lo : a.hi+1])
	}
	a.total = 0
}

// AddBuckets adds s's values to per, a count per bound: per[j] counts the values
// above bounds[j-1] and at or below bounds[j] (bounds ascending; per has one more
// element, for the values above every bound). Each value is taken as the highest of
// its bucket, as ValueAtQuantile reports it, so a value within the histogram's
// resolution (0.1% at 3 significant figures) of a bound may be counted above it. It
// returns the sum of the values, each at the middle of its bucket (as Mean takes them).
func (s *Sparse) AddBuckets(bounds []int64, per []uint64) (sum float64) {
	if s.TotalCount() == 0 {
		return 0
	}
	j := 0
	for k, c := range s.cnt {
		low, w := s.geo.bucket(s.idx[k])
		for j < len(bounds) && bounds[j] < low+w-1 {
			j++
		}
		per[j] += uint64(c)
		sum += float64(c) * float64(low+w>>1)
	}
	return sum
}
