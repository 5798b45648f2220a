package faults

import (
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
}

func (f Failover) Name() string { return fmt.Sprintf("%s at %v", f.what(), f.At) }
func (f Failover) what() string { return "failover " + f.Group }
func (f Failover) timed() bool  { return f.At != 0 }

// Available is nil: every target fails a group over (the real backend
// kills the master and promotes a replica with REPLICAOF NO ONE).
func (f Failover) Available(Target) error { return nil }

func (f Failover) Validate(t Target) error {
	if err := t.CheckGroup(f.Group); err != nil {
		return err
	}
	if f.To != "" {
		if err := t.CheckNode(f.To); err != nil {
			return err
		}
	}
	return checkTime("at", f.At)
}

func (f Failover) Apply(t Target) error { return atItsTime(t, f, f.At) }
func (f Failover) now(t Target) error   { return t.Failover(f.Group, f.To) }
