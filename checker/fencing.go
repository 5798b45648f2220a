// Fencing and liveness: what the protected resource accepted, and how long
// clients waited.

package checker

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

// FencingReport sums up the writes to fenced resources.
type FencingReport struct {
	// Accepted and Rejected count the writes the resources took and refused.
	Accepted, Rejected int
	// StaleAccepted counts accepted writes whose token was below one the
	// same resource had already accepted, or equal to one it had already
	// accepted from another holder: data corrupted despite fencing. Each
	// is one StaleWrite violation.
	StaleAccepted int
	// Prevented counts rejected writes: each would have corrupted data
	// without fencing (a holder that lost the lock writing after the next).
	Prevented int
}

// Fencing checks the "write" op records (Lock is the resource, Result the
// token) and the fencing tokens acquires returned.
//
// An accepted write is stale when its token is below the highest the
// resource accepted before it, or equal to it and another holder had a
// write with that token accepted before it. A resource takes equal tokens
// (so that one holder can write again), and so cannot tell two holders given
// one token apart: once two holders have written with it, neither's writes
// are fenced off from the other's, whichever wrote first. So every write with
// the token after another holder's is stale, in either order: the second
// holder's writes after the first's, and the first holder's own writes after
// the second has written (the first holder's writes before any other
// holder's are not). Each stale write counts once in StaleAccepted and is
// one StaleWrite violation, naming the other holder that wrote the token
// first and the writer.
//
// A token is a regression when an acquisition of a lock gets one that is not
// strictly above every token issued for the lock before (for example a
// failover that lost the counter's last increments hands a second holder the
// token the first already has). The one exception is a re-acquire by the
// holder of the highest token within the same holding (Holdings): it may
// repeat its own token without harm to fencing, which orders holders, not
// one holder's nested acquires. (FencedLock in package lock increments the
// counter on every acquisition, reentrant ones included, so it never
// repeats a token even there; the exception keeps the oracle right for
// locks that return the current token to a reentrant acquire.)
//
// Tokens are ordered by when they were issued: when the node ran the
// acquire's request that returned the token (the req record of FencedLock's
// acquire script, among those the acquire sent, whose reply carries the
// token; its Applied). Not by the acquires' returns: a reply delayed in the
// network returns after acquires that came later, and the token it carries,
// issued first, is smaller than theirs without any regression. A request
// that ran more than once (retried after a lost reply, or duplicated)
// issued its token at one of its runs: the token counts as issued before
// another only when its last run came before the other's first, so that a
// regression is reported only when the order is certain. A history without
// runs (a real server's, from internal/realrun, records none) falls back on
// the returns, which a late reply can misorder: there a regression may be a
// delayed reply's.
func Fencing(h []history.Record) (FencingReport, []Violation) { return fencing(h, nil) }

// fencedAcquireReq is the req record's command of FencedLock's acquire
// script, whose reply carries the token it issued.
var fencedAcquireReq = "eval:" + lock.FencedAcquire.Name

// historyEnd is an instant after every call and return in h.
func historyEnd(h []history.Record) time.Duration {
	var last time.Duration
	for i := range h {
		last = max(last, h[i].At())
		if end, ok := h[i].Returned(); ok {
			last = max(last, end)
		}
	}
	return last + 1
}

