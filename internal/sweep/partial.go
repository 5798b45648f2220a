package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locksim/locksim/checker"
)

// Header starts every partial result (the JSON file a sharded sweep
// writes): what must agree between the parts of one sweep for their merge
// to be the unsharded sweep's output, byte for byte.
type Header struct {
	// Schema names the file's format and its version
	// ("locksim.compare-partial/v1"); a reader refuses any other.
	Schema string `json:"schema"`
	// Build is the version of the program that wrote it (simulate
	// -version): another build may compute other outcomes.
	Build string `json:"build"`
	// Shard and Shards: this is part Shard (0-based) of Shards.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// Command is the sweep's options as the command line that runs it
	// unsharded (without -shard and -partial), for people and for the
	// check that the parts agree.
	Command string `json:"command"`
	// Digest is a SHA-256 of the sweep's inputs (the scenario files and
	// each one's seeds, in job order): parts that agree on it ran the same
	// list of jobs.
	Digest string `json:"digest"`
	// Jobs is the number of runs of the whole sweep.
	Jobs int `json:"jobs"`
	// RunsDigest is a SHA-256 (hex) of this part's runs as JSON
	// (RunsDigest), computed when the shard wrote them: a merge that finds
	// other runs (an edited verdict, kind or seed, a damaged file) refuses
	// the part (CheckRuns) rather than count them. It tells a changed file
	// from the one written; it is no signature against a deliberate forger,
	// who can compute it again.
	RunsDigest string `json:"runs_digest"`
}

// RunsDigest is the SHA-256 (hex) of runs encoded as JSON
// (encoding/json, as a partial result stores them): the same runs give
// the same digest after a write and a read.
func RunsDigest(runs any) (string, error) {
	b, err := json.Marshal(runs)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// CheckRuns checks that runs, read from the part with header h, are the
// runs its shard wrote: their digest is h.RunsDigest.
func (h Header) CheckRuns(runs any) error {
	d, err := RunsDigest(runs)
	if err != nil {
		return err
	}
	if d != h.RunsDigest {
		return fmt.Errorf("its runs do not match the digest written with them (runs_digest %.12s, the runs' %.12s): the file was changed after its shard wrote it", h.RunsDigest, d)
	}
	return nil
}

// CheckHeaders checks that the partial results with these headers (read
// from the files names, for the messages) are the parts of one sweep, each
// once: one schema, build, command, digest and job count, one number of
// shards, and every shard from 0 to Shards-1 exactly once.
func CheckHeaders(names []string, hs []Header) error {
	if len(hs) == 0 {
		return fmt.Errorf("no partial results")
	}
	for i, h := range hs {
		if h.Shards < 1 || h.Jobs < 0 {
			return fmt.Errorf("%s: %d shards of %d runs: not a partial result's header", names[i], h.Shards, h.Jobs)
		}
	}
	h0 := hs[0]
	for i, h := range hs[1:] {
		field, a, b := "", "", ""
		switch {
		case h.Schema != h0.Schema:
			field, a, b = "formats", h0.Schema, h.Schema
		case h.Build != h0.Build:
			field, a, b = "builds (simulate -version)", h0.Build, h.Build
		case h.Command != h0.Command:
			field, a, b = "options", h0.Command, h.Command
		case h.Shards != h0.Shards:
			field, a, b = "shard counts", strconv.Itoa(h0.Shards), strconv.Itoa(h.Shards)
		case h.Digest != h0.Digest || h.Jobs != h0.Jobs:
			field, a, b = "inputs (scenario files or matrix)", fmt.Sprintf("%d runs, digest %.12s", h0.Jobs, h0.Digest), fmt.Sprintf("%d runs, digest %.12s", h.Jobs, h.Digest)
		default:
			continue
		}
		return fmt.Errorf("%s and %s are not parts of one sweep: different %s: %q and %q", names[0], names[i+1], field, a, b)
	}
	seen := make([]string, h0.Shards)
	for i, h := range hs {
		if h.Shard < 0 || h.Shard >= h0.Shards {
			return fmt.Errorf("%s: shard %d of %d is out of range", names[i], h.Shard, h0.Shards)
		}
		if seen[h.Shard] != "" {
			return fmt.Errorf("shard %d/%d given twice: %s and %s", h.Shard, h0.Shards, seen[h.Shard], names[i])
		}
		seen[h.Shard] = names[i]
	}
	var missing []string
	for k, name := range seen {
		if name == "" {
			missing = append(missing, fmt.Sprintf("%d/%d", k, h0.Shards))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing shard(s) %s of %q (%d of %d given)", strings.Join(missing, ", "), h0.Command, len(hs), h0.Shards)
	}
	return nil
}

// Collect places the outcomes of the parts into one slice indexed by
// job: each part (shard parts[p]) lists its outcomes with their job
// indices (index(o)), which must be exactly the jobs its shard owns out of
// n (owns; nil: Shard.Jobs). It is how a merge checks that no run is
// missing or counted twice. names, when given, are the parts' files: an
// error about a part names its file.
func Collect[T any](names []string, n int, shards []Shard, parts [][]T, index func(T) int, owns Owner) ([]T, error) {
	if owns == nil {
		owns = func(s Shard) []int { return s.Jobs(n) }
	}
	out := make([]T, n)
	for p, outcomes := range parts {
		want := owns(shards[p])
		got := make([]int, len(outcomes))
		for i, o := range outcomes {
			got[i] = index(o)
		}
		if !slices.Equal(got, want) {
			file := ""
			if p < len(names) {
				file = names[p] + ": "
			}
			return nil, fmt.Errorf("%sshard %v does not hold the runs it owns (%d of the %d): %s",
				file, shards[p], len(want), n, firstDifference(got, want))
		}
		for i, j := range got {
			out[j] = outcomes[i]
		}
	}
	return out, nil
}

// firstDifference says where the job lists got and want first differ.
func firstDifference(got, want []int) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("its run %d is job %d, not job %d", i+1, got[i], want[i])
		}
	}
	return fmt.Sprintf("it holds %d runs, not %d", len(got), len(want))
}

