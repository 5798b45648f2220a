package compare

// Sharded runs of the matrix: one shard's runs as a partial result, and
// the merge of a whole set of them into the Results Run returns.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/locksim/locksim/internal/sweep"
)

// PartialSchema names the format of a partial result of the matrix and
// its version; ReadPartial refuses any other. A change to Partial or
// RunOutcome that an older reader would misread takes a new version.
const PartialSchema = "locksim.compare-partial/v4"

// PartialFormat is a partial result of the matrix as sweep.ReadPartial
// reads it: a run takes at most 8 KiB (its counterexamples with it: the
// largest seen is under 1 KiB), and the matrix is sharded by units
// (owner), a lane group's of at most one run per belief model.
var PartialFormat = sweep.Format{Schema: PartialSchema, RunBytes: 8 << 10, UnitJobs: int64(len(Beliefs))}

// owner is which runs of jobs (the matrix's, in job order) each shard
// owns: its units (units: a lane group's runs at one seed are one world),
// unit k to shard k mod N, so that sharding keeps the worlds a lane group
// shares.
func owner(jobs []job) sweep.Owner { return sweep.ByUnits(units(jobs)) }

// Partial is one shard's part of the matrix (RunShard): the outcome of
// each run the shard owns, in job order, with what the merge needs to
// rebuild the matrix and to check that the parts belong together.
// Header.Build and Header.Command are the caller's to fill in (the
// program's version and its command line): the merge requires them equal.
type Partial struct {
	sweep.Header
	Options PartialOptions `json:"options"`
	// Runs are the shard's runs, in job order.
	Runs []RunOutcome `json:"runs"`
}

// PartialOptions are the Options that decide which runs the matrix has,
// with the modes and algorithms by name: what Merge needs to build the
// same matrix again.
type PartialOptions struct {
	Seeds      int      `json:"seeds"`
	HeatSeeds  int      `json:"heat_seeds"`
	TableOnly  bool     `json:"table_only"`
	NoHeat     bool     `json:"no_heat"`
	Modes      []string `json:"modes"`
	Algorithms []string `json:"algorithms"`
}

// partialOptions names o's matrix (o with its defaults filled in).
func partialOptions(o Options) PartialOptions {
	p := PartialOptions{Seeds: o.Seeds, HeatSeeds: o.HeatSeeds, TableOnly: o.TableOnly, NoHeat: o.NoHeat}
	for _, m := range o.Modes {
		p.Modes = append(p.Modes, m.Name)
	}
	for _, a := range o.Algorithms {
		p.Algorithms = append(p.Algorithms, a.Name)
	}
	return p
}

// options are the Options p names, writing scenario files under dir.
func (p PartialOptions) options(dir string) (Options, error) {
	o := Options{Seeds: p.Seeds, HeatSeeds: p.HeatSeeds, TableOnly: p.TableOnly, NoHeat: p.NoHeat, ScenarioDir: dir}
	for _, name := range p.Modes {
		i := slices.IndexFunc(Modes, func(m Mode) bool { return m.Name == name })
		if i < 0 {
			return o, fmt.Errorf("no failure mode %q in this build", name)
		}
		o.Modes = append(o.Modes, Modes[i])
	}
	for _, name := range p.Algorithms {
		i := slices.IndexFunc(Algorithms, func(a Algorithm) bool { return a.Name == name })
		if i < 0 {
			return o, fmt.Errorf("no algorithm %q in this build", name)
		}
		o.Algorithms = append(o.Algorithms, Algorithms[i])
	}
	return o, nil
}

