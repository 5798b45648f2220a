package faults

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Partition cuts every link between the endpoints in A and those in B
// during [From, Until); Until 0 means until the end of the run. For, when
// set instead of Until, is the partition's length from its start (From, or
// the instant an OnOp trigger starts it).
type Partition struct {
	From, Until time.Duration
	For         time.Duration
	A, B        []string
}

func (f Partition) Name() string {
	if f.For > 0 {
		return fmt.Sprintf("partition %v | %v from %v for %v", f.A, f.B, f.From, f.For)
	}
	if f.Until == 0 {
		return fmt.Sprintf("partition %v | %v from %v until the end", f.A, f.B, f.From)
	}
	return fmt.Sprintf("partition %v | %v from %v until %v", f.A, f.B, f.From, f.Until)
}
func (f Partition) what() string {
	if f.For > 0 {
		return fmt.Sprintf("partition %v | %v for %v", f.A, f.B, f.For)
	}
	return fmt.Sprintf("partition %v | %v", f.A, f.B)
}
func (f Partition) timed() bool { return f.From != 0 || f.Until != 0 }

// Available is nil: every target partitions (the real backend cuts the
// proxies between the sides).
func (f Partition) Available(Target) error { return nil }

func (f Partition) Validate(t Target) error {
	for _, e := range append(append([]string{}, f.A...), f.B...) {
		if t.CheckNode(e) != nil && t.CheckClient(e) != nil {
			return fmt.Errorf("unknown node or client %q", e)
		}
	}
	if len(f.A) == 0 || len(f.B) == 0 {
		return errors.New("both sides need a member")
	}
	for _, e := range f.A {
		if slices.Contains(f.B, e) {
			return fmt.Errorf("%q is on both sides", e)
		}
	}
	if err := checkTime("for", f.For); err != nil {
		return err
	}
	if f.For != 0 && f.Until != 0 {
		return fmt.Errorf("give until or for, not both (until %v, for %v)", f.Until, f.For)
	}
	return window(f.From, f.Until)
}

// Apply starts the partition at From.
func (f Partition) Apply(t Target) error { return f.startAt(t, f.From) }

// now starts the partition now. Its record (sim.PartitionDetail) names the
// sides and the window it actually has, not Name's, whose From is 0 for a
// partition a trigger starts.
func (f Partition) now(t Target) error { return f.startAt(t, t.Now()) }

// startAt starts the partition at from, for For when set (a triggered
// partition's length), else until Until (0: the end of the run).
func (f Partition) startAt(t Target, from time.Duration) error {
	until := f.Until
	if f.For > 0 {
		until = from + f.For
	}
	return t.Partition(f.A, f.B, from, until)
}
