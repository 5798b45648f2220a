// Package checker turns a recorded history into verdicts. This file holds
// the mutual-exclusion oracle on belief: what each client believed it held.
package checker

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/locksim/locksim/sim"
)

// Holding is an interval of world time during which Client believed it held
// Lock: from the return of a successful acquire to the call of its next
// release (or the end of the run). An acquire whose outcome the client never
// learned does not start a belief: the client does not act on it.
type Holding struct {
	Client, Lock string
	From, To     time.Duration
	// Token is the acquire's result (the lease token), for reports.
	Token string
}

// Holdings extracts every believed holding from h's op records. Acquires and
// releases are op records with Op "acquire" and "release". end closes
// holdings never released.
func Holdings(h []sim.Record, end time.Duration) []Holding {
	type key struct{ client, lock string }
	open := map[key]*Holding{}
	var out []Holding
	// Process acquires at their return and releases at their call, in time
	// order, so that each release closes the holding open at its call.
	type step struct {
		t       time.Duration
		seq     int
		acquire bool
		r       *sim.Record
	}
	var steps []step
	for i := range h {
		r := &h[i]
		if r.Kind != sim.KindOp {
			continue
		}
		switch r.Op {
		case "acquire":
			if ret, ok := r.Returned(); ok && r.Outcome == sim.OutcomeOK {
				steps = append(steps, step{ret, r.Seq, true, r})
			}
		case "release":
			steps = append(steps, step{r.At(), r.Seq, false, r})
		}
	}
	slices.SortStableFunc(steps, func(a, b step) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.seq, b.seq))
	})
	for _, s := range steps {
		k := key{s.r.Client, s.r.Lock}
		if s.acquire {
			if _, held := open[k]; !held { // a reentrant acquire extends the holding
				open[k] = &Holding{Client: k.client, Lock: k.lock, From: s.t, Token: s.r.Result}
			}
			continue
		}
		if hd, ok := open[k]; ok {
			hd.To = s.t
			out = append(out, *hd)
			delete(open, k)
		}
	}
	//detlint:allow maprange collected, then sorted by (lock, from, client) below, a total order on open holdings
	for _, hd := range open {
		hd.To = end
		out = append(out, *hd)
	}
	slices.SortFunc(out, func(a, b Holding) int {
		return cmp.Or(cmp.Compare(a.Lock, b.Lock), cmp.Compare(a.From, b.From), cmp.Compare(a.Client, b.Client))
	})
	return out
}

// Overlap is a violation of mutual exclusion: two clients believed they held
// the same lock during [From, To).
type Overlap struct {
	Lock     string
	A, B     Holding
	From, To time.Duration
}

func (o Overlap) String() string {
	return fmt.Sprintf("lock %s held by %s and %s at once from %v to %v (%v)",
		o.Lock, o.A.Client, o.B.Client, o.From, o.To, o.To-o.From)
}

// Overlaps returns every pair of holdings of one lock by different clients
// that intersect in a non-empty interval.
func Overlaps(hs []Holding) []Overlap {
	var out []Overlap
	for i := range hs {
		for j := i + 1; j < len(hs); j++ {
			a, b := hs[i], hs[j]
			if a.Lock != b.Lock || a.Client == b.Client {
				continue
			}
			from, to := max(a.From, b.From), min(a.To, b.To)
			if from < to {
				out = append(out, Overlap{Lock: a.Lock, A: a, B: b, From: from, To: to})
			}
		}
	}
	return out
}
