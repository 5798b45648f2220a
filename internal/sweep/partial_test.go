package sweep

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	all, err := Collect(nil, 5, shards, [][]int{{1, 3}, {0, 2, 4}}, id, nil)
	if err != nil || fmt.Sprint(all) != "[0 1 2 3 4]" {
		t.Fatalf("%v, %v", all, err)
	}
	for _, parts := range [][][]int{{{1}, {0, 2, 4}}, {{1, 3}, {0, 2, 3}}, {{1, 3, 5}, {0, 2, 4}}} {
		if _, err := Collect(nil, 5, shards, parts, id, nil); err == nil || !strings.Contains(err.Error(), "does not hold the runs it owns") {
			t.Errorf("%v: %v", parts, err)
		}
	}
	// By units: the parts must hold their units' jobs, not every other job.
	owns := ByUnits([][]int{{0, 2}, {1}, {3, 4}})
	all, err = Collect(nil, 5, shards, [][]int{{1}, {0, 2, 3, 4}}, id, owns)
	if err != nil || fmt.Sprint(all) != "[0 1 2 3 4]" {
		t.Fatalf("by units: %v, %v", all, err)
	}
	if _, err := Collect(nil, 5, shards, [][]int{{1, 3}, {0, 2, 4}}, id, owns); err == nil || !strings.Contains(err.Error(), "shard 1/2 does not hold the runs it owns (1 of the 5): it holds 2 runs, not 1") {
		t.Errorf("by units, the parts by jobs: %v", err)
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

// TestGather: three parts of a sweep of 7 jobs, in any order, are put
// back in job order; a run outside the sweep, one its check refuses, a
// part missing a run and a part whose runs changed after its digest was
// written are refused, naming the file and the run.
func TestGather(t *testing.T) {
	type run struct {
		Job  int    `json:"job"`
		Seed uint64 `json:"seed"`
	}
	part := func(k int, edit func([]run) []run) ([]run, Header) {
		var runs []run
		for _, j := range (Shard{k, 3}).Jobs(7) {
			runs = append(runs, run{j, uint64(j + 100)})
		}
		d, err := RunsDigest(runs)
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			runs = edit(runs)
		}
		return runs, Header{Shard: k, Shards: 3, Jobs: 7, RunsDigest: d}
	}
	gather := func(edit func([]run) []run, order ...int) ([]run, error) {
		names, hs, parts := make([]string, 3), make([]Header, 3), make([][]run, 3)
		for p, k := range order {
			var e func([]run) []run
			if k == 1 {
				e = edit
			}
			names[p] = fmt.Sprintf("p%d.json", k)
			parts[p], hs[p] = part(k, e)
		}
		return Gather(names, hs, parts, 7, "sweep", func(r run) int { return r.Job }, func(job int, r run) error {
			if r.Seed != uint64(job+100) {
				return fmt.Errorf("seed %d, but the job's seed is %d", r.Seed, job+100)
			}
			return nil
		}, nil)
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}} {
		all, err := gather(nil, order...)
		if err != nil || fmt.Sprint(all) != "[{0 100} {1 101} {2 102} {3 103} {4 104} {5 105} {6 106}]" {
			t.Fatalf("order %v: %v, %v", order, all, err)
		}
	}
	for _, c := range []struct {
		edit func([]run) []run
		want string
	}{
		{func(rs []run) []run { rs[1].Job = 9; return rs }, "p1.json: run 1: job 9 is not one of the sweep's 7"},
		{func(rs []run) []run { rs[1].Seed = 5; return rs }, "p1.json: run 1 (job 4): seed 5, but the job's seed is 104"},
		{func(rs []run) []run { return rs[:1] }, "shard 1/3 does not hold the runs it owns"},
		{func(rs []run) []run { rs[1], rs[0] = rs[0], rs[1]; return rs }, "shard 1/3 does not hold the runs it owns"},
		{func(rs []run) []run { return append(rs[:1], run{2, 102}) }, "shard 1/3 does not hold the runs it owns"},
	} {
		if _, err := gather(c.edit, 0, 1, 2); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	// A change the check cannot see, caught by the digest only.
	type flagged struct {
		Job int  `json:"job"`
		Bad bool `json:"bad"`
	}
	runs := []flagged{{0, false}, {1, false}}
	d, _ := RunsDigest(runs)
	runs[1].Bad = true
	_, err := Gather([]string{"p.json"}, []Header{{Shard: 0, Shards: 1, Jobs: 2, RunsDigest: d}}, [][]flagged{runs}, 2, "sweep",
		func(r flagged) int { return r.Job }, func(int, flagged) error { return nil }, nil)
	if err == nil || !strings.Contains(err.Error(), "p.json: its runs do not match the digest written with them") {
		t.Errorf("a run changed after its digest: %v", err)
	}
}

// TestReadPartialFormats: a partial result of a format not given, or of
// another build, is refused naming the formats read and both builds; one
// larger than its shard can be is refused by its size, unread; the one
// written is read back whole.
func TestReadPartialFormats(t *testing.T) {
	dir := t.TempDir()
	f := Format{Schema: "x-partial/v1", RunBytes: 10}
	write := func(name, schema, build, pad string) string {
		file := filepath.Join(dir, name)
		p := struct {
			Header
			Runs []int `json:"runs"`
		}{Header{Schema: schema, Build: build, Shard: 0, Shards: 2, Jobs: 4}, []int{0, 2}}
		if err := WritePartial(file, p); err != nil {
			t.Fatal(err)
		}
		if pad != "" {
			b, _ := os.ReadFile(file)
			if err := os.WriteFile(file, append(b, pad...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return file
	}
	good := write("good.json", "x-partial/v1", "b1", "")
	data, h, err := ReadPartial(good, "b1", Format{Schema: "y/v1"}, f)
	if err != nil || h.Schema != "x-partial/v1" || h.Shards != 2 || !strings.HasSuffix(string(data), `"runs":[0,2]}`+"\n") {
		t.Fatalf("%q, %+v, %v", data, h, err)
	}
	for _, c := range []struct{ file, want string }{
		{write("v2.json", "x-partial/v2", "b1", ""), `v2.json: format "x-partial/v2": this simulate merges y/v1 and x-partial/v1`},
		{write("b2.json", "x-partial/v1", "b2", ""), `b2.json: written by "b2", not by this build ("b1")`},
		{write("big.json", "x-partial/v1", "b1", strings.Repeat(" ", MaxHeader)), "larger than shard 0/2 of a sweep of 4 runs can be (1048596 bytes)"},
		{dir, "a directory, not a regular file"},
	} {
		if _, _, err := ReadPartial(c.file, "b1", Format{Schema: "y/v1"}, f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
}
