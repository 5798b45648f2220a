package scenarios

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/sim"
)

// TestWaiterAfterBrokenSubscription: resurrected-lock-after-failover without
// its warm-up client c0 (seed 1). c2 is told the key's PTTL by m1 at about
// 1 s; m1 fails over at about 1.5 s (on the NOSCRIPT probe of c1's release),
// breaking c2's subscription, and c1's release then deletes the key on the
// promoted r1 where nobody hears it. c2 tries again exactly when the TTL it
// was told runs out, counted from its reply (the lock package's rule, as in
// Redisson's tryLock), not that TTL again from the break: its wait is about
// 4.5 s, not 5 s.
func TestWaiterAfterBrokenSubscription(t *testing.T) {
	const file = "resurrected-lock-after-failover.yaml"
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(string(src), "\n") {
		if !strings.Contains(l, "name: c0") {
			kept = append(kept, l)
		}
	}
	text := strings.Join(kept, "\n")
	i := strings.Index(text, "\nexpect:")
	if i < 0 || len(kept) == strings.Count(string(src), "\n")+1 {
		t.Fatalf("test bug: %s has no c0 line or no expect section", file)
	}
	s, err := Parse(file, []byte(text[:i+1]+"expect:\n  liveness: {c2: {min: 4400ms, max: 4600ms}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Match {
		t.Errorf("c2's wait: %s (%s)", r.Verdict, r.Why)
	}
	var told, ttl, retried, broke time.Duration = -1, -1, -1, -1
	for _, rec := range r.History.Records() {
		if rec.Kind == sim.KindFault && rec.Op == "crash" && broke < 0 {
			broke = rec.At()
		}
		if rec.Kind != sim.KindReq || rec.Client != "c2" || rec.Op != "eval:reentrant_acquire" {
			continue
		}
		end, ok := rec.Returned()
		if !ok {
			t.Fatalf("c2's acquire request at %v has no reply", rec.At())
		}
		if ms, err := strconv.ParseInt(rec.Result, 10, 64); err == nil {
			told, ttl = end, time.Duration(ms)*time.Millisecond
		} else if retried < 0 && told >= 0 && rec.At() > broke && broke >= 0 {
			retried = rec.At()
		}
	}
	if told < 0 || broke <= told || retried < 0 {
		t.Fatalf("told the TTL %v at %v, master crashed at %v, retried at %v: not the story", ttl, told, broke, retried)
	}
	if retried < told+ttl || retried > told+ttl+time.Millisecond {
		t.Errorf("told the TTL %v at %v, subscription broke at %v; retried at %v, want at %v", ttl, told, broke, retried, told+ttl)
	}
}
