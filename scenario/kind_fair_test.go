package scenario

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/lock"
)

// fairFile is good with a fair lock's algorithm section.
var fairFile = strings.Replace(good, "  kind: simple\n  ttl: 1s\n",
	"  kind: fair\n  owners: [a]\n  wait: 2s\n  non_reentrant: true\n  fair_wait_timeout: 20s\n  timeout_leaves_entry: true\n", 1)

// TestFairFields: the fair kind's own fields reach its workload's config
// (the lock client's options among them) and choose its model, with their
// defaults when left out: reentrant, Redisson's 5 min wait timeout (the
// lock's default), the 4.7.0 behaviour after a timed-out try.
func TestFairFields(t *testing.T) {
	s, err := Parse("fair.yaml", []byte(fairFile))
	if err != nil {
		t.Fatal(err)
	}
	k, ok := s.Algorithm.Workload.(*Fair)
	if !ok {
		t.Fatalf("workload %T, want *Fair", s.Algorithm.Workload)
	}
	if !k.NonReentrant || k.Options.FairLockWaitTimeout != 20*time.Second || !k.Options.FairLockTimeoutLeavesEntry || k.Wait != 2*time.Second {
		t.Errorf("config %+v: want non_reentrant, fair_wait_timeout 20s, timeout_leaves_entry, wait 2s", k.FairConfig)
	}
	if k.Model() != checker.LockSimple {
		t.Errorf("non_reentrant: model %v, want the simple lock's", k.Model())
	}
	if k.Options.Deployment != lock.Replicated {
		t.Errorf("deployment %v on a master with a replica, want replicated", k.Options.Deployment)
	}
	src := strings.NewReplacer("  non_reentrant: true\n", "", "  fair_wait_timeout: 20s\n", "", "  timeout_leaves_entry: true\n", "").Replace(fairFile)
	s, err = Parse("fair.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k = s.Algorithm.Workload.(*Fair)
	if k.NonReentrant || k.Options.FairLockWaitTimeout != 0 || k.Options.FairLockTimeoutLeavesEntry || k.Model() != checker.LockReentrant {
		t.Errorf("defaults %+v, model %v: want reentrant (its model), the lock's default wait timeout (0 here), 4.7.0's behaviour", k.FairConfig, k.Model())
	}
}

// TestFairBadFields: the fair kind's bad fields are refused naming file,
// line and field: a wait timeout that is not whole milliseconds, a switch
// that is not a boolean, and a field of another kind.
func TestFairBadFields(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"fair_wait_timeout: 20s", "fair_wait_timeout: 1500us", "fair.yaml:16: algorithm.fair_wait_timeout: 1.5ms is not a whole number of milliseconds"},
		{"non_reentrant: true", "non_reentrant: yes please", "fair.yaml:15: algorithm.non_reentrant: want true or false"},
		{"  owners: [a]\n", "  owners: [a]\n  ttl: 1s\n", "fair.yaml:14: algorithm.ttl: not a field of algorithm fair"},
	} {
		src := strings.Replace(fairFile, c.old, c.new, 1)
		_, err := Parse("fair.yaml", []byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q -> %q: %v; want %q", c.old, c.new, err, c.want)
		}
	}
}

// TestFairTruthKeys: a fair lock's truth keys are its key, its queue and
// its timeouts, the keys the fair lock's scripts write (the queue's
// names as Redisson spells them, in the lock key's slot); another kind's
// are its lock key alone.
func TestFairTruthKeys(t *testing.T) {
	s, err := Parse("fair.yaml", []byte(fairFile))
	if err != nil {
		t.Fatal(err)
	}
	lk := s.LockKey()
	want := []string{lk, "redisson_lock_queue:{" + lk + "}", "redisson_lock_timeout:{" + lk + "}"}
	if got := s.TruthKeys(); !slices.Equal(got, want) {
		t.Errorf("fair: truth keys %q, want %q", got, want)
	}
	s, err = Parse("simple.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.TruthKeys(); !slices.Equal(got, []string{s.LockKey()}) {
		t.Errorf("simple: truth keys %q, want the lock key %q alone", got, s.LockKey())
	}
}

// TestFairForeverClientWait: wait: forever is the algorithm section's, and
// makes every client's acquire Redisson's lock(), which has no wait of its
// own: a client entry's wait under it (a duration, 0s, or forever) is
// refused at the client's wait, naming file, line and field, rather than
// the run failing at the algorithm's line or a 0s being ignored.
func TestFairForeverClientWait(t *testing.T) {
	forever := strings.Replace(fairFile, "  wait: 2s\n", "  wait: forever\n", 1)
	for _, w := range []string{"2s", "0s", "forever"} {
		src := strings.Replace(forever, "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, wait: "+w+"}", 1)
		_, err := Parse("fair.yaml", []byte(src))
		want := "fair.yaml:10: clients[0].wait: the algorithm's wait is forever: every client's acquire is Redisson's lock()"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("client wait %s under wait: forever: %v; want %q", w, err, want)
		}
	}
}

// TestFairWaitCombinations: what stays valid around wait: forever. The
// algorithm's forever (with a client's own lease and hold) is Forever with
// no wait, for the section and for each client; a duration in the
// algorithm and a client's own wait is that client's TryLockFor wait; a
// client's forever under a duration, and forever under a kind without
// Redisson's lock(), are bad durations.
func TestFairWaitCombinations(t *testing.T) {
	forever := strings.Replace(fairFile, "  wait: 2s\n", "  wait: forever\n", 1)
	client := "{count: 2, retry: go-redis, timeout: 500ms}"
	s, err := Parse("fair.yaml", []byte(strings.Replace(forever, client, "{count: 2, lease: 5s, hold: 300ms}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Algorithm.Workload.(*Fair); !k.Forever || k.Wait != 0 {
		t.Errorf("algorithm wait: forever: Forever %v, wait %v; want Forever and no wait", k.Forever, k.Wait)
	}
	c := s.ForClient(s.Clients[0].Config.Name).Workload.(*Fair)
	if !c.Forever || c.Wait != 0 || c.Lease != 5*time.Second || c.Hold != 300*time.Millisecond {
		t.Errorf("a client under wait: forever: Forever %v, wait %v, lease %v, hold %v; want Forever, no wait, its lease 5s and hold 300ms",
			c.Forever, c.Wait, c.Lease, c.Hold)
	}
	s, err = Parse("fair.yaml", []byte(strings.Replace(fairFile, client, "{count: 2, wait: 5s}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if c := s.ForClient(s.Clients[0].Config.Name).Workload.(*Fair); c.Forever || c.Wait != 5*time.Second {
		t.Errorf("a client's wait 5s under wait 2s: Forever %v, wait %v; want its own wait", c.Forever, c.Wait)
	}
	for _, c := range []struct{ src, want string }{
		{strings.Replace(fairFile, client, "{count: 2, wait: forever}", 1), `fair.yaml:10: clients[0].wait: bad duration "forever"`},
		{strings.Replace(strings.Replace(forever, "  non_reentrant: true\n  fair_wait_timeout: 20s\n  timeout_leaves_entry: true\n", "", 1), "kind: fair", "kind: reentrant", 1),
			`fair.yaml:14: algorithm.wait: bad duration "forever"`},
	} {
		if _, err := Parse("fair.yaml", []byte(c.src)); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v; want %q", err, c.want)
		}
	}
}
