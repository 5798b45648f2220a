package checker_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// linGenHistory generates a valid history of about n lock operations over
// nLocks locks, deterministically from seed. Each lock passes from holder to
// holder (10 clients): an acquire (10 s lease), a hold of 50 ms to 2 s during
// which other clients are refused (0-3 times) and, 2% of the time, one
// acquire's outcome stays unknown, then the release; the next holder's
// acquire is often called before the release returns. For LockReentrant the
// holder also nests a second hold and the releases say "0" then "1".
func linGenHistory(seed uint64, n, nLocks int, kind checker.LockKind) []history.Record {
	rng := rand.New(rand.NewPCG(seed, uint64(n*1000+nLocks)))
	clients := make([]string, 10)
	for i := range clients {
		clients[i] = "c" + strconv.Itoa(i)
	}
	locks := make([]string, nLocks)
	for i := range locks {
		locks[i] = "lock-" + strconv.Itoa(i)
	}
	now := make([]time.Duration, nLocks)
	var recs []history.Record
	add := func(holder, lock, op string, call, ret time.Duration, outcome history.Outcome, result, detail string) {
		r := history.Record{Kind: history.KindOp, T: int64(call), Client: holder, Lock: lock, Op: op, Outcome: outcome, Result: result, Detail: detail}
		if kind == checker.LockReentrant {
			r.Args = []string{"main"}
		}
		if outcome != history.OutcomeUnknown {
			end := int64(ret)
			r.End = &end
		}
		recs = append(recs, r)
	}
	rtt := func() time.Duration { return time.Duration(200+rng.IntN(800)) * time.Microsecond }
	const lease = "lease=10s"
	for len(recs) < n {
		l := rng.IntN(nLocks)
		lock, t := locks[l], now[l]
		holder := clients[rng.IntN(len(clients))]
		acqRet := t + rtt()
		add(holder, lock, "acquire", t, acqRet, history.OutcomeOK, "tok", lease)
		hold := time.Duration(50+rng.IntN(1950)) * time.Millisecond
		relCall := acqRet + hold
		if kind == checker.LockReentrant {
			c := acqRet + hold/4
			add(holder, lock, "acquire", c, c+rtt(), history.OutcomeOK, "", lease)
			c = acqRet + hold/2
			add(holder, lock, "release", c, c+rtt(), history.OutcomeOK, "0", "")
		}
		for range rng.IntN(4) {
			other := clients[rng.IntN(len(clients))]
			if other == holder {
				continue
			}
			c := acqRet + time.Duration(rng.Int64N(int64(hold-2*time.Millisecond)))
			if rng.IntN(50) == 0 {
				add(other, lock, "acquire", c, 0, history.OutcomeUnknown, "", lease)
			} else {
				add(other, lock, "acquire", c, c+rtt(), history.OutcomeFail, "", lease)
			}
		}
		relRet := relCall + rtt()
		res := ""
		if kind == checker.LockReentrant {
			res = "1"
		}
		add(holder, lock, "release", relCall, relRet, history.OutcomeOK, res, "")
		// The next acquire is called up to 1 ms after the release's call:
		// often while it is still in flight.
		now[l] = relCall + time.Duration(rng.IntN(1000))*time.Microsecond
	}
	slices.SortStableFunc(recs, func(a, b history.Record) int { return int(a.T - b.T) })
	for i := range recs {
		recs[i].Seq = i
	}
	return recs
}

// TestLinearizableGenHistoryIsLegal keeps the benchmark honest: its histories are
// linearizable, and breaking one (a successful acquire by c9 in the middle
// of the last hold of lock-0, behind a dozen operations of unknown outcome:
// the case that makes Porcupine try every placement of those operations
// before it may call the history illegal) is caught, and quickly.
func TestLinearizableGenHistoryIsLegal(t *testing.T) {
	for _, kind := range []checker.LockKind{checker.LockSimple, checker.LockReentrant} {
		h := linGenHistory(1, 2000, 3, kind)
		if v := checker.Linearizable(h, kind, time.Minute); v.Status != checker.OK || len(v.Notes) != 0 {
			t.Fatalf("%v: generated history not legal:\n%s", kind, v)
		}
		unknown, last := 0, -1
		for i, r := range h {
			if r.Outcome == history.OutcomeUnknown {
				unknown++
			}
			if r.Op == "acquire" && r.Outcome == history.OutcomeOK && r.Lock == "lock-0" && r.Client != "c9" {
				last = i
			}
		}
		if unknown < 5 {
			t.Fatalf("%v: only %d operations of unknown outcome", kind, unknown)
		}
		bad := slices.Clone(h)
		call := *h[last].End + int64(time.Millisecond)
		end := call + int64(time.Millisecond)
		bad = append(bad, history.Record{Seq: len(bad), Kind: history.KindOp, T: call, End: &end, Client: "c9", Lock: "lock-0",
			Op: "acquire", Outcome: history.OutcomeOK, Detail: "lease=10s", Args: h[last].Args})
		v := checker.Linearizable(bad, kind, 20*time.Second)
		if v.Status != checker.Violated || v.Violations[0].Lock != "lock-0" || v.Violations[0].From != time.Duration(call) {
			t.Fatalf("%v: planted overlap at %v not found:\n%s", kind, time.Duration(call), v)
		}
	}
}

// BenchmarkLinearizable times checking generated valid histories of 1k, 10k
// and 100k operations over 1 and 100 locks (the target: 100k operations
// over 100 locks in under 10 s on the project's 2-core machine).
func BenchmarkLinearizable(b *testing.B) {
	for _, kind := range []checker.LockKind{checker.LockSimple, checker.LockReentrant} {
		for _, n := range []int{1_000, 10_000, 100_000} {
			for _, nLocks := range []int{1, 100} {
				b.Run(fmt.Sprintf("%v/ops=%d/locks=%d", kind, n, nLocks), func(b *testing.B) {
					h := linGenHistory(1, n, nLocks, kind)
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						if v := checker.Linearizable(h, kind, 5*time.Minute); v.Status != checker.OK {
							b.Fatalf("not OK:\n%s", v)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(h)), "ns/op-checked")
				})
			}
		}
	}
}

// BenchmarkOracles times Check (belief, ground truth, reentrancy,
// idempotency, fencing) on the same generated histories, which carry no
// truth records: the ground-truth oracles then only index an empty truth
// (and the verdict says they were not checked), so this measures the
// belief side; the truth side is linear in the truth records a real run
// adds.
func BenchmarkOracles(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		for _, nLocks := range []int{1, 100} {
			b.Run(fmt.Sprintf("ops=%d/locks=%d", n, nLocks), func(b *testing.B) {
				h := linGenHistory(1, n, nLocks, checker.LockReentrant)
				end := time.Duration(h[len(h)-1].T) + time.Hour
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if v := checker.Check(h, end); len(v.Violations) != 0 || len(v.Unchecked) == 0 {
						b.Fatalf("want no violation, and the truth oracles not checked:\n%s", v)
					}
				}
			})
		}
	}
}
