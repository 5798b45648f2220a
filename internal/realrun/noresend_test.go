package realrun

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
)

// TestLockScriptNotResent: under Redisson's retry policy a single-server
// config's acquire script is sent once (Redisson's noRetry, which the
// simulation honours: setup.RetryPolicy.HonourNoResend), so its lost reply
// leaves the acquire unknown after the client's timeout. A real client
// whose go-redis retried every command resent it (after Redisson's 1-2 s
// backoff), the resend took the lock again, and the acquire returned ok:
// the real runs of fair-trylock-first-try-lost-reply showed no stuck
// queue, and a hold counted twice could show where the simulation has
// none.
func TestLockScriptNotResent(t *testing.T) {
	t.Parallel()
	bin := redistest.Binary(t)
	s, err := scenario.LoadScaled("../../scenarios/redisson-single-server-acquire-not-resent.yaml", 0.2)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(s, Options{Bin: bin, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, rec := range r.Records {
		b.WriteString(recordLine(rec))
	}
	var firstReq, firstOp *history.Record
	for i := range r.Records {
		rec := &r.Records[i]
		switch {
		case firstReq == nil && rec.Kind == history.KindReq && rec.Op == "eval:reentrant_acquire" && len(rec.Args) == 3 && rec.Args[2] == "c1:b":
			firstReq = rec
		case firstOp == nil && rec.Kind == history.KindOp && rec.Op == history.OpAcquire && len(rec.Args) == 1 && rec.Args[0] == "b":
			firstOp = rec
		}
	}
	if firstReq == nil || firstOp == nil {
		t.Fatalf("no acquire of owner b in the history\n%s", b.String())
	}
	if n := len(firstReq.Applied); n != 1 {
		t.Errorf("owner b's first acquire script (its reply dropped) ran %d times; want once (Redisson's noRetry)", n)
	}
	if firstOp.Outcome != history.OutcomeUnknown {
		t.Errorf("owner b's first acquire returned %s; want unknown (the timeout, the script not resent)", firstOp.Outcome)
	}
	if t.Failed() {
		t.Logf("history:\n%s", b.String())
	}
}
