package scenario

import (
	"fmt"

	"github.com/locksim/locksim/peers"
	"github.com/locksim/locksim/traffic"
)

// NewResource returns the fenced resource the clients of one run share (a
// fenced algorithm's), or nil.
func (s *Scenario) NewResource() *traffic.Resource {
	if k := s.Algorithm.desc(); k != nil && k.newResource != nil {
		return k.newResource(s.Algorithm)
	}
	return nil
}

// StartWorkload starts the algorithm's workload on c, with the settings of
// c's client entry (ForClient), writing to res (from NewResource, shared by
// the run's clients). Each backend calls it for each of its clients, with
// its own traffic.Client (internal/simrun a simulated one, internal/realrun
// one on real servers).
func (s *Scenario) StartWorkload(c traffic.Client, res *traffic.Resource) error {
	a := s.ForClient(c.Name())
	k := a.desc()
	if k == nil {
		return s.ErrAt(a.Line, "algorithm", fmt.Errorf("unknown algorithm kind %q", a.Kind))
	}
	if _, real := c.(peers.Backend); k.realOnly && !real {
		return s.ErrAt(a.Line, "algorithm.kind", fmt.Errorf("%s: %w", a.Kind, peers.ErrNeedsReal))
	}
	if err := k.start(c, a, res); err != nil {
		return s.ErrAt(a.Line, "algorithm", err)
	}
	return nil
}

// LockKey is the Redis key of the algorithm's lock (the key its truth
// records are about).
func (s *Scenario) LockKey() string {
	if k := s.Algorithm.desc(); k != nil {
		return k.key(s.Algorithm)
	}
	return ""
}
