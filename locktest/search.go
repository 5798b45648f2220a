package locktest

// The fault search: rapid draws fault schedules from a Budget, runs each
// in the simulation, and shrinks a failing one; the shrunk run is written
// as a scenario file that replays it.

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/faultsearch"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// Budget is what a search (Search, Find) draws its runs from and may
// spend. Its zero value is a usable budget: up to 2 faults of the default
// kinds per run, at drawn times, 100 runs on Setup{}. A bug that needs a
// fault on one request (a lost reply to a release by plain DEL) wants
// OnOps too: at a drawn time such a fault hits that request by chance.
type Budget struct {
	// Faults are the fault kinds to draw, as scenario files name them:
	// failover, crash, pause, client-crash, clock-jump, drop-replies,
	// drop-requests, delay, duplicate. The default, DefaultFaults, holds
	// the faults a lock on one Redis master can be expected to survive.
	// Failovers of an asynchronous replica, crashes of a master without
	// persistence and node clock jumps lose any such lock's key; a holder
	// paused past its lease works on without it; and a request delayed
	// past the client's timeout lands after its resent copy was answered
	// (a SET that lands after its acquire returned "not acquired" leaves a
	// key held by nobody, locksim's own SimpleLock's too). Only a lock
	// built for them (fencing, a quorum, a request that cannot land late)
	// survives those.
	Faults []string
	// MaxFaults is the most faults one run draws (default 2).
	MaxFaults int
	// OnOps also lets a fault be bound to one of the lock's operations
	// (the nth acquire or release of a client, or extend where the
	// Setup extends (ExtendEvery): at its call, when its first
	// request is applied, at its return) instead of a time. A fault that
	// must fall between two requests of one call (a crash between a SETNX
	// and its EXPIRE, a pause between a GET and a DEL) is found this way,
	// and almost never at a drawn time.
	OnOps bool
	// Over are the topologies to draw runs over, one per run (default
	// Setup{}); each one's own Faults come first in every run.
	Over []Setup
	// Duration, when set, is every run's length instead of each Setup's.
	Duration time.Duration
	// Runs is how many runs to draw (default 100); Shrink how many more
	// runs the shrinking of a failure may spend (default 500): a count,
	// not a time, so that the shrunk run is the same on any machine.
	Runs, Shrink int
	// Seed is rapid's base seed (default 1): the same seed draws the same
	// runs, so a search that passed passes again and one that failed
	// shrinks to the same file. -rapid.seed on the command line wins.
	Seed uint64
	// Find are the kinds of finding the search looks for (default: every
	// safety kind, Kind.Safety, and liveness when Liveness is set).
	Find []Kind
	// Liveness, when set, also makes it a finding that the lock stays
	// free longer than this while clients wait for it (the checker's
	// liveness bound): how a lock that never expires is found.
	Liveness time.Duration
	// Dir is where Search writes a failure's scenario file (default
	// testdata/locktest).
	Dir string
}

// DefaultFaults are Budget.Faults's default kinds.
var DefaultFaults = []string{"client-crash", "drop-replies", "drop-requests", "duplicate"}

// withDefaults is b with its zero fields at their defaults.
func (b Budget) withDefaults() Budget {
	if len(b.Faults) == 0 {
		b.Faults = DefaultFaults
	}
	if b.MaxFaults == 0 {
		b.MaxFaults = 2
	}
	if len(b.Over) == 0 {
		b.Over = []Setup{{}}
	}
	if b.Runs == 0 {
		b.Runs = 100
	}
	if b.Shrink == 0 {
		b.Shrink = 500
	}
	if b.Seed == 0 {
		b.Seed = 1
	}
	if b.Dir == "" {
		b.Dir = filepath.Join("testdata", "locktest")
	}
	return b
}

// check refuses a budget a search cannot draw from.
func (b Budget) check() error {
	for _, k := range b.Find {
		if !slices.Contains(checker.Kinds(), k) {
			return fmt.Errorf("locktest: Budget.Find: unknown kind %q (the kinds: %s)", k, strings.Join(checker.KindNames(), ", "))
		}
	}
	for _, k := range b.Faults {
		if !slices.Contains(faultsearch.Kinds, k) {
			return fmt.Errorf("locktest: Budget.Faults: unknown kind %q (the kinds: %s)", k, strings.Join(faultsearch.Kinds, ", "))
		}
	}
	if b.MaxFaults < 0 || b.Runs < 0 || b.Shrink < 0 || b.Duration < 0 || b.Liveness < 0 {
		return errors.New("locktest: Budget: a negative count or duration")
	}
	for i, s := range b.Over {
		if s.Replicas == 0 && slices.Contains(b.Faults, "failover") {
			return fmt.Errorf("locktest: Budget.Over[%d]: a failover needs a replica (Setup.Replicas)", i)
		}
	}
	return nil
}

