package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/lock"
)

// spinFile is a spin kind's file with the algorithm section's extra lines
// algo.
func spinFile(algo string) string {
	return "name: t\nseed: 1\nduration: 2s\ntopology:\n  nodes:\n    - name: m1\nclients:\n  - {count: 2}\nalgorithm:\n  kind: spin\n" + algo + "expect: ok\n"
}

// TestSpinBackoffField: the spin kind's backoff fields reach the lock's
// BackOff (zero where left out: the lock's defaults); a fractional
// millisecond, a multiplier out of range and an unknown field are refused
// naming the file, the line and the field; non-reentrant has no backoff.
func TestSpinBackoffField(t *testing.T) {
	s, err := Parse("s.yaml", []byte(spinFile("  backoff: {initial_delay: 2ms, max_delay: 64ms, multiplier: 3}\n")))
	if err != nil {
		t.Fatal(err)
	}
	want := lock.BackOff{InitialDelay: 2 * time.Millisecond, MaxDelay: 64 * time.Millisecond, Multiplier: 3}
	if got := s.Algorithm.Workload.(*Spin).BackOff; got != want {
		t.Errorf("backoff %+v, want %+v", got, want)
	}
	s, err = Parse("s.yaml", []byte(spinFile("  backoff: {constant: 64ms}\n")))
	if err != nil || s.Algorithm.Workload.(*Spin).BackOff != (lock.BackOff{Constant: 64 * time.Millisecond}) {
		t.Errorf("constant: %+v, %v", s, err)
	}
	if s, err = Parse("s.yaml", []byte(spinFile(""))); err != nil || s.Algorithm.Workload.(*Spin).BackOff != (lock.BackOff{}) {
		t.Errorf("no backoff: %v", err)
	}
	for algo, want := range map[string]string{
		"  backoff: {max_delay: 1500us}\n":       "s.yaml:11: algorithm.backoff.max_delay: 1.5ms is not a whole number of milliseconds",
		"  backoff: {multiplier: 0}\n":           "s.yaml:11: algorithm.backoff.multiplier: 0 out of range [1, 1000]",
		"  backoff: {jitter: 1ms}\n":             "s.yaml:11: algorithm.backoff.jitter: unknown field (want one of initial_delay, max_delay, multiplier, constant)",
		"  backoff: 1ms\n":                       "s.yaml:11: algorithm.backoff: want a mapping",
		"  kind: non-reentrant\n  backoff: {}\n": "not a field of algorithm non-reentrant",
	} {
		f := spinFile(algo)
		if strings.HasPrefix(algo, "  kind:") {
			f = strings.Replace(f, "  kind: spin\n", "", 1)
		}
		if _, err := Parse("s.yaml", []byte(f)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", algo, err, want)
		}
	}
}
