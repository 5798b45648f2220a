package checker

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
)

// setLostPerOp is setLost asked by operation, as it was first written: each
// operation's span (from its call to the call of its holder's next one on
// the lock, in call order) scanned instant by instant with forgotAt. The
// reference setLost's pass by instant must agree with.
func (lh *linHistory) setLostPerOp(h []history.Record, tr *Truth) {
	instants := make([][]lossInstant, len(lh.locks))
	groups := make([][]string, len(lh.locks))
	for l, name := range lh.locks {
		groups[l] = tr.groups(name)
		instants[l] = tr.lossInstants(name, groups[l])
	}
	next := make([]int64, len(lh.ops))
	for i := range lh.ops {
		o := &lh.ops[i]
		next[i] = never
		for j := range lh.ops {
			p := &lh.ops[j]
			// The first op of the holder on the lock called after o, or at
			// o's call and recorded after it (a refused acquire sets no
			// hold: not one).
			if !p.refused() && p.holder == o.holder && p.lock == o.lock && j != i && (p.call > o.call || (p.call == o.call && j > i)) && p.call < next[i] {
				next[i] = p.call
			}
		}
	}
	token := map[holderLock]string{}
	for i := range lh.ops {
		o := &lh.ops[i]
		r := &h[o.rec]
		key := holderLock{o.holder, o.lock}
		if o.kind.acquire() && o.out == outOK {
			token[key] = r.Result
		}
		if len(instants[o.lock]) == 0 || o.refused() {
			continue
		}
		hd := Holding{Client: holderName(r), Lock: r.Lock, Token: token[key]}
		if t, ok := tr.forgotAt(hd, groups[o.lock], instants[o.lock], time.Duration(o.call), time.Duration(next[i])); ok {
			o.lostBy = int64(t)
		}
	}
}

// forgotAt, for setLostPerOp, is the first of the instants (lossInstants' for h's lock) in
// [from, until) at which the nodes forgot h for good: a majority of its
// groups' masters named it just before (namedBefore) and fewer name it
// then, and no majority names it again before until (the holder's next
// operation on the lock): an acquire still in flight, a resent one, or a
// failover back that brings the hold back leaves it live, and its answers
// are judged as before; or the master of its one group names it with
// fewer holds (fewerHolds). false when they never did.
func (tr *Truth) forgotAt(h Holding, groups []string, instants []lossInstant, from, until time.Duration) (time.Duration, bool) {
	quorum := len(groups)/2 + 1
	i, _ := slices.BinarySearchFunc(instants, from, atInstant)
	for _, x := range instants[i:] {
		if x.t >= until {
			break
		}
		if x.t > 0 && tr.namedBefore(h, groups, x) >= quorum &&
			((tr.namedBy(h, groups, x.t) < quorum && !tr.namedAgain(h, groups, instants, x.t, until)) || tr.fewerHolds(h, groups, x)) {
			return x.t, true
		}
	}
	return 0, false
}

// namedBefore counts the groups whose master names h just before the loss
// x: the master before x.t, in what it held before x's first record.
func (tr *Truth) namedBefore(h Holding, groups []string, x lossInstant) int {
	n := 0
	for _, g := range groups {
		if Names(tr.stateBefore(tr.Master(g, x.t-1), h.Lock, x.t, x.seq), h) {
			n++
		}
	}
	return n
}

