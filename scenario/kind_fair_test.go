package scenario

import (
	"fmt"
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
// refused at the client's wait, naming file, line and field, and the line
// of the algorithm's wait (wherever it is in the section), rather than the
// run failing at the algorithm's line or a 0s being ignored.
func TestFairForeverClientWait(t *testing.T) {
	forever := strings.Replace(fairFile, "  wait: 2s\n", "  wait: forever\n", 1)
	last := strings.Replace(strings.Replace(fairFile, "  wait: 2s\n", "", 1), "  timeout_leaves_entry: true\n", "  timeout_leaves_entry: true\n  wait: forever\n", 1)
	for _, c := range []struct {
		src  string
		line int
	}{{forever, 14}, {last, 17}} {
		for _, w := range []string{"2s", "0s", "forever"} {
			src := strings.Replace(c.src, "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, wait: "+w+"}", 1)
			_, err := Parse("fair.yaml", []byte(src))
			want := fmt.Sprintf("fair.yaml:10: clients[0].wait: the algorithm's wait is forever (line %d): every client's acquire is Redisson's lock()", c.line)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("client wait %s under wait: forever at line %d: %v; want %q", w, c.line, err, want)
			}
		}
	}
}

// TestFairWaitCombinations: what stays valid around wait: forever. The
// algorithm's forever (with a client's own lease and hold) is Forever with
// no wait, for the section and for each client; a duration in the
// algorithm and a client's own wait is that client's TryLockFor wait; a
// client's forever under a duration (or under no algorithm wait) is
// refused, saying it belongs in the algorithm section (forever under
// another kind: TestForeverOutsideFair).
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
	want := "fair.yaml:10: clients[0].wait: a client cannot wait forever on its own: forever is the fair kind's algorithm section's wait only " +
		"(Redisson's lock() on a fair lock, which waits as long as it takes), and makes every client's acquire lock(); " +
		"set wait: forever in the algorithm section, or give this client a Go duration such as 250ms or 5s"
	for _, src := range []string{fairFile, strings.Replace(fairFile, "  wait: 2s\n", "", 1)} {
		_, err := Parse("fair.yaml", []byte(strings.Replace(src, client, "{count: 2, wait: forever}", 1)))
		if err == nil || err.Error() != want {
			t.Errorf("a client's wait: forever under a fair algorithm without it: %v; want %q", err, want)
		}
	}
}

// TestForeverOutsideFair: wait: forever under any owner-based kind but
// fair, in the algorithm section or a client entry, is refused naming
// file, line and field, saying that forever is the fair kind's algorithm
// section's and that this kind's wait is a duration, rather than as a bad
// duration; the list of those kinds is every kind with an owner's wait
// (so that a new one is tested too). A kind without a wait field still
// says so, unknown field as any other.
func TestForeverOutsideFair(t *testing.T) {
	ownerKinds := []string{"reentrant", "fenced", "rwlock", "spin", "non-reentrant", "redlock-redisson"}
	var withWait []string
	for _, k := range algorithmNames() {
		w := newWorkload(k)
		if k != "fair" && slices.Contains(w.Fields(), "wait") && w.settings().owner != nil {
			withWait = append(withWait, k)
		}
	}
	if !slices.Equal(withWait, ownerKinds) {
		t.Errorf("kinds with an owner's wait besides fair: %q, want %q", withWait, ownerKinds)
	}
	const only = "forever is the fair kind's algorithm section's wait only (Redisson's lock() on a fair lock, which waits as long as it takes)"
	client := "{count: 2, retry: go-redis, timeout: 500ms}"
	for _, k := range ownerKinds {
		alg := "  kind: " + k + "\n  wait: forever\n"
		src := strings.Replace(good, "  kind: simple\n  ttl: 1s\n", alg, 1)
		want := "k.yaml:13: algorithm.wait: " + only + "; algorithm " + k + "'s wait is a Go duration such as 250ms or 5s (0s: try once)"
		if _, err := Parse("k.yaml", []byte(src)); err == nil || err.Error() != want {
			t.Errorf("%s: algorithm wait: forever: %v; want %q", k, err, want)
		}
		src = strings.Replace(strings.Replace(good, "  kind: simple\n  ttl: 1s\n", "  kind: "+k+"\n", 1), client, "{count: 2, wait: forever}", 1)
		want = "k.yaml:10: clients[0].wait: " + only + ", not a client's; a client's wait under algorithm " + k + " is a Go duration such as 250ms or 5s (0s: try once)"
		if _, err := Parse("k.yaml", []byte(src)); err == nil || err.Error() != want {
			t.Errorf("%s: client wait: forever: %v; want %q", k, err, want)
		}
	}
	for _, c := range []struct{ src, want string }{
		{strings.Replace(good, "  ttl: 1s\n", "  ttl: 1s\n  wait: forever\n", 1), "k.yaml:14: algorithm.wait: not a field of algorithm simple"},
		{strings.Replace(good, client, "{count: 2, wait: forever}", 1), "k.yaml:10: clients[0].wait: not a field of a client under algorithm simple"},
	} {
		if _, err := Parse("k.yaml", []byte(c.src)); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v; want %q", err, c.want)
		}
	}
}
