package gen

// Lengths of sysbench's c and pad values: groups of 11 random digits joined by '-'.
const (
	cGroups   = 10
	padGroups = 5
	CLen      = cGroups*12 - 1   // 119
	PadLen    = padGroups*12 - 1 // 59
)

const groupSpan = 100_000_000_000 // 10^11: one group of 11 digits

// pairs holds "00" to "99" back to back.
var pairs = func() (b [200]byte) {
	for i := range 100 {
		b[2*i], b[2*i+1] = byte('0'+i/10), byte('0'+i%10)
	}
	return b
}()

// digits writes groups groups of 11 random decimal digits separated by '-' into dst,
// which must have room for groups*12-1 bytes, and returns the written part of dst.
// Every digit is uniform and independent, as in sysbench's '#' templates.
func (g *Rand) digits(dst []byte, groups int) []byte {
	if groups <= 0 {
		return dst[:0]
	}
	n := groups*12 - 1
	dst = dst[:n]
	for i := 0; i < groups; i++ {
		v := g.r.Uint64N(groupSpan)
		end := i*12 + 11
		// Five pairs of digits from the right, then the leading digit.
		for j := end - 2; j > i*12; j -= 2 {
			p := (v % 100) * 2
			v /= 100
			dst[j], dst[j+1] = pairs[p], pairs[p+1]
		}
		dst[i*12] = byte('0' + v)
		if end < n {
			dst[end] = '-'
		}
	}
	return dst
}

// C writes a sysbench c value (10 groups, 119 bytes) into dst and returns it.
func (g *Rand) C(dst []byte) []byte { return g.digits(dst, cGroups) }

// Pad writes a sysbench pad value (5 groups, 59 bytes) into dst and returns it.
func (g *Rand) Pad(dst []byte) []byte { return g.digits(dst, padGroups) }
