package redlock

import (
	"errors"
	"fmt"
	"testing"

	"github.com/locksim/locksim/lock"
)

// TestJoinedUnknownStaysUnknown: members' or nodes' errors joined read as
// an unknown outcome when any of them is one: a member that said "not
// held" (or was not sent to) hid one whose unlock timed out, and IsUnknown
// answered false for the whole. Joins of known outcomes stay known.
func TestJoinedUnknownStaysUnknown(t *testing.T) {
	timeout := errors.New("i/o timeout")
	notHeld := fmt.Errorf("member 0: %w", lock.ErrNotHeld)
	notSent := fmt.Errorf("member 1: %w", lock.ErrNotSent)
	if lock.IsUnknown(errors.Join(notHeld, timeout)) {
		t.Log("(unmarked, the join reads as known: the case this mark is for)")
	}
	for _, tc := range []struct {
		name    string
		err     error
		unknown bool
	}{
		{"not held and a timeout", errors.Join(notHeld, fmt.Errorf("member 1: %w", timeout)), true},
		{"not sent and a timeout", errors.Join(notSent, timeout), true},
		{"not held and not sent", errors.Join(notHeld, notSent), false},
		{"one error, not joined", notHeld, false},
	} {
		err := unknownIfAny(tc.err)
		if got := lock.IsUnknown(err); got != tc.unknown {
			t.Errorf("%s: IsUnknown = %v, want %v", tc.name, got, tc.unknown)
		}
		if !errors.Is(err, lock.ErrNotHeld) && errors.Is(tc.err, lock.ErrNotHeld) {
			t.Errorf("%s: the mark hides ErrNotHeld from errors.Is", tc.name)
		}
	}
	// As Redisson.Unlock returns it when no member was held by the owner
	// and another member's unlock timed out.
	err := errors.Join(fmt.Errorf("redlock: unlock: no member held: %w", lock.ErrNotHeld), unknownIfAny(errors.Join(fmt.Errorf("member 2: %w", timeout))))
	if !lock.IsUnknown(err) {
		t.Errorf("no member held, one timed out: IsUnknown false")
	}
}
