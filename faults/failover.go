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
// the old master back (Down) needs a MasterRejoiner: the simulation, and
// the real backend (not under Sentinel: its Check refuses that).
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

// Apply schedules the failover at At and, with Down, its rejoin at
// At+Down, both now, as Crash.Apply schedules a crash's restart: the real
// backend takes only steps known before the run starts.
func (f Failover) Apply(t Target) error {
	failover, rejoin := f.steps(t)
	if err := t.ActAt(f.At, f.Name(), failover); err != nil || rejoin == nil {
		return err
	}
	return t.ActAt(f.At+f.Down, f.rejoinName(f.At), rejoin)
}

// now fails the group over now and, with Down, schedules the rejoin.
func (f Failover) now(t Target) error {
	failover, rejoin := f.steps(t)
	if err := failover(); err != nil || rejoin == nil {
		return err
	}
	at := t.Now()
	return t.ActAt(at+f.Down, f.rejoinName(at), rejoin)
}

// steps are the failover on t and, with Down (on a MasterRejoiner, which
// Available requires), its rejoin; nil without.
func (f Failover) steps(t Target) (failover, rejoin func() error) {
	if r, ok := t.(MasterRejoiner); ok && f.Down > 0 {
		return r.FailoverSteps(f.Group, f.To)
	}
	return func() error { return t.Failover(f.Group, f.To) }, nil
}

// rejoinName names the rejoin of the failover at at in a skip's record.
func (f Failover) rejoinName(at time.Duration) string {
	return fmt.Sprintf("the restart at %v of the master failover %s at %v crashed", at+f.Down, f.Group, at)
}
