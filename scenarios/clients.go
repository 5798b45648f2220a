package scenarios

// Per-client workload settings and the algorithm fields every kind shares
// (start, holds, belief), kept apart from decode.go and scenario.go.

import (
	"slices"
	"strings"
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
	// ExtendEvery is redlock-spec's extension interval (0: none).
	ExtendEvery *time.Duration
	// Belief is the holder's belief model.
	Belief *traffic.Belief
}

// Fields a client entry may set, by algorithm kind, beyond its own (name,
// count, latency, timeout, retry, drift_ppm).
var (
	clientCommonFields   = []string{"start", "holds", "hold", "think", "belief"}
	clientSimpleFields   = append(slices.Clone(clientCommonFields), "ttl")
	clientSpecFields     = append(slices.Clone(clientCommonFields), "ttl", "extend_every")
	clientOwnerFields    = append(slices.Clone(clientCommonFields), "wait", "lease")
	clientWorkloadFields = append(slices.Clone(clientCommonFields), "ttl", "extend_every", "wait", "lease")
)

// clientFieldsOf are the workload fields a client entry may set under an
// algorithm kind.
func clientFieldsOf(kind string) []string {
	switch kind {
	case AlgSimple:
		return clientSimpleFields
	case AlgRedLockSpec:
		return clientSpecFields
	}
	return clientOwnerFields
}

var beliefs = []string{string(traffic.BeliefCareful), string(traffic.BeliefTrusting)}

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
// algorithm's kind: a field the kind does not have is an error naming the
// kind's per-client fields.
func (d *decoder) clientSettings(s *Scenario) {
	kind := s.Algorithm.Kind
	allowed := clientFieldsOf(kind)
	for _, p := range d.pendingClients {
		if d.err != nil {
			return
		}
		o := p.o
		for _, k := range clientWorkloadFields {
			if o.has(k) && !slices.Contains(allowed, k) {
				d.failf(o.keys[k], join(p.path, k), "not a field of a client under algorithm %s (its per-client fields: %s)",
					kind, strings.Join(allowed, ", "))
				return
			}
		}
		var cs ClientSettings
		durp := func(k string) *time.Duration {
			if !o.has(k) {
				return nil
			}
			v := o.dur(k, 0)
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
			v := d.lease(o)
			cs.Lease = &v
		}
		if o.has("ttl") {
			v := o.dur("ttl", 0)
			d.checkTTL(kind, o, join(p.path, "ttl"), v)
			cs.TTL = &v
		}
		for i := p.from; i < p.to && d.err == nil; i++ {
			s.Clients[i].Settings = cs
		}
	}
}

// lease reads an owner-based kind's lease: a positive duration, or
// "watchdog" (0).
func (d *decoder) lease(o *obj) time.Duration {
	n, lf, ok := o.scalar("lease")
	if !ok || n.Value == "watchdog" {
		return 0
	}
	v := d.duration(n, lf)
	if d.err == nil && v == 0 {
		d.failf(n, lf, "must be positive (or \"watchdog\")")
	}
	return v
}

// checkTTL applies the algorithm's rule to a TTL read at field f of o.
func (d *decoder) checkTTL(kind string, o *obj, f string, ttl time.Duration) {
	if d.err != nil {
		return
	}
	switch {
	case kind == AlgSimple && ttl < time.Millisecond:
		d.failf(o.at("ttl"), f, "must be at least 1ms")
	case kind == AlgRedLockSpec && (ttl < time.Millisecond || ttl%time.Millisecond != 0):
		d.failf(o.at("ttl"), f, "must be a positive whole number of milliseconds")
	}
}

