package pool

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

// TestCheckHeaders: the parts of one sweep, each once, in any order,
// pass; a part from another format, build, command, input or number of
// shards, a shard twice or missing, fail, naming the files.
func TestCheckHeaders(t *testing.T) {
	h := func(k int, edit func(*Header)) Header {
		x := Header{Schema: "s/v1", Build: "b", Shard: k, Shards: 3, Command: "c", Digest: "d", Jobs: 10}
		if edit != nil {
			edit(&x)
		}
		return x
	}
	names := []string{"p0", "p1", "p2", "p3"}
	if err := CheckHeaders(names[:3], []Header{h(2, nil), h(0, nil), h(1, nil)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		hs   []Header
		want string
	}{
		{[]Header{h(0, nil), h(1, func(x *Header) { x.Schema = "s/v2" }), h(2, nil)}, `p0 and p1 are not parts of one sweep: different formats: "s/v1" and "s/v2"`},
		{[]Header{h(0, nil), h(1, nil), h(2, func(x *Header) { x.Build = "b2" })}, "p0 and p2 are not parts of one sweep: different builds"},
		{[]Header{h(0, nil), h(1, func(x *Header) { x.Command = "c2" }), h(2, nil)}, "different options"},
		{[]Header{h(0, nil), h(1, func(x *Header) { x.Digest = "e" }), h(2, nil)}, "different inputs"},
		{[]Header{h(0, nil), h(1, func(x *Header) { x.Jobs = 11 }), h(2, nil)}, "different inputs"},
		{[]Header{h(0, nil), h(1, func(x *Header) { x.Shards = 4 }), h(2, nil)}, `different shard counts: "3" and "4"`},
		{[]Header{h(0, nil), h(1, nil), h(1, nil), h(2, nil)}, "shard 1/3 given twice: p1 and p2"},
		{[]Header{h(0, nil), h(2, nil)}, `missing shard(s) 1/3 of "c" (2 of 3 given)`},
		{[]Header{h(3, nil)}, "p0: shard 3 of 3 is out of range"},
		{nil, "no partial results"},
		// Edited files: an error, not a panic.
		{[]Header{h(0, func(x *Header) { x.Shards = -1 })}, "p0: -1 shards of 10 runs: not a partial result's header"},
		{[]Header{h(0, func(x *Header) { x.Jobs = -2 })}, "p0: 3 shards of -2 runs"},
	} {
		if err := CheckHeaders(names[:len(c.hs)], c.hs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.hs, err, c.want)
		}
	}
}

// TestCollect: the parts' outcomes land at their job indices; a part
// that lacks a run of its shard, or holds another's, fails.
func TestCollect(t *testing.T) {
	shards := []Shard{{1, 2}, {0, 2}}
	id := func(i int) int { return i }
	all, err := Collect(5, shards, [][]int{{1, 3}, {0, 2, 4}}, id)
	if err != nil || fmt.Sprint(all) != "[0 1 2 3 4]" {
		t.Fatalf("%v, %v", all, err)
	}
	for _, parts := range [][][]int{{{1}, {0, 2, 4}}, {{1, 3}, {0, 2, 3}}, {{1, 3, 5}, {0, 2, 4}}} {
		if _, err := Collect(5, shards, parts, id); err == nil || !strings.Contains(err.Error(), "does not hold the runs it owns") {
			t.Errorf("%v: %v", parts, err)
		}
	}
}

// TestCheckRuns: runs check against the digest computed over them, and
// fail it once one field of one run changes, or a run goes.
func TestCheckRuns(t *testing.T) {
	type run struct {
		Job  int    `json:"job"`
		Kind string `json:"kind"`
	}
	runs := []run{{0, "ok"}, {3, "violated"}}
	d, err := RunsDigest(runs)
	if err != nil {
		t.Fatal(err)
	}
	h := Header{RunsDigest: d}
	if err := h.CheckRuns(runs); err != nil {
		t.Fatalf("the runs written: %v", err)
	}
	for _, changed := range [][]run{{{0, "ok"}, {3, "ok"}}, {{0, "ok"}, {4, "violated"}}, {{0, "ok"}}} {
		if err := h.CheckRuns(changed); err == nil || !strings.Contains(err.Error(), "do not match the digest") {
			t.Errorf("%v: %v", changed, err)
		}
	}
}
