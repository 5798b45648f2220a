package faults

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/setup"
)

// The clock faults need a target whose clocks are its own (ClockSetter):
// the simulation, and the real backend for its nodes (redis-server under
// libfaketime; its clients run on the machine's clock: a client's jump is
// recorded and changes nothing the lock code reads, where in the
// simulation it moves the client's wall clock, which only the fair lock
// reads (lock.WallClock); a client's drift is refused).

// ClockJump moves the wall clock of one node or one client by By (negative
// is backward) at At. A node's keys then expire early or late; a client's
// Now jumps while its timers do not.
type ClockJump struct {
	At     time.Duration
	Node   string // exactly one of Node and Client
	Client string
	By     time.Duration
}

func (f ClockJump) target() string { return f.Node + f.Client }
func (f ClockJump) Name() string {
	return fmt.Sprintf("clock-jump %s by %v at %v", f.target(), f.By, f.At)
}
func (f ClockJump) what() string { return fmt.Sprintf("clock-jump %s by %v", f.target(), f.By) }
func (f ClockJump) timed() bool  { return f.At != 0 }

// Available needs a ClockSetter.
func (f ClockJump) Available(t Target) error {
	if _, ok := t.(ClockSetter); ok {
		return nil
	}
	return unavailable("kind", "clock-jump: the target's clocks are the machine's")
}

func (f ClockJump) Validate(t Target) error {
	if err := oneTarget(t, f.Node, f.Client); err != nil {
		return err
	}
	return checkTime("at", f.At)
}

func (f ClockJump) Apply(t Target) error { return atItsTime(t, f, f.At) }

func (f ClockJump) now(t Target) error {
	c, ok := t.(ClockSetter)
	if !ok {
		return f.Available(t)
	}
	return c.JumpClock(f.target(), f.By)
}

// ClockDrift sets the clock rate of one node or one client from At on.
type ClockDrift struct {
	At     time.Duration
	Node   string // exactly one of Node and Client
	Client string
	// PPM is the rate error in parts per million (+1000 runs 0.1% fast).
	PPM int64
}

func (f ClockDrift) Name() string {
	return fmt.Sprintf("clock-drift %s%s %+d ppm at %v", f.Node, f.Client, f.PPM, f.At)
}
func (f ClockDrift) what() string {
	return fmt.Sprintf("clock-drift %s%s %+d ppm", f.Node, f.Client, f.PPM)
}
func (f ClockDrift) timed() bool { return f.At != 0 }

// Available needs a ClockSetter.
func (f ClockDrift) Available(t Target) error {
	if _, ok := t.(ClockSetter); ok {
		return nil
	}
	return unavailable("kind", "clock-drift: the target's clocks are the machine's")
}

func (f ClockDrift) Validate(t Target) error {
	if err := oneTarget(t, f.Node, f.Client); err != nil {
		return err
	}
	if f.PPM < -setup.MaxDriftPPM || f.PPM > setup.MaxDriftPPM {
		return fmt.Errorf("ppm %d out of range [%d, %d]", f.PPM, -setup.MaxDriftPPM, setup.MaxDriftPPM)
	}
	return checkTime("at", f.At)
}

func (f ClockDrift) Apply(t Target) error { return atItsTime(t, f, f.At) }

func (f ClockDrift) now(t Target) error {
	c, ok := t.(ClockSetter)
	if !ok {
		return f.Available(t)
	}
	return c.SetDrift(f.Node+f.Client, f.PPM)
}
