package faults

import (
	"errors"
	"fmt"
	"time"
)

// Failover fails group over at At: the master crashes (if still up) and a
// replica is promoted, losing what it had not yet received.
type Failover struct {
	At    time.Duration
	Group string
	// To names the replica to promote; empty picks the most up-to-date one,
	// as Sentinel does.
	To string
	// Down, when set, restarts the master the failover crashed Down later,
	// a replica of its group's master then (a supervisor restarting the
	// process, Sentinel repointing it), so that the group can fail over
	// again; 0 leaves it down. It needs a MasterRejoiner.
	Down time.Duration
}

func (f Failover) Name() string { return fmt.Sprintf("%s at %v", f.what(), f.At) }
func (f Failover) what() string {
	if f.Down > 0 {
		return fmt.Sprintf("failover %s (its master back as a replica after %v)", f.Group, f.Down)
	}
	return "failover " + f.Group
}
func (f Failover) timed() bool { return f.At != 0 }

// Available is nil: every target fails a group over (the real backend
// kills the master and promotes a replica with REPLICAOF NO ONE). Bringing
// the old master back (Down) needs a MasterRejoiner: the simulation.
func (f Failover) Available(t Target) error {
	if _, ok := t.(MasterRejoiner); f.Down > 0 && !ok {
		return unavailable("down", "failover: the target cannot bring the old master back as a replica")
	}
	return nil
}

func (f Failover) Validate(t Target) error {
	if err := t.CheckGroup(f.Group); err != nil {
		return err
	}
	if f.To != "" {
		if err := t.CheckNode(f.To); err != nil {
			return err
		}
	}
	return errors.Join(checkTime("at", f.At), checkTime("down", f.Down))
}

func (f Failover) Apply(t Target) error { return atItsTime(t, f, f.At) }

func (f Failover) now(t Target) error {
	if r, ok := t.(MasterRejoiner); ok && f.Down > 0 {
		return r.FailoverRejoin(f.Group, f.To, f.Down)
	}
	return t.Failover(f.Group, f.To)
}
