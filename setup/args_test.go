package setup

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestArgTextMatchesArgStrings: an ArgText renders every argument as
// ArgStrings does, whatever it kept from the calls before: numbers that
// repeat, numbers that push kept ones out, the longest ones, other types
// between them; and every text it gave still reads the same after all the
// calls (the texts share slabs of digits, none written over).
func TestArgTextMatchesArgStrings(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var kept ArgText
	pool := []int64{0, 7, 255, 256, 30000, 300000, -1, 1 << 40, 1764000000000, math.MinInt64, math.MaxInt64}
	var gave, wanted [][]string
	defer func() {
		for i := range gave {
			if !slices.Equal(gave[i], wanted[i]) {
				t.Fatalf("call %d's texts read %q after the later calls, want %q", i, gave[i], wanted[i])
			}
		}
	}()
	for i := 0; i < 2000; i++ {
		if i%7 == 0 {
			pool[len(pool)-3] += int64(1 + rnd.IntN(100)) // a clock: a new number
		}
		args := make([]any, 1+rnd.IntN(6))
		for j := range args {
			switch rnd.IntN(4) {
			case 0:
				args[j] = "s"
			case 1:
				args[j] = rnd.IntN(1000)
			default:
				args[j] = pool[rnd.IntN(len(pool))]
			}
		}
		want, err := ArgStrings(args)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]string, len(args))
		if err := kept.Fill(got, args); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("call %d: %v rendered %q, want %q", i, args, got, want)
		}
		gave, wanted = append(gave, got), append(wanted, want)
	}
}

// TestArgTextKeepsRecentNumbers: the last argTextInts numbers an ArgText
// rendered come back without formatting again (a fair lock's try sends
// its lease, its wait and a fresh wall clock), and a number it no longer
// keeps is formatted anew, correctly.
func TestArgTextKeepsRecentNumbers(t *testing.T) {
	var kept ArgText
	nums := []int64{30000, 300000, 1764000000001, 1764000000002}
	for _, v := range nums {
		kept.Int(v)
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, v := range nums {
			kept.Int(v)
		}
	})
	if allocs != 0 {
		t.Errorf("kept numbers formatted again: %v allocations per round", allocs)
	}
	kept.Int(1764000000003) // pushes 30000 out
	if got := kept.Int(30000); got != "30000" {
		t.Errorf("Int(30000) after it was pushed out = %q", got)
	}
	var none *ArgText
	if got := none.Int(-42); got != "-42" {
		t.Errorf("nil ArgText: Int(-42) = %q", got)
	}
}
