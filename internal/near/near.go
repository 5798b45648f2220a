// Package near finds the name a misspelled one most likely means: the
// "did you mean hold?" of an unknown field, in a scenario file and in a
// history line alike.
package near

import "strings"

// Field is the allowed field that key most likely misspells: the one
// at the least edit distance, when that is at most a third of the
// field's length (and at least 1), or one that differs only in case or in
// '_' against '-'; "" when none is that close, or two are equally close.
func Field(key string, allowed []string) string {
	fold := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	best, bestD, tie := "", 0, false
	for _, a := range allowed {
		if fold(a) == fold(key) {
			return a
		}
		d := editDistance(key, a)
		if d > max(1, len(a)/3) {
			continue
		}
		switch {
		case best == "" || d < bestD:
			best, bestD, tie = a, d, false
		case d == bestD:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// editDistance is the number of single-byte insertions, deletions,
// substitutions and swaps of two neighbours that make b of a (the
// optimal string alignment distance: "hodl" is one from "hold"). Field
// names are ASCII.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
