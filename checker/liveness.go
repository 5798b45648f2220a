// Liveness: how long clients waited for locks, over all clients (Waits) and
// per client (ClientWaits), and the violations of a bound on either.

package checker

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
)

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
// it (from its first attempt to the return of the one that succeeded, as
// wantSpans gives them), which a lost unlock, a crashed holder or too many
// nodes down cause (LongestUnavailable). A history in which no acquire
// attempt returned has no statistics: all zero.
func Waits(h []history.Record, end time.Duration) WaitStats {
	var ws WaitStats
	ix := indexRecords(h)
	lat, locks := acquireLatencies(ix)
	if len(lat) == 0 {
		return ws
	}
	slices.Sort(lat)
	pct := func(p int) time.Duration { return lat[min(len(lat)-1, len(lat)*p/100)] }
	ws.Count, ws.P50, ws.P90, ws.P99, ws.Max = len(lat), pct(50), pct(90), pct(99), lat[len(lat)-1]
	u := unavailableOf(ix, end, locks, holdings(ix, end))
	ws.LongestUnavailable, ws.LongestLock, ws.LongestFrom = u.Longest, u.Lock, u.From
	return ws
}

// Unavailability is a history's longest unavailability: the longest span
// during which a lock was held by nobody (by belief) while some client
// waited for it (Longest, zero when none), the lock and the span's start,
// as LongestUnavailable gives them.
type Unavailability struct {
	Longest time.Duration
	Lock    string
	From    time.Duration
}

// LongestUnavailable is Waits(h, end)'s LongestUnavailable, LongestLock
// and LongestFrom, without sorting the latencies for Waits' percentiles: the
// longest span during which a lock was held by nobody (by belief) while
// some client waited for it, the lock (of equally long spans, that of the
// lock attempted first) and the span's start. All are zero when no acquire
// attempt returned, as in Waits, or when no lock was ever unavailable.
func LongestUnavailable(h []history.Record, end time.Duration) (longest time.Duration, lock string, from time.Duration) {
	u := unavailability(indexRecords(h), end, nil)
	return u.Longest, u.Lock, u.From
}

// unavailability is LongestUnavailable's of ix's history, given hs, its
// holdings until end (Holdings), when the caller has them (nil: it makes
// them if it needs them).
func unavailability(ix *recordIndex, end time.Duration, hs []Holding) Unavailability {
	lat, locks := acquireLatencies(ix)
	if len(lat) == 0 {
		return Unavailability{}
	}
	if hs == nil {
		hs = holdings(ix, end)
	}
	return unavailableOf(ix, end, locks, hs)
}

// unavailableOf is LongestUnavailable given the locks attempted in ix's
// history, in the order of their first attempt, and its holdings until
// end.
func unavailableOf(ix *recordIndex, end time.Duration, locks []string, hs []Holding) Unavailability {
	waiting := map[string][]span{}
	wantSpans(ix, end, func(w ClientWait) { waiting[w.Lock] = append(waiting[w.Lock], span{w.From, w.To}) })
	held := map[string][]span{}
	for _, hd := range hs {
		held[hd.Lock] = append(held[hd.Lock], span{hd.From, hd.To})
	}
	// Locks in the order of their first attempt: of equally long spans, the
	// first lock's is reported.
	var u Unavailability
	for _, l := range locks {
		if d, start := longestUnavailable(waiting[l], held[l]); d > u.Longest {
			u = Unavailability{Longest: d, Lock: l, From: start}
		}
	}
	return u
}

// span is an interval [from, to) of world time.
type span struct{ from, to time.Duration }

// isAttempt reports whether r is an acquire attempt (exclusive or shared).
func isAttempt(r *history.Record) bool {
	return r.Kind == history.KindOp && (r.Op == history.OpAcquire || r.Op == history.OpAcquireRead)
}

// acquireLatencies is how long each acquire attempt of ix's history that
// returned took, in record order, and the locks attempted, in the order of
// their first attempt.
func acquireLatencies(ix *recordIndex) ([]time.Duration, []string) {
	h := ix.h
	var lat []time.Duration
	var locks []string
	seen := map[string]bool{} // locks' membership: a history of many locks made Contains quadratic
	for _, i := range ix.ops {
		r := &h[i]
		if !isAttempt(r) {
			continue
		}
		if !seen[r.Lock] {
			seen[r.Lock] = true
			locks = append(locks, r.Lock)
		}
		if ret, ok := r.Returned(); ok {
			lat = append(lat, ret-r.At())
		}
	}
	return lat, locks
}

