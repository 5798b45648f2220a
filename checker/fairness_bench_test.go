package checker_test

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// fairServedHistory is a long fair-lock history made up: waiters c0 to
// c<waiters-1> take lock "lk" in turn for rounds rounds, each asking again
// just after its release and waiting in the queue behind the others until
// its turn (the queue holds all but one or two of them at every instant;
// two changes of it a round), each hold about 10 ms. Every 50th round the
// head's entry is dropped by the next one's fair_acquire (an eviction the
// oracle explains by that request): its call ends and it asks again at
// the tail, and the next is served in its place.
func fairServedHistory(waiters, rounds int) []history.Record {
	const ms = time.Millisecond
	queue := scripts.FairQueueKey("lk")
	recs := []history.Record{{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"}}
	field := func(c int) string { return "c" + strconv.Itoa(c) + ":a" }
	op := func(c int, name string, call, ret time.Duration) {
		e := int64(ret)
		recs = append(recs, history.Record{Kind: history.KindOp, T: int64(call), End: &e, Client: "c" + strconv.Itoa(c),
			Lock: "lk", Op: name, Args: []string{"a"}, Outcome: history.OutcomeOK})
	}
	truth := func(t time.Duration, key string, items []string, fields map[string]string) {
		r := history.Record{Kind: history.KindTruth, T: int64(t), Node: "m1", Key: key, Items: items, Fields: fields}
		if items == nil && fields == nil {
			r.Gone = true
		} else if items != nil {
			r.Detail = "type list"
		}
		recs = append(recs, r)
	}
	line := func(order []int) []string {
		out := make([]string, len(order))
		for i, c := range order {
			out[i] = field(c)
		}
		return out
	}
	// order is the queue; asked[c] is when c's acquire was called.
	order := make([]int, 0, waiters)
	asked := make([]time.Duration, waiters)
	for c := 1; c < waiters; c++ {
		order = append(order, c)
		asked[c] = time.Duration(c) * ms
		truth(asked[c], queue, line(order), nil)
	}
	holder, t := 0, time.Duration(waiters)*ms
	op(0, history.OpAcquire, 0, t)
	truth(t, "lk", nil, map[string]string{field(0): "1"})
	for round := 1; round <= rounds; round++ {
		t += 10 * ms
		if round%50 == 0 {
			// The head's entry goes, dropped by the next's request; the
			// evicted waiter's call goes on, then it asks again.
			gone := order[0]
			order = order[1:]
			truth(t, queue, line(order), nil)
			recs = append(recs, history.Record{Kind: history.KindReq, T: int64(t - ms), Client: "c" + strconv.Itoa(order[0]), Node: "m1",
				Op: "eval:" + scripts.FairAcquire.Name, Args: []string{"lk", queue, "redisson_lock_timeout:{lk}", "ch", "5000", field(order[0]), "30000", "1767225900000"},
				Outcome: history.OutcomeOK, Applied: []int64{int64(t)}})
			op(gone, history.OpAcquire, asked[gone], t+ms)
			asked[gone] = t + 2*ms
			order = append(order, gone)
			truth(t+2*ms, queue, line(order), nil)
			t += 3 * ms
		}
		// holder releases; the head takes the lock and leaves the queue;
		// the old holder asks again and queues at the tail.
		op(holder, history.OpRelease, t, t+ms)
		next := order[0]
		order = order[1:]
		t += ms
		truth(t, "lk", nil, map[string]string{field(next): "1"})
		truth(t, queue, line(order), nil)
		op(next, history.OpAcquire, asked[next], t+ms)
		asked[holder] = t + 2*ms
		order = append(order, holder)
		truth(t+3*ms, queue, line(order), nil)
		holder = next
		t += 3 * ms
	}
	return sortedHistory(recs)
}

// BenchmarkFairness times the fairness oracle alone (FairnessViolations)
// on long fair-lock histories, against the walk it replaced
// (RefFairnessViolations: every call of the run scanned at each queue
// entry of each instant, the history at each eviction) on the same history
// in the same run, after checking that both find the same. It runs as
//
//	go test -run '^$' -bench BenchmarkFairness ./checker/
//
// on these histories:
//   - crashed-waiter: scenarios/fair-crashed-waiter.yaml's run (its
//     waiters polling behind a dead head, then a stuck queue);
//   - contended: twenty clients, two owners each, contending for a fair
//     lock for a virtual minute (every wait bounded, so entries come and go);
//   - served: fairServedHistory, 10 or 40 waiters, 2,000 rounds (an
//     eviction every 50th).
func BenchmarkFairness(b *testing.B) {
	type input struct {
		h      []history.Record
		end    time.Duration
		queues []checker.FairQueue
	}
	lk := []checker.FairQueue{checker.RedissonFairQueue("lk")}
	run := func(b *testing.B, s *scenario.Scenario, err error) input {
		if err != nil {
			b.Fatal(err)
		}
		r, err := simrun.Run(s, 0)
		if err != nil {
			b.Fatal(err)
		}
		return input{r.History.Records(), r.End, s.Algorithm.Queues()}
	}
	served := func(waiters int) input {
		h := fairServedHistory(waiters, 2000)
		return input{h, time.Duration(h[len(h)-1].T) + time.Second, lk}
	}
	for _, c := range []struct {
		name string
		mk   func(b *testing.B) input
	}{
		{"crashed-waiter", func(b *testing.B) input {
			s, err := scenario.Load("../scenarios/fair-crashed-waiter.yaml")
			return run(b, s, err)
		}},
		{"contended", func(b *testing.B) input {
			s, err := scenario.Parse("contended.yaml", []byte(`name: contended
seed: 1
duration: 60s
topology:
  nodes: [{name: m1}]
clients:
  - {count: 20, retry: go-redis, timeout: 500ms, latency: {kind: uniform, min: 1ms, max: 30ms}}
algorithm:
  kind: fair
  owners: [a, b]
  wait: 3s
  hold: 100ms
  think: 10ms
expect: any
`))
			return run(b, s, err)
		}},
		{"served/waiters=10", func(*testing.B) input { return served(10) }},
		{"served/waiters=40", func(*testing.B) input { return served(40) }},
	} {
		// Each history is made, and the walks compared, only when a
		// benchmark of it runs.
		b.Run(c.name, func(b *testing.B) {
			in := c.mk(b)
			want := checker.RefFairnessViolations(in.h, in.end, in.queues)
			if got := checker.FairnessViolations(in.h, in.end, in.queues); !reflect.DeepEqual(got, want) {
				b.Fatalf("the indexed walk found %d violations, the reference %d", len(got), len(want))
			}
			for _, impl := range []struct {
				name string
				f    func([]history.Record, time.Duration, []checker.FairQueue) []checker.Violation
			}{{"indexed", checker.FairnessViolations}, {"reference", checker.RefFairnessViolations}} {
				b.Run(impl.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						impl.f(in.h, in.end, in.queues)
					}
					b.ReportMetric(float64(len(in.h)), "records")
					b.ReportMetric(float64(len(want)), "violations")
				})
			}
		})
	}
}
