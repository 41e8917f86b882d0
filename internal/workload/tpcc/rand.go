package tpcc

import (
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// The A constants of NURand (clause 2.1.6) for the three non-uniform values.
const (
	aLast = 255  // C_LAST: a number 0…999 turned into a last name
	aCID  = 1023 // C_ID: a customer 1…3000
	aItem = 8191 // OL_I_ID: an item 1…100,000
)

// constants are the C values of NURand: one per A. Clause 2.1.6 has them chosen at
// random once, at load time for the data and again at run time; clause 2.1.6.1 bounds
// how the run's C for C_LAST may differ from the load's (see RunConstants).
type constants struct {
	Last, CID, Item int64
}

// loadSeed seeds every random value the loader draws: the same data every prepare.
const loadSeed = 0x7c_c0_2026

// loadConstants are the C values the data was generated with. They are drawn from the
// loader's fixed seed, so a run knows them without reading anything back.
func loadConstants() constants {
	r := gen.New(loadSeed, 0xc)
	return constants{Last: r.Uniform(0, aLast), CID: r.Uniform(0, aCID), Item: r.Uniform(0, aItem)}
}

// validDelta reports whether a run's C for C_LAST may be used with the load's, by
// clause 2.1.6.1: the difference lies in [65, 119] and is neither 96 nor 112.
func validDelta(load, run int64) bool {
	d := run - load
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

// runConstants draws the run's C values from the run's seed: C_ID and OL_I_ID freely,
// C_LAST again until the delta rule holds against the load's.
func runConstants(seed uint64) constants {
	load := loadConstants()
	r := gen.New(seed, 0xc0ffee)
	c := constants{CID: r.Uniform(0, aCID), Item: r.Uniform(0, aItem)}
	for {
		c.Last = r.Uniform(0, aLast)
		if validDelta(load.Last, c.Last) {
			return c
		}
	}
}

// nuRand is the non-uniform random function of clause 2.1.6:
// (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func nuRand(r *gen.Rand, a, c, x, y int64) int64 {
	return ((r.Uniform(0, a)|r.Uniform(x, y))+c)%(y-x+1) + x
}

// syllables make customer last names (clause 4.3.2.3): the three digits of a number
// 0…999 each pick one.
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastName appends the last name of number n (0…999) to dst.
func lastName(dst []byte, n int64) []byte {
	dst = append(dst, syllables[n/100]...)
	dst = append(dst, syllables[n/10%10]...)
	return append(dst, syllables[n%10]...)
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// aString appends a random alphanumeric string of x to y characters (clause 4.3.2.2's
// a-string) to dst.
func aString(r *gen.Rand, dst []byte, x, y int64) []byte {
	n := r.Uniform(x, y)
	for range n {
		dst = append(dst, alnum[r.Uniform(0, int64(len(alnum))-1)])
	}
	return dst
}

// nString appends a random string of x to y digits (n-string) to dst.
func nString(r *gen.Rand, dst []byte, x, y int64) []byte {
	n := r.Uniform(x, y)
	for range n {
		dst = append(dst, byte('0'+r.Uniform(0, 9)))
	}
	return dst
}

// zip appends a zip code (clause 4.3.2.7): four random digits and "11111".
func zip(r *gen.Rand, dst []byte) []byte {
	return append(nString(r, dst, 4, 4), "11111"...)
}

// data appends I_DATA or S_DATA (clause 4.3.3.1): an a-string of 26 to 50 characters,
// in 10% of rows with "ORIGINAL" at a random position.
func data(r *gen.Rand, dst []byte) []byte {
	start := len(dst)
	dst = aString(r, dst, 26, 50)
	if r.Uniform(1, 10) == 1 {
		n := int64(len(dst) - start)
		at := start + int(r.Uniform(0, n-8))
		copy(dst[at:], "ORIGINAL")
	}
	return dst
}

// appendCents appends c hundredths as a decimal number ("-10.00", "3.07").
func appendCents(dst []byte, c int64) []byte {
	if c < 0 {
		dst = append(dst, '-')
		c = -c
	}
	dst = appendUint(dst, c/100)
	dst = append(dst, '.', byte('0'+c/10%10), byte('0'+c%10))
	return dst
}

// appendFrac4 appends t ten-thousandths in [0, 1) as "0.dddd" (taxes, discounts).
func appendFrac4(dst []byte, t int64) []byte {
	return append(dst, '0', '.', byte('0'+t/1000), byte('0'+t/100%10), byte('0'+t/10%10), byte('0'+t%10))
}

func appendUint(dst []byte, v int64) []byte {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, b[i:]...)
}