// fencing is Fencing with h's holdings, when the caller has them (nil: it
// computes them if it needs them). Only which holding an acquire belongs to
// is read, so any end after the last record serves.
func fencing(h []history.Record, hs []Holding) (FencingReport, []Violation) {
	var rep FencingReport
	var out []Violation
	type written struct {
		token   int64
		writers []string // holders with a write of token accepted, in the order of their first
	}
	highest := map[string]written{} // resource -> highest accepted token and who wrote with it
	type acq struct {
		// first and last bound when the token was issued: the first and
		// last run of the request that returned it, or the acquire's
		// return when the history records no runs.
		first, last time.Duration
		seq         int
		token       int64
		holder      string
		lock        string
		from        time.Duration // start of the holding it belongs to
	}
	// Holdings place each acquire in its holder's holding; built on the
	// first acquire with a token (most locks have none).
	var byHolder map[string][]Holding
	holdingStart := func(holder, lock string, t time.Duration) time.Duration {
		if byHolder == nil {
			if hs == nil {
				hs = Holdings(h, historyEnd(h))
			}
			byHolder = map[string][]Holding{}
			for _, hd := range hs {
				if !hd.Shared {
					k := hd.Client + "\x00" + hd.Lock
					byHolder[k] = append(byHolder[k], hd)
				}
			}
		}
		from := time.Duration(-1)
		for _, hd := range byHolder[holder+"\x00"+lock] {
			if hd.From <= t && t <= hd.To {
				from = max(from, hd.From)
			}
		}
		return from
	}
	var acqs []acq
	var reqs map[string][]int // client -> req records, built on the first acquire with a token
	for i := range h {
		r := &h[i]
		if r.Kind != history.KindOp || r.Outcome == history.OutcomeUnknown {
			continue
		}
		tok, err := strconv.ParseInt(r.Result, 10, 64)
		if err != nil {
			continue
		}
		switch r.Op {
		case history.OpWrite:
			t := r.At()
			if end, ok := r.Returned(); ok {
				t = end
			}
			if r.Outcome != history.OutcomeOK {
				rep.Rejected++
				rep.Prevented++
				continue
			}
			rep.Accepted++
			holder := holderName(r)
			top, seen := highest[r.Lock]
			switch {
			case seen && tok < top.token:
				rep.StaleAccepted++
				out = append(out, Violation{Kind: StaleWrite, Lock: r.Lock, Holders: []string{holder}, From: t, To: t,
					Detail: fmt.Sprintf("accepted token %d after %d", tok, top.token), Faults: FaultsBefore(h, t, 5)})
			case seen && tok == top.token:
				if i := slices.IndexFunc(top.writers, func(w string) bool { return w != holder }); i >= 0 {
					other := top.writers[i]
					rep.StaleAccepted++
					out = append(out, Violation{Kind: StaleWrite, Lock: r.Lock, Holders: []string{other, holder}, From: t, To: t,
						Detail: fmt.Sprintf("accepted token %d from %s after %s had written with it", tok, holder, other), Faults: FaultsBefore(h, t, 5)})
				}
				if !slices.Contains(top.writers, holder) {
					top.writers = append(top.writers, holder)
					highest[r.Lock] = top
				}
			default: // the first write, or a higher token
				highest[r.Lock] = written{tok, []string{holder}}
			}
		case history.OpAcquire:
			if r.Outcome == history.OutcomeOK {
				end, _ := r.Returned()
				holder := holderName(r)
				a := acq{end, end, r.Seq, tok, holder, r.Lock, holdingStart(holder, r.Lock, end)}
				if reqs == nil {
					reqs = clientReqs(h)
				}
				reply := history.FormatReply([]any{int64(-1), tok}) // the script's "acquired" reply with the token
				ix := opReqs(h, reqs[r.Client], r, func(q *history.Record) bool {
					return q.Op == fencedAcquireReq && q.Outcome == history.OutcomeOK && q.Result == reply
				})
				if len(ix) > 0 {
					if runs := h[ix[len(ix)-1]].Applied; len(runs) > 0 {
						a.first, a.last = time.Duration(runs[0]), time.Duration(runs[len(runs)-1])
					}
				}
				acqs = append(acqs, a)
			}
		}
	}
	// Walk the acquires in the order their tokens could first have been
	// issued, each compared with the highest token issued certainly before
	// it: by an acquire whose last run (byLast) came before its first. Ties
	// go by record order, so that with one run each (or none) this is the
	// issue (or return) order.
	before := func(at time.Duration, seq int, than acq) bool {
		return cmp.Or(cmp.Compare(at, than.first), cmp.Compare(seq, than.seq)) < 0
	}
	slices.SortStableFunc(acqs, func(a, b acq) int { return cmp.Or(cmp.Compare(a.first, b.first), cmp.Compare(a.seq, b.seq)) })
	byLast := slices.Clone(acqs)
	slices.SortStableFunc(byLast, func(a, b acq) int { return cmp.Or(cmp.Compare(a.last, b.last), cmp.Compare(a.seq, b.seq)) })
	top := map[string]acq{}
	j := 0
	for _, a := range acqs {
		for ; j < len(byLast) && before(byLast[j].last, byLast[j].seq, a); j++ {
			if prev, ok := top[byLast[j].lock]; !ok || byLast[j].token > prev.token {
				top[byLast[j].lock] = byLast[j]
			}
		}
		prev, ok := top[a.lock]
		switch {
		case !ok || a.token > prev.token:
		case a.token == prev.token && a.holder == prev.holder && a.from >= 0 && a.from == prev.from:
			// A re-acquire within the holding that got the token.
		case a.token == prev.token:
			out = append(out, Violation{Kind: TokenRegression, Lock: a.lock, Holders: []string{prev.holder, a.holder}, From: a.first, To: a.first,
				Detail: fmt.Sprintf("token %d issued again, after %s got it", a.token, prev.holder), Faults: FaultsBefore(h, a.first, 5)})
		default:
			out = append(out, Violation{Kind: TokenRegression, Lock: a.lock, Holders: []string{prev.holder, a.holder}, From: a.first, To: a.first,
				Detail: fmt.Sprintf("token %d issued after %d", a.token, prev.token), Faults: FaultsBefore(h, a.first, 5)})
		}
	}
	slices.SortStableFunc(out, func(a, b Violation) int { return cmp.Compare(a.From, b.From) })
	return rep, out
}