// longestUnavailable walks one lock's time: it is unavailable while someone
// waits (waiting) and nobody holds it (held). The event points are the
// spans' boundaries, between which nothing changes. It returns the longest
// unavailable span's length and start (the first of equally long ones).
//
// It sweeps the boundaries once in time order, counting the spans under
// way: at a point t, after every boundary at t, a non-empty span [from,
// to) is under way when it started at or before t and has not ended by t.
// An empty or inverted span counts for nothing but is still a point, as
// every boundary is. (Two binary searches per point in sorted starts and
// ends, the way before, cost three sorts instead of one.)
func longestUnavailable(waiting, held []span) (longest, from time.Duration) {
	type boundary struct {
		t          time.Duration
		wait, hold int // how the spans under way change at t
	}
	bs := make([]boundary, 0, 2*(len(waiting)+len(held)))
	for _, s := range waiting {
		d := 0
		if s.from < s.to {
			d = 1
		}
		bs = append(bs, boundary{s.from, d, 0}, boundary{s.to, -d, 0})
	}
	for _, s := range held {
		d := 0
		if s.from < s.to {
			d = 1
		}
		bs = append(bs, boundary{s.from, 0, d}, boundary{s.to, 0, -d})
	}
	slices.SortFunc(bs, func(a, b boundary) int { return cmp.Compare(a.t, b.t) })
	start := time.Duration(-1)
	waits, holds := 0, 0
	for i := 0; i < len(bs); {
		t := bs[i].t
		for ; i < len(bs) && bs[i].t == t; i++ {
			waits += bs[i].wait
			holds += bs[i].hold
		}
		bad := waits > 0 && holds == 0
		switch {
		case bad && start < 0:
			start = t
		case !bad && start >= 0:
			if d := t - start; d > longest {
				longest, from = d, start
			}
			start = -1
		}
	}
	return longest, from
}

// wantSpans calls emit with every span during which a client wanted a
// lock, in the order the spans ended (its callers keep a part of each: a
// list of them all was garbage at once): a client wants a lock from the
// call of its first attempt after its last success (or after the start)
// until the return of the attempt that succeeds (Acquired), its crash
// (Crashed: a dead client wants nothing), or end. Retry loops that think
// between attempts still count as waiting: the client wanted the lock all
// along. An attempt whose
// outcome stayed unknown does not end a want: the client never learned it
// held the lock. Waits and ClientWaits both measure these spans, so that
// the two agree on what a wait is.
func wantSpans(ix *recordIndex, end time.Duration, emit func(ClientWait)) {
	h := ix.h
	// A client's wants are one per lock, whichever owner asks; with
	// owners under way at once on a lock (ix.sharedLock), one per owner:
	// there one owner's grant ends no other owner's wait.
	type want struct{ client, lock, owner string }
	open := map[want]ClientWait{} // the open wants
	// closeAll ends, at at, the open wants of client (of every client when
	// all is set), by client, then lock.
	closeAll := func(client string, all bool, at time.Duration, crashed bool) {
		keys := slices.SortedFunc(maps.Keys(open), func(a, b want) int {
			return cmp.Or(strings.Compare(a.client, b.client), strings.Compare(a.lock, b.lock), strings.Compare(a.owner, b.owner))
		})
		for _, k := range keys {
			if w := open[k]; all || w.Client == client {
				w.To, w.Crashed = max(at, w.From), crashed
				emit(w)
				delete(open, k)
			}
		}
	}
	for _, i := range ix.opsFaults {
		r := &h[i]
		if crashed(r) {
			closeAll(r.Client, false, r.At(), true)
			continue
		}
		if !isAttempt(r) {
			continue
		}
		k := want{client: r.Client, lock: r.Lock}
		if len(r.Args) > 0 && ix.sharedLock(r.Client, r.Lock) {
			k.owner = r.Args[0]
		}
		w, wanted := open[k]
		if !wanted {
			w = ClientWait{Client: r.Client, Lock: r.Lock, Owner: k.owner, From: r.At()}
		}
		switch ret, ok := r.Returned(); {
		case ok && r.Outcome == history.OutcomeOK:
			w.To, w.Acquired = ret, true
			emit(w)
			if wanted {
				delete(open, k)
			}
		case !wanted:
			open[k] = w
		}
	}
	closeAll("", true, end, false) // wants still open at the end wait until the end
}

// LivenessViolations reports, given the longest acceptable unavailability
// (the lease plus the wait, for the algorithm under test), the spans longer
// than it: a deadlock, or a lock that stayed unobtainable.
func LivenessViolations(h []history.Record, end, bound time.Duration) []Violation {
	return livenessViolations(h, unavailability(indexRecords(h), end, nil), bound)
}

