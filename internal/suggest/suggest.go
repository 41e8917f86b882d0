// Package suggest finds the name a user most likely meant when they typed one that
// does not exist: a workload, a metric, a series, a collector, a format.
package suggest

import "strings"

// Nearest is the name in known nearest to name: within an edit distance of 2 (a
// letter added, left out, changed, or two neighbours swapped; case, and _ against -,
// aside), or the one name it is a prefix of (3 letters at least); ""
// if none is that near or two are as near.
func Nearest(name string, known []string) string {
	best, bestD, tie := "", 3, false
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "-")) }
	n := norm(name)
	for _, k := range known {
		if k == name {
			return k
		}
		d := distance(n, norm(k))
		if len(n) >= 3 && strings.HasPrefix(norm(k), n) {
			d = min(d, 1)
		}
		switch {
		case d < bestD:
			best, bestD, tie = k, d, false
		case d == bestD && k != best:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// Hint is " (did you mean X?)" for the nearest known name, or "" when none is near.
func Hint(name string, known []string) string {
	if s := Nearest(name, known); s != "" && s != name {
		return " (did you mean " + s + "?)"
	}
	return ""
}

// distance is the optimal-string-alignment distance of a and b: Levenshtein's, with a
// swap of two neighbouring letters one edit ("tsp" for "tps"), as people mistype.
func distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