// WaitStats sums up how long acquires took, successful or not.
type WaitStats struct {
	Count              int
	P50, P90, P99, Max time.Duration
	// LongestUnavailable is the longest span during which a lock was held
	// by nobody (by belief) while some client was waiting for it, and
	// LongestLock names the lock.
	LongestUnavailable time.Duration
	LongestLock        string
	LongestFrom        time.Duration
}

// Waits computes wait-latency percentiles over the acquire attempts that
// returned, and the longest span a lock stayed free while a client wanted
// it (from its first attempt to the return of the one that succeeded),
// which a lost unlock, a crashed holder or too many nodes down cause.
func Waits(h []history.Record, end time.Duration) WaitStats {
	var ws WaitStats
	var lat []time.Duration
	type span struct{ from, to time.Duration }
	waiting := map[string][]span{}
	var locks []string
	// A client wants a lock from the call of its first attempt after its
	// last success until the return of the attempt that succeeds: retry
	// loops that think between attempts still count as waiting.
	wantSince := map[string]time.Duration{} // client + lock -> first attempt's call
	for i := range h {
		r := &h[i]
		if crashed(r) {
			// A dead client wants nothing from its crash on.
			for _, k := range slices.Sorted(maps.Keys(wantSince)) {
				if strings.HasPrefix(k, r.Client+"\x00") {
					l := k[strings.IndexByte(k, 0)+1:]
					waiting[l] = append(waiting[l], span{wantSince[k], max(r.At(), wantSince[k])})
					delete(wantSince, k)
				}
			}
			continue
		}
		if r.Kind != history.KindOp || (r.Op != history.OpAcquire && r.Op != history.OpAcquireRead) {
			continue
		}
		if !slices.Contains(locks, r.Lock) {
			locks = append(locks, r.Lock)
		}
		k := r.Client + "\x00" + r.Lock
		if _, ok := wantSince[k]; !ok {
			wantSince[k] = r.At()
		}
		ret, ok := r.Returned()
		if !ok {
			continue
		}
		lat = append(lat, ret-r.At())
		if r.Outcome == history.OutcomeOK {
			waiting[r.Lock] = append(waiting[r.Lock], span{wantSince[k], ret})
			delete(wantSince, k)
		}
	}
	// Wants still open at the end wait until the end.
	for _, k := range slices.Sorted(maps.Keys(wantSince)) {
		l := k[strings.IndexByte(k, 0)+1:]
		waiting[l] = append(waiting[l], span{wantSince[k], end})
	}
	if len(lat) == 0 {
		return ws
	}
	slices.Sort(lat)
	pct := func(p int) time.Duration { return lat[min(len(lat)-1, len(lat)*p/100)] }
	ws.Count, ws.P50, ws.P90, ws.P99, ws.Max = len(lat), pct(50), pct(90), pct(99), lat[len(lat)-1]

	hs := Holdings(h, end)
	for _, l := range locks {
		// Walk time: a span is unavailable while someone waits and nobody
		// holds. Event points are the waits' and holdings' boundaries.
		var pts []time.Duration
		for _, s := range waiting[l] {
			pts = append(pts, s.from, s.to)
		}
		var held []span
		for _, hd := range hs {
			if hd.Lock == l {
				held = append(held, span{hd.From, hd.To})
				pts = append(pts, hd.From, hd.To)
			}
		}
		slices.Sort(pts)
		pts = slices.Compact(pts)
		in := func(ss []span, t time.Duration) bool {
			for _, s := range ss {
				if s.from <= t && t < s.to {
					return true
				}
			}
			return false
		}
		start := time.Duration(-1)
		for _, t := range pts {
			bad := in(waiting[l], t) && !in(held, t)
			switch {
			case bad && start < 0:
				start = t
			case !bad && start >= 0:
				if d := t - start; d > ws.LongestUnavailable {
					ws.LongestUnavailable, ws.LongestLock, ws.LongestFrom = d, l, start
				}
				start = -1
			}
		}
	}
	return ws
}

// LivenessViolations reports, given the longest acceptable unavailability
// (the lease plus the wait, for the algorithm under test), the spans longer
// than it: a deadlock, or a lock that stayed unobtainable.
func LivenessViolations(h []history.Record, end, bound time.Duration) []Violation {
	ws := Waits(h, end)
	if ws.LongestUnavailable <= bound {
		return nil
	}
	return []Violation{{Kind: Liveness, Lock: ws.LongestLock, From: ws.LongestFrom, To: ws.LongestFrom + ws.LongestUnavailable,
		Detail: fmt.Sprintf("free while clients waited for %v, longer than the bound %v", ws.LongestUnavailable, bound),
		Faults: FaultsBefore(h, ws.LongestFrom, 5)}}
}
