package faults

import (
	"errors"
	"fmt"
	"time"
)

// Pause stops Client for For from At (stop-the-world GC, VM migration): its
// processes stand still at whatever they were awaiting, and its timers and
// replies wait.
type Pause struct {
	At     time.Duration
	Client string
	For    time.Duration
}

func (f Pause) Name() string { return fmt.Sprintf("pause %s at %v for %v", f.Client, f.At, f.For) }
func (f Pause) what() string { return fmt.Sprintf("pause %s for %v", f.Client, f.For) }
func (f Pause) timed() bool  { return f.At != 0 }

// Available needs a target that freezes clients (ClientPauser): the
// simulation, and the real backend, whose clients are then worker
// processes it stops with SIGSTOP (internal/realrun/worker.go).
func (f Pause) Available(t Target) error {
	if _, ok := t.(ClientPauser); ok {
		return nil
	}
	return unavailable("kind", "pause: the target cannot freeze a client")
}

func (f Pause) Validate(t Target) error {
	if err := t.CheckClient(f.Client); err != nil {
		return err
	}
	return errors.Join(checkTime("at", f.At), checkTime("for", f.For))
}

func (f Pause) Apply(t Target) error { return atItsTime(t, f, f.At) }

func (f Pause) now(t Target) error {
	p, ok := t.(ClientPauser)
	if !ok {
		return f.Available(t)
	}
	return p.PauseClient(f.Client, f.For)
}