// algorithmShared reads the fields every algorithm kind has (start, holds,
// belief) and redlock-spec's extend_every into the kind's config.
func (d *decoder) algorithmShared(a *Algorithm, o *obj) {
	start := o.dur("start", 0)
	holds := int(o.int("holds", 0, 0, 1_000_000))
	belief := traffic.Belief(o.oneOf("belief", "", beliefs...))
	if d.err != nil {
		return
	}
	switch a.Kind {
	case AlgSimple:
		a.Simple.Start, a.Simple.Holds, a.Simple.Belief = start, holds, belief
	case AlgReentrant, AlgFenced:
		a.Reentrant.Start, a.Reentrant.Holds, a.Reentrant.Belief = start, holds, belief
	case AlgRWLock:
		a.ReadWrite.Start, a.ReadWrite.Holds, a.ReadWrite.Belief = start, holds, belief
	case AlgRedLockSpec:
		a.Spec.Start, a.Spec.Holds, a.Spec.Belief = start, holds, belief
		a.Spec.ExtendEvery = o.dur("extend_every", 0)
	case AlgRedLockRedisson:
		a.Redisson.Start, a.Redisson.Holds, a.Redisson.Belief = start, holds, belief
	}
}

// Belief is the belief model the algorithm's holders use when no client
// overrides it: the file's, or the kind's default (traffic.DefaultBelief).
func (a Algorithm) Belief() traffic.Belief {
	var b traffic.Belief
	switch a.Kind {
	case AlgSimple:
		b = a.Simple.Belief
	case AlgReentrant, AlgFenced:
		b = a.Reentrant.Belief
	case AlgRWLock:
		b = a.ReadWrite.Belief
	case AlgRedLockSpec:
		b = a.Spec.Belief
	case AlgRedLockRedisson:
		b = a.Redisson.Belief
	}
	if b == traffic.BeliefDefault {
		b = traffic.DefaultBelief(a.Kind)
	}
	return b
}

// ForClient is the algorithm as the client named name runs it: the
// algorithm section with the client entry's settings applied.
func (s *Scenario) ForClient(name string) Algorithm {
	a := s.Algorithm
	for _, c := range s.Clients {
		if c.Config.Name == name {
			return a.With(c.Settings)
		}
	}
	return a
}

// With returns a with cs's set fields overriding its own. Slices (owners,
// groups) stay shared with a: only scalar fields change.
func (a Algorithm) With(cs ClientSettings) Algorithm {
	set := func(dst *time.Duration, v *time.Duration) {
		if v != nil {
			*dst = *v
		}
	}
	setInt := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	// Every kind has the holding settings; the rest are the kind's own.
	holding := func(start *time.Duration, holds *int, hold, think *time.Duration, belief *traffic.Belief) {
		set(start, cs.Start)
		setInt(holds, cs.Holds)
		set(hold, cs.Hold)
		set(think, cs.Think)
		if cs.Belief != nil {
			*belief = *cs.Belief
		}
	}
	waitLease := func(wait, lease *time.Duration) {
		set(wait, cs.Wait)
		set(lease, cs.Lease)
	}
	switch a.Kind {
	case AlgSimple:
		c := &a.Simple
		holding(&c.Start, &c.Holds, &c.Hold, &c.Think, &c.Belief)
		set(&c.TTL, cs.TTL)
	case AlgReentrant, AlgFenced:
		c := &a.Reentrant
		holding(&c.Start, &c.Holds, &c.Hold, &c.Think, &c.Belief)
		waitLease(&c.Wait, &c.Lease)
	case AlgRWLock:
		c := &a.ReadWrite
		holding(&c.Start, &c.Holds, &c.Hold, &c.Think, &c.Belief)
		waitLease(&c.Wait, &c.Lease)
	case AlgRedLockSpec:
		c := &a.Spec
		holding(&c.Start, &c.Holds, &c.Hold, &c.Think, &c.Belief)
		set(&c.Options.TTL, cs.TTL)
		set(&c.ExtendEvery, cs.ExtendEvery)
	case AlgRedLockRedisson:
		c := &a.Redisson
		holding(&c.Start, &c.Holds, &c.Hold, &c.Think, &c.Belief)
		waitLease(&c.Wait, &c.Lease)
	}
	return a
}