// finds reports whether v has a finding the search looks for: one of
// b.Find, or by default a safety one, or liveness when the budget bounds
// it.
func (b Budget) finds(v checker.Verdict) bool {
	return slices.ContainsFunc(v.Kinds(), func(k Kind) bool {
		if len(b.Find) > 0 {
			return slices.Contains(b.Find, k)
		}
		return k.Safety() || (k == checker.Liveness && b.Liveness > 0)
	})
}

// expect is the expect section of a search's runs: what bounds the
// checks (the liveness bound), or, for the file of a failure, also the
// kinds found.
func (b Budget) expect(kinds []Kind) string {
	var kv []string
	if len(kinds) > 0 {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = string(k)
		}
		kv = append(kv, "violated: ["+strings.Join(names, ", ")+"]")
	}
	if b.Liveness > 0 {
		kv = append(kv, "liveness: "+b.Liveness.String())
	}
	if len(kv) == 0 {
		return "any"
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// Counterexample is the shrunk run of a search that failed.
type Counterexample struct {
	// Result is the run, its verdict and timeline.
	Result Result
	// YAML is the scenario file that replays it (kind custom, the drawn
	// faults, expect: violated with the kinds found): Save writes it.
	YAML string
	// Faults names the run's faults.
	Faults []string
	// Runs counts the runs until the first failure, Shrunk those spent
	// shrinking it.
	Runs, Shrunk int
}

// Find is Search without a test: it returns the shrunk counterexample,
// nil when the budget's runs found none, and an error when a run could
// not run (a lock whose New fails, a budget it cannot draw from).
//
// Once rapid has shrunk a failing run, each drawn fault is left out in
// turn, last first, and stays out when the run still fails: rapid's
// shrinker, which works on the draws, can keep a fault that does nothing
// (a later fault's draws depend on it).
func Find(impl Impl, b Budget) (*Counterexample, error) {
	if err := impl.check(); err != nil {
		return nil, err
	}
	b = b.withDefaults()
	if err := b.check(); err != nil {
		return nil, err
	}
	restore, err := faultsearch.Flags(b.Runs, b.Seed)
	if err != nil {
		return nil, err
	}
	defer restore()
	model := impl.model()
	var runErr error           // the first run that could not run: it ends the search
	var refused error          // the first drawn run the loader refused
	var ran int                // runs the loader took
	runs := map[string]drawn{} // every run drawn, by its text
	try := func(d drawn) (Result, bool) {
		if runErr != nil {
			return Result{}, false
		}
		s, err := scenario.Parse(searchFile, []byte(d.text(model, b.expect(nil))))
		if err != nil { // a drawn fault the loader refuses (a pause of 0): not a run
			refused = cmp.Or(refused, err)
			return Result{}, false
		}
		ran++
		r, err := runLoaded(s, impl)
		if err != nil {
			runErr = err
			return Result{}, false
		}
		return r, b.finds(r.Verdict)
	}
	found := faultsearch.Find(searchFile, func(t *rapid.T) (string, func() string) {
		d := b.draw(t)
		key := d.text(model, "")
		runs[key] = d
		return key, func() string {
			if r, bad := try(d); bad {
				return r.String()
			}
			return ""
		}
	}, b.Shrink)
	switch {
	case runErr != nil:
		return nil, fmt.Errorf("locktest: a search's run: %w", runErr)
	case ran == 0:
		return nil, fmt.Errorf("locktest: no run the search drew could be loaded, the first: %w", refused)
	case !found.Failed:
		return nil, nil
	case found.Key == "":
		return nil, fmt.Errorf("locktest: the search failed without a finding:\n%s", strings.Join(found.Logs, "\n"))
	}
	d := runs[found.Key]
	for i := len(d.s.Faults) - 1; i >= d.own; i-- {
		less := d
		less.s.Faults = slices.Delete(slices.Clone(d.s.Faults), i, i+1)
		if _, bad := try(less); bad {
			d = less
		}
	}
	r, bad := try(d)
	if !bad {
		return nil, fmt.Errorf("locktest: the shrunk run no longer fails (a run that is not a function of its seed?): %v", runErr)
	}
	return &Counterexample{Result: r, Runs: found.ToFind, Shrunk: found.Spent, Faults: r.files.Faults,
		YAML: d.text(model, b.expect(r.Kinds()))}, nil
}

// searchFile names a search's runs in the loader's errors.
const searchFile = "locktest.Search"

// drawn is one run a search drew: a topology of Budget.Over with its
// defaults, whose Seed is the run's and whose Faults are its own (the
// first own of them) and then the drawn ones.
type drawn struct {
	s   Setup
	own int
}

// text is d's scenario file with a lock claiming model and the expect
// section expect.
func (d drawn) text(model Model, expect string) string { return d.s.yaml(model, d.s.Faults, expect) }

// draw draws one run: a topology of b.Over, a seed and a schedule.
func (b Budget) draw(t *rapid.T) drawn {
	i := 0
	if len(b.Over) > 1 {
		i = rapid.IntRange(0, len(b.Over)-1).Draw(t, "topology")
	}
	s := b.Over[i].withDefaults()
	if b.Duration > 0 {
		s.Duration = b.Duration
	}
	sp := faultsearch.Space{Kinds: b.Faults, Dur: s.Duration, Max: b.MaxFaults}
	if b.OnOps {
		sp.Ops = []string{"acquire", "release"}
		if s.ExtendEvery > 0 {
			sp.Ops = append(sp.Ops, "extend")
		}
	}
	seed, sched := sp.Draw(t, setupNames{s.Replicas, s.Clients})
	d := drawn{s: s, own: len(s.Faults)}
	d.s.Faults = slices.Clone(s.Faults)
	for _, f := range sched {
		text, err := scenario.FaultText(f)
		if err != nil {
			panic(err) // the drawer draws only the faults list's kinds
		}
		d.s.Faults = append(d.s.Faults, text)
	}
	d.s.Seed = seed
	return d
}

// runLoaded runs s, a search's run, with impl's lock, once, at its seed.
func runLoaded(s *scenario.Scenario, impl Impl) (Result, error) {
	src := yamlText(s.Source)
	s, err := s.WithUserLock(impl.New, string(impl.Model))
	if err != nil {
		return Result{}, err
	}
	return runSim(s, &config{src: src}, s.Seed)
}

// setupNames are the names of a Setup's topology, which faults are drawn
// against: master m1 (the one group) and its replicas, clients c1, c2, ...
type setupNames struct{ replicas, clients int }

func (s setupNames) Nodes() []string {
	out := []string{"m1"}
	for i := 1; i <= s.replicas; i++ {
		out = append(out, "r"+strconv.Itoa(i))
	}
	return out
}

func (s setupNames) Clients() []string {
	out := make([]string, s.clients)
	for i := range out {
		out[i] = "c" + strconv.Itoa(i+1)
	}
	return out
}

func (s setupNames) Groups() []string     { return []string{"m1"} }
func (s setupNames) GroupSize(string) int { return 1 + s.replicas }

// Save writes the counterexample's scenario file as dir/name.yaml (name
// made a file name: "/" becomes "_"), named name inside, through a
// temporary file and a rename, and returns its path; the Result's Replay
// then names the file.
func (cx *Counterexample) Save(dir, name string) (string, error) {
	base := strings.NewReplacer("/", "_", " ", "_").Replace(name)
	text := cx.YAML
	if i := strings.IndexByte(text, '\n'); strings.HasPrefix(text, "name: ") && i > 0 {
		desc := fmt.Sprintf("found by locktest.Search after %d runs, shrunk in %d more: %s", cx.Runs, cx.Shrunk, strings.Join(cx.Faults, "; "))
		text = "name: " + strconv.Quote(base) + "\ndescription: " + strconv.Quote(desc) + text[i:]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, base+".yaml")
	if err := report.WriteFile(path, []byte(text)); err != nil {
		return "", err
	}
	cx.Result.Replay = fmt.Sprintf("locktest.Run(t, impl, locktest.File(%q))", path)
	return path, nil
}

// Search draws runs from b (rapid.Check inside), runs each in the
// simulation with impl's lock, and when one has a finding (a safety one,
// or liveness beyond b.Liveness), shrinks it to the simplest run that
// still has one, writes that run as a scenario file into b.Dir (named
// after the test: TestX.yaml, ready to commit) and fails t with its
// verdict, its timeline and the call that replays it:
//
//	locktest.Run(t, impl, locktest.File("testdata/locktest/TestX.yaml"))
//
// Search sets rapid's flags (checks, seed) for its duration: do not run
// it in parallel with other rapid tests.
func Search(t testing.TB, impl Impl, b Budget) {
	t.Helper()
	cx, err := Find(impl, b)
	if err != nil {
		t.Fatalf("%v", err)
	}
	b = b.withDefaults()
	if cx == nil {
		t.Logf("locktest: no finding in %d runs", b.Runs)
		return
	}
	path, err := cx.Save(b.Dir, t.Name())
	if err != nil {
		t.Fatalf("locktest: a finding, and its file could not be written: %v\n%s", err, cx.Result)
	}
	t.Fatalf("locktest: found after %d runs, shrunk in %d more, saved as %s (commit it):\n%s", cx.Runs, cx.Shrunk, path, cx.Result)
}
