// The mutual-exclusion oracle on belief: what each holder believed it held.

package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
)

// Holding is an interval of world time during which a holder believed it
// held Lock: from the return of its first successful acquire to the call of
// the release that gave back its last hold, or to the moment its own
// validity estimate ran out (an "expire" record), or to its client's crash
// (a "client-crash" fault record: a dead process believes nothing), or to
// the end of the run.
// An acquire whose outcome the holder never learned does not start a belief:
// it does not act on it.
type Holding struct {
	// Client is the holder: the client's name, and "/owner" when the
	// operations name an owner (reentrant locks: two owners of one client
	// are two holders).
	Client, Lock string
	From, To     time.Duration
	// Token is the first acquire's result (lease token, fencing token).
	Token string
	// Shared marks a read hold ("acquire-read"): shared holds of different
	// holders may overlap.
	Shared bool
}

// Op records the belief oracle reads (kind "op"):
//
//   - "acquire": Args[0], if present, is the owner; a successful acquire
//     adds a hold (reentrant acquires nest); Result is a token, if any.
//   - "release": Args[0] is the owner; its call gives back one hold, and the
//     belief ends at the call that gives back the last.
//   - "expire": the holder's own estimate of its validity ran out (its lease
//     timer fired, or the watchdog told it the lock was lost); the belief ends
//     there whatever the depth.
//
// and one fault record: "client-crash" ends every belief of the client (all
// its owners, every lock) at the crash.

// Holdings extracts every believed holding from h's op records; end closes
// holdings still open.
func Holdings(h []history.Record, end time.Duration) []Holding {
	return holdings(indexRecords(h), end)
}

// holdings is Holdings of ix's history, reading its op and fault records.
func holdings(ix *recordIndex, end time.Duration) []Holding {
	b := beliefs{open: map[beliefKey]*openHolding{}}
	for _, s := range beliefSteps(ix) {
		b.apply(s)
	}
	//detlint:allow maprange collected, then sorted by (lock, from, client) below, a total order on open holdings
	for _, st := range b.open {
		st.h.To = end
		b.out = append(b.out, st.h)
	}
	slices.SortFunc(b.out, func(a, b Holding) int {
		return cmp.Or(cmp.Compare(a.Lock, b.Lock), cmp.Compare(a.From, b.From), cmp.Compare(a.Client, b.Client), boolCmp(a.Shared, b.Shared))
	})
	return b.out
}

// beliefStep is a record that changes a belief, at the time it counts.
type beliefStep struct {
	t time.Duration
	r *history.Record
}

// beliefSteps lists the records that change beliefs in the order they
// count: acquires at their return (only successful ones: an acquire whose
// outcome the holder never learned starts no belief), releases, expiries
// and client crashes at their call, in time order, then record order.
func beliefSteps(ix *recordIndex) []beliefStep {
	h := ix.h
	var steps []beliefStep
	for _, i := range ix.opsFaults {
		r := &h[i]
		switch {
		case crashed(r):
			steps = append(steps, beliefStep{r.At(), r})
		case r.Kind != history.KindOp:
		case r.Op == history.OpAcquire || r.Op == history.OpAcquireRead:
			if ret, ok := r.Returned(); ok && r.Outcome == history.OutcomeOK {
				steps = append(steps, beliefStep{ret, r})
			}
		case r.Op == history.OpRelease || r.Op == history.OpReleaseRead || r.Op == history.OpExpire:
			steps = append(steps, beliefStep{r.At(), r})
		}
	}
	slices.SortStableFunc(steps, func(a, b beliefStep) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.r.Seq, b.r.Seq))
	})
	return steps
}

// beliefKey names one belief: a holder's exclusive or shared hold of a lock.
type beliefKey struct {
	holder, lock string
	shared       bool
}

// openHolding is a belief not yet ended, with its depth (nested holds).
type openHolding struct {
	h     Holding
	depth int
}

// beliefs is the state of every holder's belief as beliefSteps unfold:
// the open ones, and the holdings already ended.
type beliefs struct {
	open map[beliefKey]*openHolding
	out  []Holding
}