// digest is a SHA-256 of the matrix's runs: every cell's scenario file and
// number of seeds, in job order. Two matrices with the same digest have
// the same jobs.
func (m *matrix) digest() string {
	h := sha256.New()
	for _, c := range m.cells {
		fmt.Fprintf(h, "%d %d\n%s\x00", c.seeds, len(c.YAML), c.YAML)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// RunShard runs the runs of the matrix opts describes that shard index of
// count owns (owner: every count-th unit of runs in job order, from
// index),
// on opts.Workers goroutines, and returns them as a partial result.
// opts.Progress counts the shard's runs. Of a cell's runs in the shard,
// only the shortest counterexample of each class is kept: the merge
// chooses the cell's shortest among the shards' (shorter), and no other
// could be chosen. An interrupted shard returns no partial result and an
// error wrapping ctx's.
func RunShard(ctx context.Context, opts Options, index, count int) (*Partial, error) {
	shard := sweep.Shard{Index: index, Count: count}
	if count < 1 || index < 0 || index >= count {
		return nil, fmt.Errorf("compare: shard %v: want 0 <= K < N", shard)
	}
	if opts.Precision != 0 {
		// A cell's next runs depend on all its runs so far, which no shard
		// has: a shard would silently run every seed instead.
		return nil, fmt.Errorf("compare: shard %v: precision mode decides each cell's runs from the ones before, which a shard does not see", shard)
	}
	m, err := build(opts)
	if err != nil {
		return nil, err
	}
	jobs := m.jobs()
	idx := owner(jobs)(shard)
	outs, err := runJobs(ctx, jobs, idx, m.opts)
	if err != nil {
		return nil, fmt.Errorf("compare: shard %v: %d of its %d runs done: %w", shard, len(outs), len(idx), err)
	}
	keepShortest(jobs, outs)
	sum, err := sweep.RunsDigest(outs)
	if err != nil {
		return nil, err
	}
	return &Partial{
		Header:  sweep.Header{Schema: PartialSchema, Shard: index, Shards: count, Digest: m.digest(), Jobs: len(jobs), RunsDigest: sum},
		Options: partialOptions(m.opts),
		Runs:    outs,
	}, nil
}

// keepShortest drops from outs (runs in job order) every counterexample
// that is not its cell's shortest of its class among outs, as Cell.add
// would choose it (shorter): the merge, which chooses among the shards'
// shortest, then chooses what Run does, and a partial result does not
// carry a counterexample per violated run.
func keepShortest(jobs []job, outs []RunOutcome) {
	type held struct{ safety, availability, fairness int } // indices in outs, -1: none yet
	byCell := map[*Cell]*held{}
	for i, o := range outs {
		h := byCell[jobs[o.Job].cell]
		if h == nil {
			h = &held{-1, -1, -1}
			byCell[jobs[o.Job].cell] = h
		}
		h.safety = keepOne(outs, i, h.safety, func(r *RunOutcome) **Counterexample { return &r.Safety })
		h.availability = keepOne(outs, i, h.availability, func(r *RunOutcome) **Counterexample { return &r.Availability })
		h.fairness = keepOne(outs, i, h.fairness, func(r *RunOutcome) **Counterexample { return &r.Fairness })
	}
}

// keepOne keeps, of the counterexamples field(&outs[held]) and
// field(&outs[i]), the one Cell.add would hold after both (shorter; held
// comes first in job order), clears the other, and returns the index of
// the run that keeps it (held < 0: none so far).
func keepOne(outs []RunOutcome, i, held int, field func(*RunOutcome) **Counterexample) int {
	ce := field(&outs[i])
	if *ce == nil {
		return held
	}
	if held < 0 {
		return i
	}
	h := field(&outs[held])
	if shorter(*h, *ce) == *h {
		*ce = nil
		return held
	}
	*h = nil
	return i
}

// Merge rebuilds, from the partial results of every shard of one matrix
// (names are their files, for the messages), the Results that Run returns
// for the same options: the runs' outcomes are added to their cells in job
// order, as Run adds them, so that the counts, the per-seed values and
// the counterexamples chosen are the same, and so is the report Write
// writes from them. The cells' scenario files are named under
// scenarioDir, as Options.ScenarioDir. It refuses parts of different
// formats, builds, options or matrices, a shard given twice or missing,
// a part that does not hold exactly the runs its shard owns, and a part
// whose runs are not those its shard wrote (sweep.Gather).
func Merge(names []string, parts []*Partial, scenarioDir string) (*Results, error) {
	hs := make([]sweep.Header, len(parts))
	for i, p := range parts {
		hs[i] = p.Header
	}
	if err := sweep.CheckHeaders(names, hs); err != nil {
		return nil, err
	}
	if hs[0].Schema != PartialSchema {
		return nil, fmt.Errorf("%s: format %q, not %q", names[0], hs[0].Schema, PartialSchema)
	}
	for i, p := range parts[1:] {
		if a, b := fmt.Sprint(parts[0].Options), fmt.Sprint(p.Options); a != b {
			return nil, fmt.Errorf("%s and %s are not parts of one sweep: different options %s and %s", names[0], names[i+1], a, b)
		}
	}
	opts, err := parts[0].Options.options(scenarioDir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", names[0], err)
	}
	m, err := build(opts)
	if err != nil {
		return nil, err
	}
	jobs := m.jobs()
	if d := m.digest(); d != hs[0].Digest || len(jobs) != hs[0].Jobs {
		return nil, fmt.Errorf("%s: its matrix (%d runs, digest %.12s) is not this build's for the same options (%d runs, digest %.12s)",
			names[0], hs[0].Jobs, hs[0].Digest, len(jobs), d)
	}
	runs := make([][]RunOutcome, len(parts))
	for i, p := range parts {
		runs[i] = p.Runs
	}
	// Each run must be a job of the matrix at that job's seed, naming only
	// kinds that exist; its digest (Header.CheckRuns) then catches any
	// other change (a flipped outcome).
	all, err := sweep.Gather(names, hs, runs, len(jobs), "matrix", func(o RunOutcome) int { return o.Job }, func(i int, o RunOutcome) error {
		if o.Seed != jobs[i].seed {
			return fmt.Errorf("seed %d, but the job's seed is %d", o.Seed, jobs[i].seed)
		}
		return sweep.CheckKinds(o.Kinds)
	}, owner(jobs))
	if err != nil {
		return nil, err
	}
	for i, o := range all {
		jobs[i].cell.add(o)
	}
	return m.res, nil
}

// ReadPartial decodes a partial result (a Partial encoded as JSON, as
// simulate compare -shard writes it); a field it does not know is an
// error (a file of another format).
func ReadPartial(data []byte) (*Partial, error) {
	var p Partial
	if err := sweep.DecodeStrict(data, &p); err != nil {
		return nil, err
	}
	if p.Schema != PartialSchema {
		return nil, fmt.Errorf("format %q, not %q", p.Schema, PartialSchema)
	}
	return &p, nil
}
