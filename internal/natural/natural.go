// Package natural orders names as a person numbers them, so that every
// place that lists clients or holders (the timeline's rows, Porcupine's
// rows, explanations) lists "c2" before "c10" alike.
package natural

import (
	"cmp"
	"strings"
)

// Compare orders names as a person numbers them: runs of digits
// compare by value ("c2" < "c10"), the rest byte by byte; names equal so
// ("c01", "c1") fall back on plain order, so the order is total.
func Compare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := digitsEnd(a, i), digitsEnd(b, j)
			x, y := strings.TrimLeft(a[i:ei], "0"), strings.TrimLeft(b[j:ej], "0")
			if c := cmp.Or(cmp.Compare(len(x), len(y)), strings.Compare(x, y)); c != 0 {
				return c
			}
			i, j = ei, ej
			continue
		}
		if c := cmp.Compare(a[i], b[j]); c != 0 {
			return c
		}
		i, j = i+1, j+1
	}
	return cmp.Or(cmp.Compare(len(a)-i, len(b)-j), strings.Compare(a, b))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digitsEnd is the end of the run of digits in s from i.
func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}
