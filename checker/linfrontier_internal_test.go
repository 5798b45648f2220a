package checker

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFrontierFindsFirstMatch: a frontier keeps its configurations in the
// order they were added, merging a configuration into the first one with
// the same linearized and armed operations, whether it finds them by a scan
// (up to frontierScan) or by its map (beyond): the same configurations, in
// the same order, as a search of every configuration; and seenAdd admits a
// configuration only once.
func TestFrontierFindsFirstMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ops := []*linOp{{}, {}, {}}
	for _, n := range []int{5, frontierScan, frontierScan + 1, 200} {
		f, seen := newFrontier(nil), newFrontier(nil)
		var want []linConfig
		for range n {
			c := linConfig{lin: []uint64{uint64(r.IntN(n/2 + 1)), uint64(r.IntN(2))}, st: &linState{armed: ops[:r.IntN(len(ops)+1)]}}
			if i := slices.IndexFunc(want, func(g linConfig) bool {
				return slices.Equal(g.lin, c.lin) && slices.Equal(g.st.armed, c.st.armed)
			}); i < 0 {
				want = append(want, c)
			}
			f.add(c)
			fresh := !slices.ContainsFunc(seen.cfgs, func(g linConfig) bool { return slices.Equal(g.lin, c.lin) && g.st.equal(c.st) })
			if seenAdd(seen, c) != fresh {
				t.Fatalf("n=%d: seenAdd says new=%v of a configuration that is new=%v", n, !fresh, fresh)
			}
		}
		if len(f.cfgs) != len(want) || len(seen.cfgs) != len(want) {
			t.Fatalf("n=%d: %d configurations (seen %d), want %d", n, len(f.cfgs), len(seen.cfgs), len(want))
		}
		for i := range want {
			for _, got := range []linConfig{f.cfgs[i], seen.cfgs[i]} {
				if !slices.Equal(got.lin, want[i].lin) || !slices.Equal(got.st.armed, want[i].st.armed) {
					t.Fatalf("n=%d: configuration %d is %v/%d, want %v/%d", n, i, got.lin, len(got.st.armed), want[i].lin, len(want[i].st.armed))
				}
			}
		}
		if (len(want) > frontierScan) != (f.byKey != nil) {
			t.Errorf("n=%d: %d configurations, map %v", n, len(want), f.byKey != nil)
		}
	}
}
