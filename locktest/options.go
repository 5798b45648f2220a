package locktest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/locksim/locksim/checker"
)

// Option chooses what Check and Run do: the scenario (Scenario, File,
// YAML, or a Setup, which is an Option itself), the seeds (Seeds), the
// backend (Redis), where failing runs' files go (Out) and which findings
// fail Run (FailOn).
type Option interface {
	apply(c *config) error
}

// config is what the options chose.
type config struct {
	src src
	// from and n are the seeds (Seeds); n 0: the scenario's own seed.
	from uint64
	n    int
	// real, when set, runs on real servers at this scale (Redis).
	real *float64
	out  string
	// failOn, when set, are the kinds that fail Run (FailOn).
	failOn []Kind
}

// optionFunc is an Option that is a function.
type optionFunc func(c *config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// configure applies opts in order; a second scenario is an error.
func configure(opts []Option) (*config, error) {
	c := &config{}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("locktest: a nil Option")
		}
		if err := o.apply(c); err != nil {
			return nil, err
		}
	}
	if c.src == nil {
		c.src = Setup{}
	}
	return c, nil
}

// setSrc sets c's scenario, refusing a second one.
func (c *config) setSrc(s src) error {
	if c.src != nil {
		return fmt.Errorf("locktest: two scenarios, %s and %s: give one", c.src.expr(), s.expr())
	}
	c.src = s
	return nil
}

// seedList is the seeds to run: Seeds's, or def (the scenario's seed).
func (c *config) seedList(def uint64) []uint64 {
	if c.n == 0 {
		return []uint64{def}
	}
	out := make([]uint64, c.n)
	for i := range out {
		out[i] = c.from + uint64(i)
	}
	return out
}

// Scenario runs one of locksim's committed scenarios (scenarios/, as
// `simulate list` shows them, and the script kind's examples in
// scenarios/script/), by its name, with the lock under test in
// place of the scenario's: its topology, clients, faults, duration and
// seed stay; of its algorithm section the holding settings (hold, think,
// start, holds, belief), the owners and the lease (a ttl is the lease)
// stay, and the rest (the kind and its options) gives way to your lock.
func Scenario(name string) Option { return builtin(name) }

// File runs the scenario file at path (its format is scenarios/README.md):
// a file of kind custom (as Search writes them) runs your lock as it
// stands; a file of another kind is converted as Scenario converts a
// committed one.
func File(path string) Option { return file(path) }

// YAML runs the scenario text, as a file would hold it (see File).
func YAML(text string) Option { return yamlText(text) }

// Seeds runs n seeds from from (from, from+1, ..., from+n-1), instead of
// the scenario's own seed. In the simulation a seed decides everything:
// the same seed gives the same run, byte for byte.
func Seeds(from uint64, n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 || from == 0 || from > math.MaxUint64-uint64(n-1) {
			return fmt.Errorf("locktest: Seeds(%d, %d): want n >= 1 seeds from 1 up, not past the largest seed", from, n)
		}
		c.from, c.n = from, n
		return nil
	})
}

// Redis runs on real redis-server processes in real time instead of the
// simulation, every duration of the scenario multiplied by scale (in (0,
// 100]; 1: as written). A real run is not a function of its seed: each
// seed is one more run. redis-server must be on the PATH (Run skips
// without it, unless LOCKSIM_REQUIRE_REDIS is set). The lease each client's
// NewLock is given is the scaled one; a TTL the lock's code sets on its
// own, not from that lease, is not scaled. A scenario
// that pauses or crashes a client needs its clients as processes of their
// own, which a lock given in Go cannot be: it is refused.
func Redis(scale float64) Option {
	return optionFunc(func(c *config) error {
		if math.IsNaN(scale) || scale <= 0 || scale > 100 {
			return fmt.Errorf("locktest: Redis(%v): the scale must be in (0, 100]", scale)
		}
		c.real = &scale
		return nil
	})
}

// Out makes Run write the files of every run that fails into dir (see
// Result.Write).
func Out(dir string) Option {
	return optionFunc(func(c *config) error {
		if dir == "" {
			return errors.New("locktest: Out(\"\"): name a directory")
		}
		c.out = dir
		return nil
	})
}

// FailOn makes Run fail t, of the findings, only on runs with a finding
// of these kinds (checker's names: "unlock-idempotency",
// "linearizability", ...), and log the rest, instead of failing on every
// safety finding; a lock never held or never released, and a scenario
// that cannot run, still fail t. Some faults
// break every lease-based lock (a holder paused past its lease works on
// without it: mutual exclusion, silent loss); under them a test asks
// whether the lock's own steps are right, which other kinds tell (a
// release that deletes the next holder's key: unlock idempotency).
func FailOn(kinds ...Kind) Option {
	return optionFunc(func(c *config) error {
		if len(kinds) == 0 {
			return errors.New("locktest: FailOn(): name a kind")
		}
		for _, k := range kinds {
			if !slices.Contains(checker.Kinds(), k) {
				return fmt.Errorf("locktest: FailOn: unknown kind %q (the kinds: %s)", k, strings.Join(checker.KindNames(), ", "))
			}
		}
		c.failOn = slices.Clone(kinds)
		return nil
	})
}

// fails reports whether r fails Run under c: a finding of c.failOn's
// kinds, or by default a safety finding.
func (c *config) fails(r Result) bool {
	if c.failOn == nil {
		return r.Unsafe()
	}
	return slices.ContainsFunc(r.Kinds(), func(k Kind) bool { return slices.Contains(c.failOn, k) })
}
