package realrun

// Clock faults on real servers (faults.ClockSetter): every node whose clock
// the scenario moves (a clock-jump or clock-drift naming it, or drift_ppm
// in the topology) runs under libfaketime with a clock file of its own
// (redistest.FakeClock), which the fault rewrites. redis-server's key
// expiry reads that clock (the realtime one, redistest/faketime.go), so a
// jump forward expires its keys early, as the simulation's node clock does.
// The clients' clocks stay the machine's: Go reads the clock through the
// vDSO, out of libfaketime's reach. A client's clock jump is recorded and
// changes nothing (as in the simulation: lock code measures on the
// monotonic clock); checkClockFaults refuses a client's drift.

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/traffic"
)

// ErrNoFaketime is returned (wrapped) by Run when a scenario moves a node's
// clock and libfaketime is not installed.
var ErrNoFaketime = redistest.ErrNoFaketime

var _ faults.ClockSetter = (*target)(nil)

// clockNodes are the nodes of s whose clock s moves, in topology order:
// those with a drift_ppm and those a clock fault names.
func clockNodes(s *scenario.Scenario) []string {
	named := map[string]bool{}
	for _, f := range s.Faults {
		switch f := bare(f.Fault).(type) {
		case faults.ClockJump:
			named[f.Node] = true
		case faults.ClockDrift:
			named[f.Node] = true
		}
	}
	var out []string
	for _, n := range s.Nodes {
		if n.Config.DriftPPM != 0 || named[n.Config.Name] {
			out = append(out, n.Config.Name)
		}
		for _, rp := range n.Replicas {
			if rp.Config.DriftPPM != 0 || named[rp.Config.Name] {
				out = append(out, rp.Config.Name)
			}
		}
	}
	return out
}

// makeClocks makes the fake clock of every node of clockNodes, with its
// topology drift, before any server starts.
func (sv *servers) makeClocks() error {
	nodes := clockNodes(sv.s)
	if len(nodes) == 0 {
		return nil
	}
	lib, err := redistest.FaketimeLib()
	if err != nil {
		return fmt.Errorf("%s: a node's clock moves: %w", sv.s.File, err)
	}
	drift := map[string]int64{}
	for _, n := range sv.s.Nodes {
		drift[n.Config.Name] = n.Config.DriftPPM
		for _, rp := range n.Replicas {
			drift[rp.Config.Name] = rp.Config.DriftPPM
		}
	}
	for _, name := range nodes {
		c, err := redistest.NewFakeClock(lib, filepath.Join(sv.opts.Dir, name+".clock"))
		if err != nil {
			return err
		}
		if ppm := drift[name]; ppm != 0 {
			if err := c.SetDrift(ppm); err != nil {
				return err
			}
		}
		sv.clocks[name] = c
	}
	return nil
}

// clock is name's fake clock, or an error naming why there is none.
func (sv *servers) clock(name string) (*redistest.FakeClock, error) {
	if c, ok := sv.clocks[name]; ok {
		return c, nil
	}
	if _, ok := sv.byName[name]; ok {
		return nil, fmt.Errorf("realrun: node %s was not started under libfaketime", name)
	}
	return nil, fmt.Errorf("realrun: %q: only a node's clock can move (a client's is the machine's)", name)
}

// JumpClock moves node name's clock by by, and records it as the
// simulation does. A client's jump is recorded and changes nothing, as in
// the simulation: the lock code measures time with Go's monotonic clock
// (time.Now().Sub, timers), which a step of the wall clock does not move
// on a real machine either.
func (t *target) JumpClock(name string, by time.Duration) error {
	if t.srv.isClient(name) {
		t.h.rec.Fault(history.FaultClockJump, "", name, by.String())
		return nil
	}
	c, err := t.srv.clock(name)
	if err != nil {
		return err
	}
	if err := c.Jump(by); err != nil {
		return err
	}
	t.h.rec.Fault(history.FaultClockJump, name, "", by.String())
	return nil
}

// SetDrift sets node name's clock rate error from now on, and records it as
// the simulation does.
func (t *target) SetDrift(name string, ppm int64) error {
	c, err := t.srv.clock(name)
	if err != nil {
		return err
	}
	if err := c.SetDrift(ppm); err != nil {
		return err
	}
	t.h.rec.Fault(history.FaultClockDrift, name, "", fmt.Sprintf("%d ppm", ppm))
	return nil
}

// checkClockFaults refuses a clock drift naming a client: the run's
// clients run on the machine's oscillator, and Go reads its clocks through
// the vDSO, out of libfaketime's reach. (The kind is available on the real
// target, which drifts nodes' clocks; which clock is the fault's field.) A
// client's clock jump runs: it moves nothing the lock code reads
// (JumpClock).
func checkClockFaults(s *scenario.Scenario) error {
	for i, f := range s.Faults {
		if d, ok := bare(f.Fault).(faults.ClockDrift); ok && d.Client != "" {
			return unsupported(s, f.Line, fmt.Sprintf("faults[%d].client", i),
				"%s on client %s: a client's clock runs at the machine's rate (libfaketime drifts only a node's)", f.Fault.Name(), d.Client)
		}
		// A client's clock jump changes nothing a lock measures with
		// Go's monotonic clock, on both backends; but the fair lock
		// stamps its queue with the client's wall clock (lock.WallClock),
		// which the simulation jumps and a real client, on the machine's
		// clock, cannot.
		if j, ok := bare(f.Fault).(faults.ClockJump); ok && j.Client != "" && s.Algorithm.Kind == traffic.KindFair {
			return unsupported(s, f.Line, fmt.Sprintf("faults[%d].client", i),
				"%s on client %s of a fair lock: its queue's timestamps come from the client's wall clock, which on real servers is the machine's and does not jump", f.Fault.Name(), j.Client)
		}
	}
	return nil
}
