package peers

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-redsync/redsync/v4"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestStartRefusesASimulatedClient: every peer library needs real
// connections; a simulated client is refused with ErrNeedsReal, and
// nothing is started.
func TestStartRefusesASimulatedClient(t *testing.T) {
	w := sim.New(1)
	defer w.Close()
	c, err := w.AddClient(setup.ClientConfig{Name: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	for kind, err := range map[string]error{
		KindRedsync:     Redsync(c, RedsyncConfig{Groups: []string{"m1"}, Key: "lk"}),
		KindRedisLock:   RedisLock(c, RedisLockConfig{Group: "m1", Key: "lk", TTL: 1e9}),
		KindRueidisLock: RueidisLock(c, RueidisLockConfig{Group: "m1", Name: "lk"}),
	} {
		if !errors.Is(err, ErrNeedsReal) {
			t.Errorf("%s on a simulated client: %v, want ErrNeedsReal", kind, err)
		}
	}
	if err := Redsync(nil, RedsyncConfig{}); err == nil || errors.Is(err, ErrNeedsReal) {
		t.Errorf("nil client: %v", err)
	}
}

// TestOutcomes: a library's refusal is a fail (the acquire did not
// happen), anything else it returns is unknown (a timeout may have been
// applied); a release the library says was not held is fail "not held",
// an error unknown.
func TestOutcomes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want history.Outcome
	}{
		{nil, history.OutcomeOK},
		{fmt.Errorf("%w: taken", errRefused), history.OutcomeFail},
		{context.DeadlineExceeded, history.OutcomeUnknown},
		{errors.New("i/o timeout"), history.OutcomeUnknown},
	} {
		if got, _ := classify(c.err); got != c.want {
			t.Errorf("classify(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	if o, r := releaseOutcome(true, nil); o != history.OutcomeFail || r != "not held" {
		t.Errorf("not held: %s %q", o, r)
	}
	if o, _ := releaseOutcome(false, errors.New("broken pipe")); o != history.OutcomeUnknown {
		t.Errorf("release error: %s", o)
	}
	if o, _ := releaseOutcome(false, nil); o != history.OutcomeOK {
		t.Errorf("release ok: %s", o)
	}
	if k := RueidisKey("lk", 0); k != "rueidislock:0:lk" {
		t.Errorf("RueidisKey = %q", k)
	}
}

// TestRedsyncRefused: redsync's own refusals (no quorum, nodes taken) are
// refusals; a Redis error on any node makes the try unknown (its clean-up
// may not have reached that node).
func TestRedsyncRefused(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{redsync.ErrFailed, true},
		{&redsync.ErrTaken{Nodes: []int{0}}, true},
		{errors.Join(&redsync.ErrNodeTaken{Node: 0}), true},
		{errors.Join(&redsync.ErrNodeTaken{Node: 0}, &redsync.RedisError{Node: 1, Err: context.DeadlineExceeded}), false},
		{&redsync.RedisError{Node: 0, Err: errors.New("EOF")}, false},
	} {
		if got := redsyncRefused(c.err); got != c.want {
			t.Errorf("redsyncRefused(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