// livenessViolations is LivenessViolations given h's longest
// unavailability u.
func livenessViolations(h []history.Record, u Unavailability, bound time.Duration) []Violation {
	if u.Longest <= bound {
		return nil
	}
	return []Violation{{Kind: Liveness, Lock: u.Lock, From: u.From, To: u.From + u.Longest,
		Detail: fmt.Sprintf("free while clients waited for %v, longer than the bound %v", u.Longest, bound),
		Faults: FaultsBefore(h, u.From, 5)}}
}

// ClientWait is one client's longest wait for a lock: from the call of its
// first acquire attempt after its last successful one (or after the start)
// until the return of the attempt that succeeded, or until the end of the
// run (or the client's crash) when none did. Retry loops that think
// between attempts still count as waiting, as in Waits: the client wanted
// the lock all along.
type ClientWait struct {
	// Client waited for Lock.
	Client, Lock string
	// Owner is the owner that waited, where the client's owners were under
	// way on Lock at once (each waits on its own); empty where they took
	// turns, or the lock has no owners (the client's wait spans them all).
	Owner string
	// From is the call of the wait's first attempt; To the return of the
	// attempt that succeeded, the end of the run, or the client's crash.
	From, To time.Duration
	// Acquired is false when the wait lasted until the end of the run or
	// the crash.
	Acquired bool
	// Crashed is set when the wait ended with the client's crash: a dead
	// client waits for nothing.
	Crashed bool
}

// Duration is how long the wait lasted.
func (w ClientWait) Duration() time.Duration { return w.To - w.From }

func (w ClientWait) String() string {
	how := fmt.Sprintf("until its acquire returned at %v", w.To)
	switch {
	case w.Crashed:
		how = fmt.Sprintf("until it crashed at %v without acquiring it", w.To)
	case !w.Acquired:
		how = fmt.Sprintf("until the end at %v without acquiring it", w.To)
	}
	who := w.Client
	if w.Owner != "" {
		who += "/" + w.Owner
	}
	return fmt.Sprintf("%s waited %v for %s, from its first attempt at %v %s", who, w.Duration(), w.Lock, w.From, how)
}

// ClientWaits returns the longest wait of every client that attempted an
// acquire ("acquire" or "acquire-read" op records) in h, a history that ran
// until end, sorted by client name. Of equal waits the earliest is kept.
// An attempt whose outcome stayed unknown does not end a wait: the client
// never learned it held the lock.
func ClientWaits(h []history.Record, end time.Duration) []ClientWait {
	return clientWaits(indexRecords(h), end)
}

// clientWaits is ClientWaits of ix's history.
func clientWaits(ix *recordIndex, end time.Duration) []ClientWait {
	longest := map[string]ClientWait{}
	wantSpans(ix, end, func(w ClientWait) {
		if cur, ok := longest[w.Client]; !ok || w.Duration() > cur.Duration() {
			longest[w.Client] = w
		}
	})
	out := slices.Collect(maps.Values(longest))
	slices.SortFunc(out, func(a, b ClientWait) int { return cmp.Compare(a.Client, b.Client) })
	return out
}

// ClientLivenessViolations reports every client of bounds (client name ->
// the longest it may wait) whose longest wait (ClientWaits) exceeded its
// bound, in client order: a liveness violation naming the client, for
// stories in which one client's wait is the point (a waiter behind a
// crashed holder needs the lease to run out, not more). A client that
// never attempted an acquire waited for nothing and is not reported, nor
// is one whose bound is not positive (Config.ClientWaits: measured only).
func ClientLivenessViolations(h []history.Record, end time.Duration, bounds map[string]time.Duration) []Violation {
	return clientLiveness(h, ClientWaits(h, end), bounds)
}

// clientLiveness is ClientLivenessViolations of waits, h's ClientWaits.
func clientLiveness(h []history.Record, waits []ClientWait, bounds map[string]time.Duration) []Violation {
	var out []Violation
	causes := lazyCauses{h: h}
	for _, w := range waits {
		b, ok := bounds[w.Client]
		if !ok || b <= 0 || w.Duration() <= b {
			continue
		}
		out = append(out, Violation{Kind: Liveness, Lock: w.Lock, Holders: []string{w.Client}, From: w.From, To: w.To,
			Detail: fmt.Sprintf("%s, longer than its bound %v", w, b), Faults: causes.before(w.To)})
	}
	return out
}
