package locktest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/scenario"
)

// Setup is a scenario built in Go: one Redis master m1 (the lock's group)
// with Replicas replicas r1, r2, ... following it Lag behind, Clients
// clients c1, c2, ... that each loop acquire, hold, release, think on the
// lock under test, and the scripted Faults, for Duration of virtual time.
// Its zero value is a usable scenario: three clients on one master for
// 15 s, no faults. It is an Option (the scenario to run) and what a
// Budget draws its searches over. YAML gives the file it stands for.
type Setup struct {
	// Name names the scenario in results and files (default "locktest").
	Name string
	// Seed is the scenario's seed when Seeds is not given (default 1).
	Seed uint64
	// Duration is how long the world runs (default 15s).
	Duration time.Duration
	// Replicas is the master's replica count (default 0); Lag their
	// replication lag (default 10ms): what a failover loses.
	Replicas int
	Lag      time.Duration
	// Clients is the number of clients (default 3).
	Clients int
	// Timeout is how long a client waits for each reply (default 500ms),
	// and Retry its library's retries on a timeout: "go-redis" (the
	// default: v9's 3 retries), "none", "redisson".
	Timeout time.Duration
	Retry   string
	// Lease is the lease each client's lock is built with (its NewLock is
	// given it) and the holders count on when a grant gives no validity
	// (0: "watchdog", a hold lasts until released); Hold and Think are
	// each client's hold and think times (default 1s and 100ms).
	Lease, Hold, Think time.Duration
	// ExtendEvery, for a lock that is an Extender, is how often each
	// holder extends its hold while holding (0: never; a file's
	// extend_every). A search over it may also bind a fault to an extend
	// (Budget.OnOps), so that an extend's bugs (a PEXPIRE that renews
	// whoever holds the key) are drawn for too.
	ExtendEvery time.Duration
	// Faults are the scripted faults, each an entry of a scenario file's
	// faults list: "{kind: failover, at: 5s, group: m1}" (see
	// scenarios/README.md, "faults").
	Faults []string
}

func (s Setup) apply(c *config) error { return c.setSrc(s) }

// expr is s as a Go expression a replay hint can be pasted as: its fields
// that are not zero, in declaration order.
func (s Setup) expr() string {
	var f []string
	str := func(name, v string) {
		if v != "" {
			f = append(f, fmt.Sprintf("%s: %q", name, v))
		}
	}
	num := func(name string, v int64) {
		if v != 0 {
			f = append(f, fmt.Sprintf("%s: %d", name, v))
		}
	}
	dur := func(name string, d time.Duration) {
		if d != 0 {
			f = append(f, name+": "+goDuration(d))
		}
	}
	str("Name", s.Name)
	if s.Seed != 0 {
		f = append(f, fmt.Sprintf("Seed: %d", s.Seed))
	}
	dur("Duration", s.Duration)
	num("Replicas", int64(s.Replicas))
	dur("Lag", s.Lag)
	num("Clients", int64(s.Clients))
	dur("Timeout", s.Timeout)
	str("Retry", s.Retry)
	dur("Lease", s.Lease)
	dur("Hold", s.Hold)
	dur("Think", s.Think)
	dur("ExtendEvery", s.ExtendEvery)
	if len(s.Faults) > 0 {
		q := make([]string, len(s.Faults))
		for i, x := range s.Faults {
			q[i] = strconv.Quote(x)
		}
		f = append(f, "Faults: []string{"+strings.Join(q, ", ")+"}")
	}
	return "locktest.Setup{" + strings.Join(f, ", ") + "}"
}

// goDuration is d as Go source: a whole number of the largest unit of
// time package that divides it ("10 * time.Second"), else nanoseconds.
func goDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"}, {time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"}} {
		if d%u.d == 0 {
			if d == u.d {
				return "time." + u.name
			}
			return fmt.Sprintf("%d * time.%s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("time.Duration(%d)", int64(d))
}

func (s Setup) parse(scale float64) (*scenario.Scenario, error) {
	return scenario.ParseScaled(s.name()+" (locktest.Setup)", []byte(s.YAML()), scale)
}

// YAML is the scenario file s stands for, its lock of kind custom
// claiming the simple model (Check gives it the Impl's).
func (s Setup) YAML() string { return s.yaml(Simple, s.Faults, "any") }

func (s Setup) name() string {
	if s.Name == "" {
		return "locktest"
	}
	return s.Name
}

// withDefaults is s with every zero field at its default.
func (s Setup) withDefaults() Setup {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	def(&s.Duration, 15*time.Second)
	def(&s.Lag, 10*time.Millisecond)
	def(&s.Timeout, 500*time.Millisecond)
	def(&s.Hold, time.Second)
	def(&s.Think, 100*time.Millisecond)
	if s.Clients == 0 {
		s.Clients = 3
	}
	if s.Retry == "" {
		s.Retry = "go-redis"
	}
	return s
}

// yaml is s as a scenario file whose lock claims model, with faults (each
// a faults-list entry) and the expect section expect.
func (s Setup) yaml(model Model, faults []string, expect string) string {
	s = s.withDefaults()
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", strconv.Quote(s.name()))
	fmt.Fprintf(&b, "seed: %d\nduration: %v\n", s.Seed, s.Duration)
	b.WriteString("topology:\n  nodes:\n    - name: m1\n")
	if s.Replicas > 0 {
		b.WriteString("      replicas:\n")
		for i := 1; i <= s.Replicas; i++ {
			fmt.Fprintf(&b, "        - {name: r%d, lag: %v}\n", i, s.Lag)
		}
	}
	fmt.Fprintf(&b, "clients:\n  - {count: %d, retry: %s, timeout: %v}\n", s.Clients, s.Retry, s.Timeout)
	fmt.Fprintf(&b, "algorithm:\n  kind: custom\n  model: %s\n", model)
	if s.Lease > 0 {
		fmt.Fprintf(&b, "  lease: %v\n", s.Lease)
	} else {
		b.WriteString("  lease: watchdog\n")
	}
	fmt.Fprintf(&b, "  hold: %v\n  think: %v\n", s.Hold, s.Think)
	if s.ExtendEvery > 0 {
		fmt.Fprintf(&b, "  extend_every: %v\n", s.ExtendEvery)
	}
	if len(faults) > 0 {
		b.WriteString("faults:\n")
		for _, f := range faults {
			fmt.Fprintf(&b, "  - %s\n", f)
		}
	}
	fmt.Fprintf(&b, "expect: %s\n", expect)
	return b.String()
}
