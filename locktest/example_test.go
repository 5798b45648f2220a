package locktest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/locksim/locksim/examples/ownlock"
	"github.com/locksim/locksim/locktest"
)

// A test of one's own lock: its code (here ownlock's SET NX PX lock, each
// client's built with the client's lease), the model it claims, and a committed scenario to run it
// under, on 50 seeds. Run fails t with the verdict, the events around the
// violation and the call that replays it when a run violates safety.
func ExampleRun() {
	// In a _test.go file, as func TestMyLockSurvivesLostReplies(t *testing.T):
	testMyLockSurvivesLostReplies := func(t *testing.T) {
		mine := locktest.Impl{New: ownlock.NewSetNX, Model: locktest.Simple}
		locktest.Run(t, mine, locktest.Scenario("lost-reply-simple-acquire"), locktest.Seeds(1, 50))
	}
	_ = testMyLockSurvivesLostReplies
	// Output:
}

// Check returns the runs instead of failing a test: here F0, a failover to
// a replica that lags, which no lock on one asynchronously replicated
// master survives: seeds 1 to 3, each run's finding kinds.
func ExampleCheck() {
	mine := locktest.Impl{New: ownlock.NewSetNX}
	rs, err := locktest.Check(mine, locktest.Scenario("f0-failover-lagging-replica"), locktest.Seeds(1, 3))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rs {
		fmt.Println(r.Name, r.Seed, r.Unsafe(), r.Kinds())
	}
	// Output:
	// f0-failover-lagging-replica 1 true [mutual-exclusion silent-loss]
	// f0-failover-lagging-replica 2 true [mutual-exclusion silent-loss]
	// f0-failover-lagging-replica 3 true [mutual-exclusion silent-loss]
}

// A scenario built in Go: F0 again, one master with a replica 10 s behind,
// failed over at 5 s, three clients holding for 2 s. YAML is the file it
// stands for.
func ExampleSetup() {
	f0 := locktest.Setup{Name: "f0-in-go", Replicas: 1, Lag: 10 * time.Second, Lease: 10 * time.Second,
		Hold: 2 * time.Second, Faults: []string{"{kind: failover, at: 5s, group: m1}"}}
	rs, err := locktest.Check(locktest.Impl{New: ownlock.NewSetNX}, f0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rs[0].Name, rs[0].Kinds())
	// Output:
	// f0-in-go [mutual-exclusion silent-loss]
}

// A search for the fault schedule that breaks a lock: ownlock's GetThenDel
// releases with a GET, a comparison in Go and a DEL. Pauses bound to its
// operations (OnOps) find the one that falls between the GET and the DEL,
// shrunk to a single pause; Find returns it, Search (in a test) fails the
// test with it and saves it as a scenario file to commit.
func ExampleFind() {
	broken := locktest.Impl{New: ownlock.NewGetThenDel}
	cx, err := locktest.Find(broken, locktest.Budget{
		Faults: []string{"pause"}, OnOps: true,
		Find: []locktest.Kind{"unlock-idempotency"}, // its release deleted another holder's key
		Over: []locktest.Setup{{Lease: 2 * time.Second, Clients: 2}},
	})
	if err != nil || cx == nil {
		fmt.Println("nothing found", err)
		return
	}
	fmt.Println(cx.Faults)
	fmt.Println(cx.Result.Kinds())
	// Output:
	// [pause c1 for 1.016s when c1's 1st release is called]
	// [linearizability mutual-exclusion silent-loss unlock-idempotency]
}

// Search in a test: up to 2 faults per run of the default kinds (client
// crashes, lost requests and replies, duplicates), bound to the lock's
// operations too, 200 runs; a lock that stays unavailable for more than
// 12 s also fails. A failure is saved as testdata/locktest/<test>.yaml.
func ExampleSearch() {
	// In a _test.go file, as func TestMyLockSearch(t *testing.T):
	testMyLockSearch := func(t *testing.T) {
		mine := locktest.Impl{New: ownlock.NewSetNX}
		locktest.Search(t, mine, locktest.Budget{OnOps: true, Runs: 200, Liveness: 12 * time.Second,
			Over: []locktest.Setup{{Lease: 5 * time.Second}}})
	}
	_ = testMyLockSearch
	// Output:
}
