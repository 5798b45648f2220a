package sweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shard is part Index (0-based) of Count parts of a sweep's jobs, for
// running one sweep on several machines (simulate's -shard K/N): job i
// belongs to shard i mod Count (Jobs), or unit k of jobs that run
// together to shard k mod Count (ByUnits).
//
// Striding rather than contiguous blocks, because a sweep's jobs are in
// cell (or scenario) order and their costs differ several-fold from cell
// to cell (compare's heatmap cells, last, cost several times the others):
// blocks would hand one shard all the costly cells, while striding gives
// every shard every Count-th seed of every cell, so that the shards' work
// differs by at most one run per cell. Which jobs a shard owns depends on
// nothing but the number of jobs and (Index, Count), so every machine
// computes the same split. The zero Shard (Count 0) is the whole sweep.
type Shard struct {
	Index, Count int
}

// ParseShard parses "K/N": shard K of N, K in 0..N-1 (0-based, as
// Kubernetes's JOB_COMPLETION_INDEX).
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	ki, errK := strconv.Atoi(k)
	ni, errN := strconv.Atoi(n)
	switch {
	case !ok || errK != nil || errN != nil:
		return Shard{}, fmt.Errorf("%q: want K/N, shard K (0-based) of N", s)
	case ni < 1:
		return Shard{}, fmt.Errorf("%q: need at least 1 shard", s)
	case ki < 0 || ki >= ni:
		return Shard{}, fmt.Errorf("%q: K is 0-based, from 0 to %d (as JOB_COMPLETION_INDEX)", s, ni-1)
	}
	return Shard{Index: ki, Count: ni}, nil
}

// String is "K/N", as ParseShard reads it.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Sharded reports whether s is a part rather than the whole sweep.
func (s Shard) Sharded() bool { return s.Count > 0 }

// Jobs lists the indices, in increasing order, of the jobs of n that s
// owns: all of them for the zero Shard.
func (s Shard) Jobs(n int) []int {
	step, first := max(s.Count, 1), s.Index
	out := make([]int, 0, (n+step-1)/step)
	for i := first; i < n; i += step {
		out = append(out, i)
	}
	return out
}

// Owner lists, in increasing order, the indices of the jobs a shard owns
// in a sweep: Shard.Jobs of the sweep's number of jobs, or ByUnits.
type Owner func(s Shard) []int

// ByUnits is the Owner of a sweep whose jobs run in units, several jobs
// to one unit (compare runs a lane group's runs of one seed as one
// world): unit k belongs to shard k mod Count, with all its jobs, so
// that no unit is split between machines. units lists each unit's job
// indices; every job is in exactly one. Striding over units keeps
// Shard's reason: units are in job order, so every shard gets every
// Count-th unit of every cell.
func ByUnits(units [][]int) Owner {
	return func(s Shard) []int {
		step := max(s.Count, 1)
		var out []int
		for k := s.Index; k < len(units); k += step {
			out = append(out, units[k]...)
		}
		slices.Sort(out)
		return out
	}
}
