package faultsearch_test

import (
	"flag"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/internal/faultsearch"
)

// TestFlags: Flags sets rapid's flags for a search and restores them.
func TestFlags(t *testing.T) {
	get := func(name string) string { return flag.Lookup(name).Value.String() }
	before := [3]string{get("rapid.checks"), get("rapid.nofailfile"), get("rapid.seed")}
	restore, err := faultsearch.Flags(7, 3)
	if err != nil {
		t.Fatal(err)
	}
	during := [3]string{get("rapid.checks"), get("rapid.nofailfile"), get("rapid.seed")}
	restore()
	after := [3]string{get("rapid.checks"), get("rapid.nofailfile"), get("rapid.seed")}
	want := [3]string{"7", "true", "3"}
	if before[2] != "0" { // -rapid.seed was given: it wins
		want[2] = before[2]
	}
	if during != want {
		t.Errorf("during the search: %v, want %v", during, want)
	}
	if after != before {
		t.Errorf("after: %v, before: %v", after, before)
	}
}

// TestFind: a failing case is found, shrunk to the least that fails, and
// returned with its key; a key drawn again is not run again; with a
// shrinking budget of 0 the first failure found stays.
func TestFind(t *testing.T) {
	restore, err := faultsearch.Flags(100, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	search := func(shrink int) (faultsearch.Found, map[string]int) {
		runs := map[string]int{}
		f := faultsearch.Find(t.Name(), func(rt *rapid.T) (string, func() string) {
			n := rapid.IntRange(0, 1000).Draw(rt, "n")
			key := strconv.Itoa(n)
			return key, func() string {
				runs[key]++
				if n >= 100 {
					return "too big: " + key
				}
				return ""
			}
		}, shrink)
		return f, runs
	}
	f, runs := search(500)
	if !f.Failed || f.Key != "100" || f.Msg != "too big: 100" || f.ToFind == 0 {
		t.Errorf("found %+v, want the case shrunk to 100", f)
	}
	for k, n := range runs {
		if n > 1 {
			t.Errorf("case %s ran %d times", k, n)
		}
	}
	f, _ = search(0)
	if !f.Failed || f.Spent != 0 || f.Key == "100" {
		t.Errorf("with no shrinking budget: %+v", f)
	}
}

// names is a topology of master m1 with replica r1 and clients c1, c2.
type names struct{}

func (names) Nodes() []string          { return []string{"m1", "r1"} }
func (names) Clients() []string        { return []string{"c1", "c2"} }
func (names) Groups() []string         { return []string{"m1"} }
func (names) GroupSize(string) int     { return 2 }
func bare(f faults.Fault) faults.Fault { return f.(faults.OnOp).Fault }

// TestSpaceBinds: without Ops no fault is bound to an operation; with
// them, a bound fault has no time of its own, and a client's fault (a
// pause, a crash, a link fault) is bound to an op of that client.
func TestSpaceBinds(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		sp := faultsearch.Space{Kinds: faultsearch.Kinds, Dur: 10 * time.Second, Max: 3}
		_, sched := sp.Draw(rt, names{})
		for _, f := range sched {
			if _, ok := f.(faults.OnOp); ok {
				rt.Fatalf("bound without Ops: %s", f.Name())
			}
		}
		sp.Ops = []string{"acquire", "release"}
		f := sp.Fault(rt, names{}, 0)
		o, ok := f.(faults.OnOp)
		if !ok {
			return
		}
		switch x := bare(f).(type) {
		case faults.Pause:
			if x.At != 0 || o.Trigger.Op.Client != x.Client {
				rt.Fatalf("%s", f.Name())
			}
		case faults.ClientCrash:
			if x.At != 0 || o.Trigger.Op.Client != x.Client {
				rt.Fatalf("%s", f.Name())
			}
		case faults.LinkFault:
			if x.From != 0 || x.Until != 0 || o.Trigger.Op.Client != x.Client || o.Trigger.Messages < 1 {
				rt.Fatalf("%s", f.Name())
			}
		case faults.Failover:
			if x.At != 0 {
				rt.Fatalf("%s", f.Name())
			}
		}
	})
}