// Gather places the runs of the parts of one sweep of jobs runs back in
// job order, checking them on the way: parts[p] are the runs, in job
// order, of the part with header hs[p], read from the file names[p] (for
// the messages); job(r) is a run's index in the sweep. Every run must be
// one of the sweep's jobs (of names what they are jobs of, in the
// message: "sweep", "matrix") and pass check, which knows the jobs (a
// run's seed is its job's, its verdict and kinds exist: CheckKinds);
// every part must hold exactly the runs its shard owns (Collect, by
// owns; nil: Shard.Jobs); and
// every part's runs must be those its shard wrote (Header.CheckRuns). A
// partial result edited by hand or damaged is refused, naming its file,
// the run and what is wrong, rather than counted. The headers are checked
// before (CheckHeaders).
func Gather[R any](names []string, hs []Header, parts [][]R, jobs int, of string, job func(R) int, check func(job int, r R) error, owns Owner) ([]R, error) {
	shards := make([]Shard, len(parts))
	for p, runs := range parts {
		shards[p] = Shard{Index: hs[p].Shard, Count: hs[p].Shards}
		for k, r := range runs {
			j := job(r)
			if j < 0 || j >= jobs {
				return nil, fmt.Errorf("%s: run %d: job %d is not one of the %s's %d", names[p], k, j, of, jobs)
			}
			if err := check(j, r); err != nil {
				return nil, fmt.Errorf("%s: run %d (job %d): %w", names[p], k, j, err)
			}
		}
	}
	all, err := Collect(names, jobs, shards, parts, job, owns)
	if err != nil {
		return nil, err
	}
	for p, runs := range parts {
		if err := hs[p].CheckRuns(runs); err != nil {
			return nil, fmt.Errorf("%s: %w", names[p], err)
		}
	}
	return all, nil
}

// CheckKinds checks that every kind a run of a partial result names is a
// kind of violation this build knows (checker.Kinds): a kind edited by
// hand would otherwise be counted, or dropped, without a word.
func CheckKinds(kinds []checker.Kind) error {
	known := checker.Kinds()
	for _, k := range kinds {
		if !slices.Contains(known, k) {
			return fmt.Errorf("kind %q is no kind of violation", k)
		}
	}
	return nil
}