// apply changes the beliefs by one step: a crash ends every belief of its
// client; an acquire adds a hold (opening the belief); a release gives one
// back (ending the belief at the last); an expiry ends both of the
// holder's beliefs in the lock, whatever the depth.
func (b *beliefs) apply(s beliefStep) {
	if crashed(s.r) {
		b.crash(s.r.Client, s.t)
		return
	}
	holder := holderName(s.r)
	shared := s.r.Op == history.OpAcquireRead || s.r.Op == history.OpReleaseRead
	k := beliefKey{holder, s.r.Lock, shared}
	switch s.r.Op {
	case history.OpAcquire, history.OpAcquireRead:
		st, ok := b.open[k]
		if !ok {
			st = &openHolding{h: Holding{Client: holder, Lock: k.lock, From: s.t, Token: s.r.Result, Shared: shared}}
			b.open[k] = st
		}
		st.depth++
	case history.OpRelease, history.OpReleaseRead:
		if st, ok := b.open[k]; ok {
			if st.depth--; st.depth <= 0 {
				b.end(k, s.t)
			}
		}
	case history.OpExpire:
		b.end(k, s.t)
		b.end(beliefKey{holder, s.r.Lock, !shared}, s.t)
	}
}

// end closes k's belief at t, if it is open.
func (b *beliefs) end(k beliefKey, t time.Duration) {
	if st, ok := b.open[k]; ok {
		st.h.To = t
		b.out = append(b.out, st.h)
		delete(b.open, k)
	}
}

// crash ends, at t, every belief of client's holders (all its owners, every
// lock): a dead process believes nothing.
func (b *beliefs) crash(client string, t time.Duration) {
	var ks []beliefKey
	//detlint:allow maprange collected, then sorted by (holder, lock, shared) below
	for k := range b.open {
		if k.holder == client || strings.HasPrefix(k.holder, client+"/") {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, func(a, b beliefKey) int {
		return cmp.Or(cmp.Compare(a.holder, b.holder), cmp.Compare(a.lock, b.lock), boolCmp(a.shared, b.shared))
	})
	for _, k := range ks {
		b.end(k, t)
	}
}

// tokenNote names a holding's token in a violation's Detail, if it has one.
func tokenNote(tok string) string {
	if tok == "" {
		return ""
	}
	return " (token " + tok + ")"
}

// boolCmp orders false before true, to sort by a flag.
func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// overlapViolations turns the overlaps of hs, the holdings of h, into
// violations.
// violations into violations, spending w (overlaps').
func overlapViolations(h []history.Record, hs []Holding, w *oracleWork) []Violation {
	var out []Violation
	c := lazyCauses{h: h}
	for _, o := range overlaps(hs, w) {
		out = append(out, Violation{
			Kind: MutualExclusion, Lock: o.Lock, Holders: []string{o.A.Client, o.B.Client},
			From: o.From, To: o.To,
			Detail: fmt.Sprintf("%s%s and %s%s both believed they held it", o.A.Client, tokenNote(o.A.Token), o.B.Client, tokenNote(o.B.Token)),
			Faults: c.before(o.From),
		})
	}
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

// Overlaps returns every pair of holdings of one lock by different holders
// that intersect in a non-empty interval, unless both are shared (read)
// holds.
//
// Holdings are swept in (lock, start) order, as Holdings returns them (a
// copy is sorted otherwise): each is compared only with those that start
// before it ends.
func Overlaps(hs []Holding) []Overlap { return overlaps(hs, nil) }

// overlaps is Overlaps spending w: a unit per pair of holdings compared.
func overlaps(hs []Holding, w *oracleWork) []Overlap {
	byStart := func(a, b Holding) int { return cmp.Or(cmp.Compare(a.Lock, b.Lock), cmp.Compare(a.From, b.From)) }
	if !slices.IsSortedFunc(hs, byStart) {
		hs = slices.Clone(hs)
		slices.SortStableFunc(hs, byStart)
	}
	var out []Overlap
	for i := range hs {
		for j := i + 1; j < len(hs) && hs[j].Lock == hs[i].Lock && hs[j].From < hs[i].To; j++ {
			if !w.charge(1, hs[j].From) {
				return out
			}
			a, b := hs[i], hs[j]
			if a.Client == b.Client || (a.Shared && b.Shared) {
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

// crashed reports whether r is a client's crash (a "client-crash" fault
// record): a dead client believes, wants and renews nothing from there on.
func crashed(r *history.Record) bool {
	return r.Kind == history.KindFault && r.Op == history.FaultClientCrash
}

// holderName is the record's holder: the client, and "/owner" when the
// operation names an owner.
func holderName(r *history.Record) string {
	if len(r.Args) > 0 && r.Args[0] != "" {
		return r.Client + "/" + r.Args[0]
	}
	return r.Client
}
