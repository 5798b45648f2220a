package faults

import (
	"fmt"
	"time"
)

// ClientCrash kills Client at At (sim.Client.Crash): its processes never
// run again (no requests, no watchdog renewals, no op records), its open
// operations stay unknown, and its belief ends at the crash. Unlike a Pause
// that never ends, the history knows it happened.
type ClientCrash struct {
	At     time.Duration
	Client string
}

func (f ClientCrash) Name() string { return fmt.Sprintf("%s at %v", f.what(), f.At) }
func (f ClientCrash) what() string { return "client-crash " + f.Client }
func (f ClientCrash) timed() bool  { return f.At != 0 }

// Available needs a target that kills clients (ClientCrasher): the
// simulation, and the real backend, whose clients are then worker
// processes it kills with SIGKILL (internal/realrun/worker.go).
func (f ClientCrash) Available(t Target) error {
	if _, ok := t.(ClientCrasher); ok {
		return nil
	}
	return unavailable("kind", "client-crash: the target cannot kill a client")
}

func (f ClientCrash) Validate(t Target) error {
	if err := t.CheckClient(f.Client); err != nil {
		return err
	}
	return checkTime("at", f.At)
}

func (f ClientCrash) Apply(t Target) error { return atItsTime(t, f, f.At) }

func (f ClientCrash) now(t Target) error {
	c, ok := t.(ClientCrasher)
	if !ok {
		return f.Available(t)
	}
	return c.CrashClient(f.Client)
}
