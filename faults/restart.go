package faults

import (
	"fmt"
	"time"
)

// Restart restarts a node left down by an earlier Crash with Stay.
type Restart struct {
	At   time.Duration
	Node string
}

func (f Restart) Name() string { return fmt.Sprintf("%s at %v", f.what(), f.At) }
func (f Restart) what() string { return "restart " + f.Node }
func (f Restart) timed() bool  { return f.At != 0 }

// Available is nil: every target restarts a crashed node.
func (f Restart) Available(Target) error { return nil }

func (f Restart) Validate(t Target) error {
	if err := t.CheckNode(f.Node); err != nil {
		return err
	}
	return checkTime("at", f.At)
}

func (f Restart) Apply(t Target) error { return atItsTime(t, f, f.At) }
func (f Restart) now(t Target) error   { return t.RestartNode(f.Node) }
