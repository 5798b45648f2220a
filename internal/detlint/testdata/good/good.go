// Package good uses only deterministic patterns; detlint must report nothing.
package good

import (
	"maps"
	"math/rand/v2"
	"slices"
	"time"
)

// Rand draws from an explicitly seeded generator.
func Rand() int {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.5, 1, 10)
	_ = rand.New(rand.NewChaCha8([32]byte{})).Float64()
	return r.IntN(10) + int(z.Uint64())
}

// Durations does time arithmetic without touching the clock.
func Durations(t time.Time) (time.Time, time.Duration) {
	d := 3*time.Second + 250*time.Millisecond
	return t.Add(d), d.Round(time.Second)
}

// Ranges ranges over a slice and over sorted map keys.
func Ranges(xs []int, m map[string]int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		n += m[k]
	}
	for i := range 3 {
		n += i
	}
	return n
}

// Allowed starts goroutines under reasoned directives.
func Allowed(f func()) {
	//detlint:allow goroutine the scheduler hands control to exactly one process at a time
	go f()
	go f() //detlint:allow goroutine,select same-line form with a reason
}
