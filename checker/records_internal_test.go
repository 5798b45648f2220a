package checker

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/race"
)

// withClientCrashes is h with n client-crash records of clients c0 to c5
// put at random places (at random times on h's grid), renumbered.
func withClientCrashes(r *rand.Rand, h []history.Record, n int) []history.Record {
	h = slices.Clone(h)
	for range n {
		crash := history.Record{Kind: history.KindFault, T: int64(time.Duration(r.IntN(80)) * time.Millisecond),
			Op: history.FaultClientCrash, Client: fmt.Sprintf("c%d", r.IntN(6))}
		h = slices.Insert(h, r.IntN(len(h)+1), crash)
	}
	for i := range h {
		h[i].Seq = i
	}
	return h
}

// TestJudgeIndexSameAsWholePasses: Judge's checks walk only the records
// the index lists for their kinds (indexRecords); walking the whole
// history instead (allRecords, every record in every list, as the checks
// did before the index) gives the same verdict, field for field, on
// random histories of every oracle's shape (reentrant and read-write
// holds with truth, failovers and node crashes; fair queues; lock
// operations for the models), with client crashes, under the model,
// liveness and client bounds and queues that make every check run; and
// the histories make the checks find each of the kinds they share
// records for, often enough to mean it.
func TestJudgeIndexSameAsWholePasses(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 1))
	found := map[Kind]int{}
	waits := 0
	judgeBoth := func(name string, i int, h []history.Record, cfg Config) {
		cfg.Budget = Budget{Steps: 2000}
		got, want := judge(indexRecords(h), cfg), judge(allRecords(h), cfg)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s history %d: the index's verdict\n%v\nthe whole history's\n%v\n%v", name, i, got, want, h)
		}
		for _, k := range want.Kinds() {
			found[k]++
		}
		waits += len(want.Waits)
	}
	bounds := map[string]time.Duration{"c1": 20 * time.Millisecond, "c2": time.Millisecond, "c3": 0}
	n := race.Cases(200) // histories of each lock kind
	for i := range n {
		h := withClientCrashes(r, oracleRandHistory(r, 20+r.IntN(60)), r.IntN(3))
		judgeBoth("reentrant", i, h, Config{Model: []LockKind{LockReentrant, LockReadWrite}[r.IntN(2)], End: 70 * time.Millisecond,
			Liveness: 10 * time.Millisecond, ClientWaits: bounds})
	}
	queues := []FairQueue{RedissonFairQueue("lk"), RedissonFairQueue("lk2")}
	for i := range n {
		h := fairRandHistory(r, 40+r.IntN(120))
		judgeBoth("fair", i, h, Config{Model: LockReentrant, End: time.Duration(70+r.IntN(20)) * time.Millisecond,
			Queues: queues, Liveness: 15 * time.Millisecond, ClientWaits: bounds})
	}
	for i := range n {
		h := withClientCrashes(r, linRandHistory(r, 5+r.IntN(30), r.IntN(2) == 0, r.IntN(2) == 0), r.IntN(3))
		judgeBoth("simple", i, h, Config{Model: LockSimple, End: time.Second, Liveness: 5 * time.Millisecond, ClientWaits: bounds})
	}
	t.Logf("kinds found: %v; %d client waits", found, waits)
	for _, k := range []Kind{MutualExclusion, SilentLoss, Reentrancy, Resurrected, UnlockIdempotency, TokenRegression,
		Linearizability, Liveness, EvictedWaiter, OutOfOrder, StuckQueue} {
		if found[k] < 20*n/200 {
			t.Errorf("only %d histories with %s: too few to compare", found[k], k)
		}
	}
	if waits < 1000*n/200 {
		t.Errorf("only %d client waits: too few to compare", waits)
	}
}
