package locktest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/traffic"
)

// The types of a lock of one's own, from the packages that define them,
// so that a test imports this package alone.
type (
	// Lock is one client's instance of the lock under test: Acquire for an
	// owner returns a Grant (what the holder may rely on), Release gives
	// it back. Its code talks to Redis through a Conn and keeps time by a
	// Runtime, never the wall clock, so that it runs unchanged in the
	// simulation and on real servers.
	Lock = traffic.UserLock
	// Extender is a Lock that can extend a hold before it runs out.
	Extender = traffic.UserExtender
	// Grant is what an acquire gives its holder: the value it wrote (how
	// the ground truth recognises the holder in the key), how long it may
	// rely on the lock, and a fencing token for a lock that issues them.
	Grant = traffic.Grant
	// NewLock makes one client's Lock on its connection to the lock's
	// Redis group, with the lease the client runs with (its own when the
	// scenario gives it one; 0: none, a watchdog), which the checkers
	// count a hold's expiry from: each simulated client calls it once per
	// run.
	NewLock = traffic.NewUserLock
	// Conn is a client's connection to a Redis group (lock.Conn).
	Conn = lock.Conn
	// Runtime is a client's clock, timers, tasks and ids (lock.Runtime).
	Runtime = lock.Runtime
	// Verdict is the checkers' verdict on one run (checker.Verdict).
	Verdict = checker.Verdict
	// Kind names a kind of finding (checker.Kind): mutual-exclusion,
	// silent-loss, liveness, ...
	Kind = checker.Kind
)

// Model is the behaviour a lock claims, which the linearizability check
// holds its history to.
type Model string

// The models a lock may claim.
const (
	// Simple: one holder at a time; an owner's second acquire is refused.
	Simple Model = "simple"
	// Reentrant: holds of one owner nest; another owner is refused.
	Reentrant Model = "reentrant"
	// Fenced: Reentrant, and every grant carries a fencing token above
	// every token issued before.
	Fenced Model = "fenced"
)

// Impl is the lock under test: how each client makes it, and the model
// it claims (Simple when empty).
type Impl struct {
	New   NewLock
	Model Model
}

// model is m's model, Simple by default.
func (m Impl) model() Model {
	if m.Model == "" {
		return Simple
	}
	return m.Model
}

// check refuses an Impl that cannot run.
func (m Impl) check() error {
	if m.New == nil {
		return errors.New("locktest: Impl.New is nil: no lock to test")
	}
	switch m.model() {
	case Simple, Reentrant, Fenced:
		return nil
	}
	return fmt.Errorf("locktest: Impl.Model %q: want %q, %q or %q", m.Model, Simple, Reentrant, Fenced)
}

// Check runs impl under the scenario opts give (Scenario, File, YAML or a
// Setup; default Setup{}) for each seed (Seeds; default the scenario's
// own), in the simulation or, with Redis, on real servers, and returns
// one Result per seed. An error is a scenario that cannot run (a bad
// file, a fault the backend cannot do, redis-server missing), never a
// finding: findings are in the Results' verdicts.
func Check(impl Impl, opts ...Option) ([]Result, error) {
	if err := impl.check(); err != nil {
		return nil, err
	}
	c, err := configure(opts)
	if err != nil {
		return nil, err
	}
	scale := 1.0
	if c.real != nil {
		scale = *c.real
	}
	s, err := load(c.src, impl, scale)
	if err != nil {
		return nil, err
	}
	if c.real != nil {
		if err := realOK(s); err != nil {
			return nil, err
		}
	}
	var out []Result
	for _, seed := range c.seedList(s.Seed) {
		var r Result
		if c.real != nil {
			r, err = runReal(s, c, seed)
		} else {
			r, err = runSim(s, c, seed)
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Run is Check in a test: it fails t with every run that violates safety
// (a finding whose Kind.Safety is true: two holders, a holder without the
// lock, a stale write, a wrong answer about who holds it; with FailOn, a
// finding of the kinds it names instead): the first such
// run's verdict, the events around the violation and the call that
// replays it, and the seeds of the others; and with
// the error of a scenario that cannot run; and with the runs in which
// the lock was never held because every acquire ended in an error
// (checker.Verdict.NeverHeld: a lock that cannot be taken is broken, and
// such a run tests nothing), or held but never released because every
// release ended in an error (checker.Verdict.NeverReleased: the run
// tested no release). Availability findings (liveness, a
// resurrected lock) and other verdicts the checks could not decide are
// logged, not failed. The scenario file's own expectation is not
// judged: Run asks whether the lock under test is safe there. With Out,
// the files of each failing run are written too. On real servers
// without redis-server, Run skips t unless LOCKSIM_REQUIRE_REDIS is set.
func Run(t testing.TB, impl Impl, opts ...Option) []Result {
	t.Helper()
	rs, err := Check(impl, opts...)
	if err != nil {
		if errors.Is(err, errNoServer) && !requireRedis() {
			t.Skipf("%s (install redis-server, or set LOCKSIM_REQUIRE_REDIS=1 to fail instead)", prefixed(err))
			return nil
		}
		t.Fatalf("%s", prefixed(err))
		return nil
	}
	c, _ := configure(opts) // configure succeeded in Check
	var first string
	var seeds, never, unreleased []uint64
	for _, r := range rs {
		if r.Verdict.NeverHeld {
			never = append(never, r.Seed)
		}
		if r.Verdict.NeverReleased {
			unreleased = append(unreleased, r.Seed)
		}
		if !c.fails(r) {
			if len(r.Verdict.Violations) > 0 || r.Verdict.Status == checker.Unknown {
				t.Logf("%s", r)
			}
			continue
		}
		if first == "" {
			first = r.String()
		}
		seeds = append(seeds, r.Seed)
		if c.out != "" {
			if err := r.Write(c.out); err != nil {
				t.Errorf("locktest: %v", err)
			}
		}
	}
	if len(seeds) > 0 {
		what := "violate safety"
		if c.failOn != nil {
			what = "have a finding of " + joinKinds(c.failOn)
		}
		t.Fatalf("locktest: %d of %d runs %s (seeds %s); the first:\n%s", len(seeds), len(rs), what, seedRanges(seeds), first)
	}
	if len(never) > 0 {
		t.Fatalf("locktest: in %d of %d runs (seeds %s) the lock was never held: every acquire answered ended in an error (logged above), so those runs tested nothing",
			len(never), len(rs), seedRanges(never))
	}
	if len(unreleased) > 0 {
		t.Fatalf("locktest: in %d of %d runs (seeds %s) the lock was never released: every release answered ended in an error (logged above), so those runs tested no release",
			len(unreleased), len(rs), seedRanges(unreleased))
	}
	return rs
}

// joinKinds writes kinds as "a, b".
func joinKinds(kinds []Kind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// seedRanges writes ascending seeds as ranges: "1-3, 7".
func seedRanges(seeds []uint64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		part := strconv.FormatUint(seeds[i], 10)
		if j > i {
			part += "-" + strconv.FormatUint(seeds[j], 10)
		}
		parts = append(parts, part)
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// prefixed is err's text with "locktest: " in front, once: Check's own
// errors say it already, a scenario file's ("FILE:LINE: field: ...") do
// not.
func prefixed(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "locktest: ") {
		return msg
	}
	return "locktest: " + msg
}
