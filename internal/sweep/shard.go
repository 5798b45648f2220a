package sweep

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is part Index (0-based) of Count parts of a sweep's jobs, for
// running one sweep on several machines (simulate's -shard K/N): job i
// belongs to shard i mod Count.
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
