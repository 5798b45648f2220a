package scenario

// Per-client workload settings: read once the algorithm's kind is known,
// and applied to the kind's config through its Workload's settings
// (algorithm.go), the holding settings once for every kind.

import (
	"slices"
	"time"

	"github.com/locksim/locksim/traffic"
)

// ClientSettings are a client entry's own workload settings: each set field
// overrides the algorithm section's for that client (every client of a
// `count` entry gets the same). A nil field takes the algorithm's value.
type ClientSettings struct {
	// Start delays the client's first acquire (traffic configs' Start).
	Start *time.Duration
	// Holds is the number of holdings before the client stops (0: never).
	Holds *int
	// Hold and Think are the algorithm's hold and think times.
	Hold, Think *time.Duration
	// Wait is the acquire's wait (owner-based kinds only).
	Wait *time.Duration
	// Lease is the explicit lease, 0 for the watchdog (owner-based kinds).
	Lease *time.Duration
	// TTL is the lease of simple and redlock-spec.
	TTL *time.Duration
	// ExtendEvery is the extension interval of redlock-spec, custom and
	// script (0: none).
	ExtendEvery *time.Duration
	// Belief is the holder's belief model.
	Belief *traffic.Belief
	// ReadRatio is rwlock's probability that a holding takes the read half
	// (0: always the write half, 1: always the read half), so that a
	// scenario can name its readers and its writers.
	ReadRatio *float64
}

// clientCommonFields are the per-client fields of every kind (its
// traffic.Holding), and clientWorkloadFields every per-client field of any
// kind, beyond the entry's own (name, count, latency, timeout, retry,
// drift_ppm): ClientSettings's.
var (
	clientCommonFields   = []string{"start", "holds", "hold", "think", "belief"}
	clientWorkloadFields = append(slices.Clone(clientCommonFields), "ttl", "extend_every", "wait", "lease", "read_ratio")
)

// clientFields are the workload fields a client entry may set under a kind
// whose config has settings st: the holding fields, and those of the
// settings it has.
func clientFields(st settings) []string {
	out := slices.Clone(clientCommonFields)
	if st.ttl != nil {
		out = append(out, "ttl")
	}
	if st.extendEvery != nil {
		out = append(out, "extend_every")
	}
	if st.owner != nil && !st.lockWaits {
		out = append(out, "wait")
	}
	if st.owner != nil {
		out = append(out, "lease")
	}
	if st.readRatio != nil {
		out = append(out, "read_ratio")
	}
	return out
}

// beliefs are the belief field's values (traffic.Beliefs), as the
// algorithm section and a client entry spell them.
var beliefs = func() []string {
	out := make([]string, len(traffic.Beliefs))
	for i, b := range traffic.Beliefs {
		out[i] = string(b)
	}
	return out
}()

// pendingClient is a client entry whose workload fields wait for the
// algorithm's kind: clients[i] entries are read before the algorithm.
type pendingClient struct {
	o        *obj
	path     string
	from, to int // the entry's clients in Scenario.Clients
}

// stashClientSettings keeps entry o's workload fields (if any) for
// clientSettings, which reads them once the algorithm's kind is known.
func (d *decoder) stashClientSettings(o *obj, path string, from, to int) {
	for _, k := range clientWorkloadFields {
		if o.has(k) {
			d.pendingClients = append(d.pendingClients, pendingClient{o: o, path: path, from: from, to: to})
			return
		}
	}
}

// clientSettings reads the stashed client workload fields against the
// algorithm's kind, whose per-client fields (clientFields) the entries were
// read with (peekWorkload): a field the kind does not have was an unknown
// field then.
func (d *decoder) clientSettings(s *Scenario) {
	if d.err != nil {
		return
	}
	for _, p := range d.pendingClients {
		if d.err != nil {
			return
		}
		cs := d.readClientSettings(s, p.o, p.path)
		for i := p.from; i < p.to && d.err == nil; i++ {
			s.Clients[i].Settings = cs
		}
	}
}

// readClientSettings reads the workload fields of client entry o (at
// path), which s's algorithm has. A wait that forever makes wrong is
// refused (badClientWait).
func (d *decoder) readClientSettings(s *Scenario, o *obj, path string) ClientSettings {
	var cs ClientSettings
	if d.badClientWait(s, o, path) {
		return cs
	}
	st := s.Algorithm.Workload.settings()
	durp := func(f string) *time.Duration {
		if !o.has(f) {
			return nil
		}
		v := o.dur(f, 0)
		return &v
	}
	cs.Start, cs.Hold, cs.Think, cs.Wait, cs.ExtendEvery = durp("start"), durp("hold"), durp("think"), durp("wait"), durp("extend_every")
	if o.has("holds") {
		n := int(o.int("holds", 0, 0, 1_000_000))
		cs.Holds = &n
	}
	if o.has("belief") {
		b := traffic.Belief(o.oneOf("belief", "", beliefs...))
		cs.Belief = &b
	}
	if o.has("lease") {
		v := d.lease(o, st.leaseRule == nil || st.leaseRule(0) == "")
		d.checkLease(st, o, join(path, "lease"), v)
		cs.Lease = &v
	}
	if o.has("ttl") {
		v := o.dur("ttl", 0)
		d.checkTTL(st, o, join(path, "ttl"), v)
		cs.TTL = &v
	}
	if o.has("read_ratio") {
		v := o.prob("read_ratio", 0)
		cs.ReadRatio = &v
	}
	return cs
}

