package sweep

import (
	"fmt"
	"strings"
	"testing"
)

// TestShardJobs: the shards of a sweep own every job exactly once, job i
// belonging to shard i mod N, and their sizes differ by at most one.
func TestShardJobs(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100} {
		for _, count := range []int{1, 2, 3, 8} {
			owner := make([]int, n)
			for i := range owner {
				owner[i] = -1
			}
			lo, hi := n, 0
			for k := range count {
				s := Shard{Index: k, Count: count}
				jobs := s.Jobs(n)
				lo, hi = min(lo, len(jobs)), max(hi, len(jobs))
				for _, j := range jobs {
					if owner[j] != -1 || j%count != k {
						t.Fatalf("n %d, %d shards: job %d in shard %d (owner %d)", n, count, j, k, owner[j])
					}
					owner[j] = k
				}
			}
			for j, o := range owner {
				if o < 0 {
					t.Fatalf("n %d, %d shards: job %d in no shard", n, count, j)
				}
			}
			if n > 0 && hi-lo > 1 {
				t.Errorf("n %d, %d shards: sizes from %d to %d", n, count, lo, hi)
			}
		}
	}
	if got := fmt.Sprint(Shard{}.Jobs(3)); got != "[0 1 2]" || (Shard{}).Sharded() {
		t.Errorf("the zero Shard: %s", got)
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]string{"0/1": "0/1", "2/3": "2/3", "0/16": "0/16"} {
		s, err := ParseShard(in)
		if err != nil || s.String() != want || !s.Sharded() {
			t.Errorf("%q: %v, %v", in, s, err)
		}
	}
	for in, msg := range map[string]string{"3/3": "0-based, from 0 to 2", "-1/3": "0-based", "1/0": "at least 1 shard", "1": "want K/N",
		"a/b": "want K/N", "1/2/3": "want K/N", "": "want K/N"} {
		if _, err := ParseShard(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", in, err, msg)
		}
	}
}

// TestByUnits: sharded by units, each unit's jobs go whole to shard k mod
// N, every job is owned exactly once, and a shard's jobs come sorted.
func TestByUnits(t *testing.T) {
	units := [][]int{{0, 3, 6}, {1}, {2}, {4, 7}, {5}, {8}}
	owns := ByUnits(units)
	got := fmt.Sprint(owns(Shard{0, 2}), owns(Shard{1, 2}), owns(Shard{}))
	if want := "[0 2 3 5 6] [1 4 7 8] [0 1 2 3 4 5 6 7 8]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, count := range []int{1, 2, 3, 4, 7} {
		seen := map[int]int{}
		for k := range count {
			for _, j := range owns(Shard{k, count}) {
				seen[j]++
			}
		}
		for j := range 9 {
			if seen[j] != 1 {
				t.Errorf("%d shards: job %d owned %d times", count, j, seen[j])
			}
		}
	}
}

// TestPartialLimitByUnits: a part sharded by units may hold up to
// UnitJobs times its even share of the runs, never more than the sweep.
func TestPartialLimitByUnits(t *testing.T) {
	h := Header{Shard: 0, Shards: 4, Jobs: 10}
	byJobs, _ := partialLimit(h, Format{RunBytes: 100})
	byUnits, _ := partialLimit(h, Format{RunBytes: 100, UnitJobs: 3})
	whole, _ := partialLimit(Header{Shard: 0, Shards: 1, Jobs: 10}, Format{RunBytes: 100, UnitJobs: 3})
	if byJobs != MaxHeader+300 || byUnits != MaxHeader+900 || whole != MaxHeader+1000 {
		t.Errorf("limits %d, %d, %d: want %d, %d, %d", byJobs, byUnits, whole, MaxHeader+300, MaxHeader+900, MaxHeader+1000)
	}
}
