package faults

import (
	"errors"
	"fmt"
	"time"
)

// Crash crashes Node at At and restarts it Down later, with what its
// persistence mode kept; Stay keeps it down for the rest of the run.
type Crash struct {
	At   time.Duration
	Node string
	Down time.Duration
	Stay bool
}

func (f Crash) Name() string {
	if f.Stay {
		return fmt.Sprintf("crash %s at %v", f.Node, f.At)
	}
	return fmt.Sprintf("crash %s at %v, restart after %v", f.Node, f.At, f.Down)
}
func (f Crash) what() string {
	if f.Stay {
		return "crash " + f.Node
	}
	return fmt.Sprintf("crash %s (restart after %v)", f.Node, f.Down)
}
func (f Crash) timed() bool { return f.At != 0 }

// Available is nil: every target crashes and restarts nodes (the real
// backend with SIGKILL and a new process on the same directory).
func (f Crash) Available(Target) error { return nil }

func (f Crash) Validate(t Target) error {
	if err := t.CheckNode(f.Node); err != nil {
		return err
	}
	return errors.Join(checkTime("at", f.At), checkTime("down", f.Down))
}

// steps are the crash and the restart after it. The restart does nothing
// when the crash did not happen: that crash was skipped and recorded, and
// the node it found down is not its to restart.
func (f Crash) steps(t Target) (crash, restart func() error) {
	crashed := false
	crash = func() error {
		err := t.CrashNode(f.Node)
		crashed = err == nil
		return err
	}
	restart = func() error {
		if !crashed {
			return nil
		}
		return t.RestartNode(f.Node)
	}
	return crash, restart
}

// Apply schedules the crash at At and, unless Stay, the restart at
// At+Down, both now. Unlike the triggered form (now), which can only
// schedule the restart once it has crashed the node, the restart's place
// among the events of its instant is then fixed when the schedule is
// applied, as the goldens record it.
func (f Crash) Apply(t Target) error {
	crash, restart := f.steps(t)
	if err := t.ActAt(f.At, f.Name(), crash); err != nil || f.Stay {
		return err
	}
	return t.ActAt(f.At+f.Down, f.Name(), restart)
}

// now crashes the node now and, unless Stay, schedules its restart Down
// later.
func (f Crash) now(t Target) error {
	crash, restart := f.steps(t)
	if err := crash(); err != nil || f.Stay {
		return err
	}
	return t.ActAt(t.Now()+f.Down, f.what(), restart)
}
