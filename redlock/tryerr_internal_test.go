package redlock

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/locksim/locksim/lock"
)

// TestTryLockErrorsReadAsBefore: a failed TryLock's errors, formatted when
// read, have the text of the fmt.Errorf calls they replace (an op record
// keeps an error's text, so a change would change histories) and match
// the same errors with errors.Is.
func TestTryLockErrorsReadAsBefore(t *testing.T) {
	nodeErr := errors.New("node 2: i/o timeout")
	cases := []struct {
		why, old error
		is       error
	}{
		{newTryError("lk{1}", &noQuorumError{granted: 2, nodes: 5, need: 3}, nil),
			fmt.Errorf("%w: %d of %d nodes granted, need %d", ErrNoQuorum, 2, 5, 3), ErrNoQuorum},
		{newTryError("lk{1}", nil, &expiredError{validity: -3 * time.Millisecond, elapsed: 1503 * time.Millisecond, ttl: 1500 * time.Millisecond, drift: 0}),
			fmt.Errorf("%w: validity %v after %v elapsed (ttl %v, drift %v)", ErrExpired, -3*time.Millisecond, 1503*time.Millisecond, 1500*time.Millisecond, time.Duration(0)), ErrExpired},
	}
	for _, c := range cases {
		for _, nerr := range []error{nil, nodeErr} {
			got := c.why // TryLock's error when every node answered
			if nerr != nil {
				got = errors.Join(c.why, nerr)
			}
			want := errors.Join(notAcquiredError{fmt.Errorf("redlock: %s: %w", "lk{1}", c.old)}, nerr)
			if got.Error() != want.Error() {
				t.Errorf("text %q, want %q", got.Error(), want.Error())
			}
			for _, target := range []error{c.is, lock.ErrNotAcquired} {
				if !errors.Is(got, target) {
					t.Errorf("%q does not match %v", got.Error(), target)
				}
			}
			if other := map[error]error{ErrNoQuorum: ErrExpired, ErrExpired: ErrNoQuorum}[c.is]; errors.Is(got, other) {
				t.Errorf("%q matches %v too", got.Error(), other)
			}
			if nerr != nil && !errors.Is(got, nerr) {
				t.Errorf("%q lost the node's error", got.Error())
			}
		}
	}
}

// TestTriesErrorReadsAsBefore: Lock's error after its last try, formatted
// when read, has the text of the fmt.Errorf it replaces and wraps the last
// try's error.
func TestTriesErrorReadsAsBefore(t *testing.T) {
	last := errors.Join(newTryError("lk", &noQuorumError{granted: 1, nodes: 3, need: 2}, nil), errors.New("node 0: i/o timeout"))
	got := error(triesError{key: "lk", tries: 3, last: last})
	want := fmt.Errorf("redlock: %s: %d tries failed; last: %w", "lk", 3, last)
	if got.Error() != want.Error() {
		t.Errorf("text %q, want %q", got.Error(), want.Error())
	}
	for _, target := range []error{last, ErrNoQuorum, lock.ErrNotAcquired} {
		if !errors.Is(got, target) {
			t.Errorf("%q does not match %v", got.Error(), target)
		}
	}
	if errors.Is(got, ErrExpired) {
		t.Errorf("%q matches %v", got.Error(), ErrExpired)
	}
}

// TestTryErrorMatchesWithoutAllocating: errors.Is walks a failed
// attempt's error without allocating (traffic's outcome rules walk it
// several times per failed attempt; a value's Unwrap() []error made a new
// slice on every call).
func TestTryErrorMatchesWithoutAllocating(t *testing.T) {
	err := error(newTryError("lk", &noQuorumError{granted: 1, nodes: 3, need: 2}, nil))
	allocs := testing.AllocsPerRun(100, func() {
		if errors.Is(err, lock.ErrNotSynced) || !errors.Is(err, lock.ErrNotAcquired) || !errors.Is(err, ErrNoQuorum) {
			t.Fatal("wrong match")
		}
	})
	if allocs != 0 {
		t.Errorf("errors.Is allocates %v times per walk", allocs)
	}
}