// lossRandHistory is a random history of one lock ("lk") on one or three
// groups (a master and a replica each), for the two ways of setting
// lostBy to be compared on: holders' acquires (ok with a token of their
// own, refused, unknown) and releases, and truth records that name those
// holders (their tokens, or hash fields, as hash says) or nobody, at random
// on random nodes, among crashes, restarts and failovers, several at one
// instant; an op's call may come before its holder's previous op's. It
// need not be a consistent history: the two must agree on
// any.
func lossRandHistory(rng *rand.Rand, groups int, hash bool) []history.Record {
	ms := int64(time.Millisecond)
	holders := []string{"c1/a", "c1/b", "c2/a", "c3/a"}
	var recs []history.Record
	var nodes []string
	for g := range groups {
		m, r := fmt.Sprintf("m%d", g+1), fmt.Sprintf("r%d", g+1)
		nodes = append(nodes, m, r)
		recs = append(recs,
			history.Record{Kind: history.KindNode, Node: m, Op: history.RoleMaster, Value: m},
			history.Record{Kind: history.KindNode, Node: r, Op: history.RoleReplica, Value: m})
	}
	tokens := map[string]string{}
	t := int64(0)
	for range 60 {
		t += rng.Int64N(3) * ms // often the same instant as the last record
		switch k := rng.IntN(10); {
		case k < 4:
			hd := holders[rng.IntN(len(holders))]
			client, owner, _ := strings.Cut(hd, "/")
			// An op is recorded at its return: its call may come before
			// records already written, even its holder's last op's call.
			call := max(0, t-rng.Int64N(3)*ms)
			r := history.Record{Kind: history.KindOp, T: call, Client: client, Lock: "lk", Args: []string{owner}}
			end := t + rng.Int64N(4)*ms
			r.End = &end
			if rng.IntN(2) == 0 {
				r.Op = history.OpAcquire
				r.Detail = "lease=50ms"
				switch rng.IntN(4) {
				case 0:
					r.Outcome = history.OutcomeFail
				case 1:
					r.Outcome, r.End = history.OutcomeUnknown, nil
				default:
					r.Outcome = history.OutcomeOK
					tokens[hd] = fmt.Sprintf("t%d", rng.IntN(6)) // tokens shared now and then
					r.Result = tokens[hd]
				}
			} else {
				r.Op, r.Outcome = history.OpRelease, []history.Outcome{history.OutcomeOK, history.OutcomeFail}[rng.IntN(2)]
			}
			recs = append(recs, r)
		case k < 8:
			r := history.Record{Kind: history.KindTruth, T: t, Node: nodes[rng.IntN(len(nodes))], Key: "lk"}
			hd := holders[rng.IntN(len(holders))]
			switch {
			case rng.IntN(4) == 0:
				r.Gone = true
			case hash:
				r.Fields = map[string]string{holderField(hd): "1"}
				if rng.IntN(3) == 0 {
					r.Fields[holderField(holders[rng.IntN(len(holders))])+":write"] = "1"
				}
			default:
				r.Value = fmt.Sprintf("t%d", rng.IntN(6))
			}
			recs = append(recs, r)
		default:
			g := rng.IntN(groups)
			switch rng.IntN(3) {
			case 0:
				recs = append(recs, history.Record{Kind: history.KindFault, T: t, Op: history.FaultFailover, Node: fmt.Sprintf("m%d", g+1), Value: fmt.Sprintf("r%d", g+1)})
			case 1:
				recs = append(recs, history.Record{Kind: history.KindFault, T: t, Op: history.FaultCrash, Node: nodes[rng.IntN(len(nodes))]})
			default:
				recs = append(recs, history.Record{Kind: history.KindFault, T: t, Op: history.FaultRestart, Node: nodes[rng.IntN(len(nodes))]})
			}
		}
	}
	for i := range recs {
		recs[i].Seq = i
	}
	return recs
}

// TestSetLostAgreesWithPerOpScan: setLost's pass by instant gives every
// operation the lostBy that scanning its own span with forgotAt gives, on
// random histories of string and hash keys, on one group and three; and
// the histories do exercise the rule (some operations are forgotten).
func TestSetLostAgreesWithPerOpScan(t *testing.T) {
	forgotten := 0
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 7))
		groups := []int{1, 3}[seed%2]
		hash := seed%4 >= 2
		h := lossRandHistory(rng, groups, hash)
		ix := indexRecords(h)
		kind := LockSimple
		if hash {
			kind = LockReentrant
		}
		lh, err := buildLin(ix, kind, nil, &lazyReqs{h: h}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]int64, len(lh.ops))
		for i := range lh.ops {
			got[i] = lh.ops[i].lostBy
			lh.ops[i].lostBy = 0
			if got[i] != 0 {
				forgotten++
			}
		}
		lh.setLostPerOp(h, newTruth(ix))
		want := make([]int64, len(lh.ops))
		for i := range lh.ops {
			want[i] = lh.ops[i].lostBy
		}
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d (%d groups, hash %v): lostBy by instant %v, by operation %v", seed, groups, hash, got, want)
		}
	}
	t.Logf("forgotten %d", forgotten)
	if forgotten < 50 {
		t.Fatalf("only %d forgotten operations in all the histories: they do not exercise the rule", forgotten)
	}
}