// badClientWait refuses the wait of client entry o (at path) under s's
// algorithm where wait: forever makes it wrong, and says whether it did:
// any wait under the algorithm's wait: forever (settings.forever), which
// makes every client's acquire Redisson's lock(), naming that wait's line;
// and a client's forever, which is the fair kind's algorithm section's
// alone (foreverOnly): under a fair algorithm whose wait is a duration it
// belongs in the algorithm section, and under another kind it is no wait
// at all. Any other wait is read as a duration (readClientSettings).
func (d *decoder) badClientWait(s *Scenario, o *obj, path string) bool {
	if !o.has("wait") {
		return false
	}
	st := s.Algorithm.Workload.settings()
	n, f := o.at("wait"), join(path, "wait")
	switch {
	case st.forever != nil && *st.forever:
		d.failf(n, f, "the algorithm's wait is %s (line %d): every client's acquire is Redisson's lock(), which waits as long as it takes "+
			"and has no wait of its own (leave this wait out, or give the algorithm's wait a duration)", waitForever, d.foreverLine)
	case o.str("wait", "") != waitForever:
		return false
	case st.forever != nil:
		d.failf(n, f, "a client cannot wait %s on its own: %s, and makes every client's acquire lock(); "+
			"set wait: %s in the algorithm section, or give this client a Go duration such as 250ms or 5s", waitForever, foreverOnly, waitForever)
	default:
		d.failf(n, f, "%s, not a client's; a client's wait under algorithm %s is a Go duration such as 250ms or 5s (0s: try once)", foreverOnly, s.Algorithm.Kind)
	}
	return true
}

// lease reads an owner-based kind's lease: a positive duration, or
// "watchdog" (0). A value that is neither says both forms where the kind
// has a watchdog (watchdog: the lease a Redisson user knows by name, not
// by duration), and only the duration where it has none.
func (d *decoder) lease(o *obj, watchdog bool) time.Duration {
	n, lf, ok := o.scalar("lease")
	if !ok || n.Value == "watchdog" {
		return 0
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		if !watchdog {
			d.failf(n, lf, "bad lease %q (want a Go duration such as 10s or 1500ms)", n.Value)
			return 0
		}
		d.failf(n, lf, "bad lease %q (want a Go duration such as 10s or 1500ms, or watchdog: the lock keeps the key until its release, its watchdog renewing it)", n.Value)
		return 0
	}
	v = d.parsedDuration(n, lf, v)
	switch {
	case d.err == nil && v == 0 && watchdog:
		d.failf(n, lf, "must be positive (or \"watchdog\")")
	case d.err == nil && v == 0:
		d.failf(n, lf, "must be positive")
	}
	d.wholeMs(n, lf, v)
	return v
}

// ForClient is the algorithm as the client named name runs it: the
// algorithm section with the client entry's settings applied, on a copy of
// its config (With).
func (s *Scenario) ForClient(name string) Algorithm {
	var cs ClientSettings
	for _, c := range s.Clients {
		if c.Config.Name == name {
			cs = c.Settings
			break
		}
	}
	return s.Algorithm.With(cs)
}

// With returns a with a copy of its config in which cs's set fields
// override its own: the holding settings every kind has, then those only
// some kinds have (wait and lease, ttl, extend_every, read_ratio; the
// loader rejects a client field its kind lacks). Slices (owners, groups) stay shared with
// a: only scalar fields change.
func (a Algorithm) With(cs ClientSettings) Algorithm {
	if a.Workload == nil {
		return a
	}
	a.Workload = clone(a.Workload)
	st := a.Workload.settings()
	cs.applyHolding(st.holding)
	if st.owner != nil {
		set(&st.owner.Wait, cs.Wait)
		set(&st.owner.Lease, cs.Lease)
	}
	if st.ttl != nil {
		set(st.ttl, cs.TTL)
	}
	if st.extendEvery != nil {
		set(st.extendEvery, cs.ExtendEvery)
	}
	if st.readRatio != nil {
		set(st.readRatio, cs.ReadRatio)
	}
	return a
}

// applyHolding overrides h's fields with cs's set ones.
func (cs ClientSettings) applyHolding(h *traffic.Holding) {
	set(&h.Start, cs.Start)
	set(&h.Holds, cs.Holds)
	set(&h.Hold, cs.Hold)
	set(&h.Think, cs.Think)
	set(&h.Belief, cs.Belief)
}

// set overwrites *dst with *v when v is set.
func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
