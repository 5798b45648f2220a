// Package bad plants one violation of every detlint rule. Each line that
// must be reported carries a want comment naming the expected rules; the
// test fails on any missing or extra finding.
package bad

import (
	"maps"
	mrand "math/rand" // want "globalrand"
	"math/rand/v2"
	clk "time"
)

// Wallclock uses the wall clock through a renamed import.
func Wallclock() clk.Duration {
	start := clk.Now()         // want "wallclock"
	clk.Sleep(clk.Millisecond) // want "wallclock"
	<-clk.After(1)             // want "wallclock"
	t := clk.NewTimer(1)       // want "wallclock"
	t.Stop()
	now := clk.Now          // want "wallclock"
	_ = now().After(start)  // Time.After is a method, not the wall clock.
	return clk.Since(start) // want "wallclock"
}

// GlobalRand draws from the global random sources.
func GlobalRand() int {
	_ = mrand.Intn(3)
	_ = rand.N(clk.Second) // want "globalrand"
	return rand.IntN(10)   // want "globalrand"
}

// Goroutine starts a goroutine.
func Goroutine(f func()) {
	go f() // want "goroutine"
}

// Select selects.
func Select(a, b chan int) int {
	select { // want "select"
	case v := <-a:
		return v
	case v := <-b:
		return v
	}
}

// MapRange ranges over a map and over a map iterator.
func MapRange(m map[string]int) int {
	n := 0
	for _, v := range m { // want "maprange"
		n += v
	}
	for k := range maps.Keys(m) { // want "maprange"
		n += len(k)
	}
	return n
}

// Set is a named map type; its underlying type is still a map.
type Set map[string]struct{}

// NamedMapRange ranges over a named map type.
func NamedMapRange(s Set) (n int) {
	for range s { // want "maprange"
		n++
	}
	return n
}

// GenericMapRange ranges over a type parameter constrained to maps.
func GenericMapRange[M ~map[K]V, K comparable, V any](m M) (n int) {
	for range m { // want "maprange"
		n++
	}
	return n
}

// Directives plants malformed directives. A malformed directive exempts
// nothing, so the violation under it is still reported.
func Directives(f func()) {
	/* want "directive" */ //detlint:allow goroutine
	go f()                 // want "goroutine"

	/* want "directive" */ //detlint:allow gorutine typo in the rule name
	go f()                 // want "goroutine"

	/* want "directive" */ //detlint:allowed goroutine unknown directive name
	go f()                 // want "goroutine"

	// A valid directive two lines up does not reach this far.
	//detlint:allow goroutine the reason is here but the directive is too far away

	go f() // want "goroutine"
}
