package checker_test

import (
	"slices"
	"testing"

	"github.com/locksim/locksim/checker"
)

// TestKindsAndSafety: Kinds lists each kind once; Safety puts liveness,
// resurrected locks, leaked holds and false refusals (waits) and a quorum held by down
// nodes (nobody else can take the lock) apart from the rest (work gone
// wrong), and Fairness
// the fair queue's kinds apart from both.
func TestKindsAndSafety(t *testing.T) {
	ks := checker.Kinds()
	availability := []checker.Kind{checker.Liveness, checker.Resurrected, checker.LeakedHold, checker.FalseRefusal, checker.QuorumHeldByDown}
	safety := []checker.Kind{checker.MutualExclusion, checker.SilentLoss, checker.StaleWrite, checker.TokenRegression,
		checker.Reentrancy, checker.UnlockIdempotency, checker.ExtendAnswer, checker.Linearizability}
	fairness := []checker.Kind{checker.EvictedWaiter, checker.OutOfOrder, checker.StuckQueue}
	if len(ks) != len(availability)+len(safety)+len(fairness) {
		t.Fatalf("Kinds() = %v", ks)
	}
	for _, k := range safety {
		if !slices.Contains(ks, k) || !k.Safety() {
			t.Errorf("%s: listed %v, safety %v; want listed safety", k, slices.Contains(ks, k), k.Safety())
		}
	}
	for _, k := range availability {
		if !slices.Contains(ks, k) || k.Safety() {
			t.Errorf("%s: listed %v, safety %v; want listed availability", k, slices.Contains(ks, k), k.Safety())
		}
	}
	for _, k := range fairness {
		if !slices.Contains(ks, k) || k.Safety() || !k.Fairness() {
			t.Errorf("%s: listed %v, safety %v, fairness %v; want listed fairness", k, slices.Contains(ks, k), k.Safety(), k.Fairness())
		}
	}
	for _, k := range append(safety, availability...) {
		if k.Fairness() {
			t.Errorf("%s counts as fairness", k)
		}
	}
	if checker.Kind("deadlock").Safety() {
		t.Errorf("an unknown kind counts as safety")
	}
	ks[0] = "changed"
	if checker.Kinds()[0] != checker.MutualExclusion {
		t.Errorf("Kinds shares its slice with callers")
	}
}

// TestKindNames: KindNames is Kinds as strings, in the same order, and a
// fresh slice each call (a caller that changes it changes no other's).
func TestKindNames(t *testing.T) {
	ks, names := checker.Kinds(), checker.KindNames()
	if len(names) != len(ks) {
		t.Fatalf("KindNames() = %v, Kinds() = %v", names, ks)
	}
	for i, k := range ks {
		if names[i] != string(k) {
			t.Errorf("KindNames()[%d] = %q, want %q", i, names[i], k)
		}
	}
	names[0] = "changed"
	if checker.KindNames()[0] != string(ks[0]) {
		t.Error("KindNames returned a shared slice")
	}
}
