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

	"github.com/locksim/locksim/sim"
)

// FencingReport sums up the writes to fenced resources.
type FencingReport struct {
	// Accepted and Rejected count the writes the resources took and refused.
	Accepted, Rejected int
	// StaleAccepted counts accepted writes whose token was below one the
	// same resource had already accepted: data corrupted despite fencing.
	StaleAccepted int
	// Prevented counts rejected writes: each would have corrupted data
	// without fencing (a holder that lost the lock writing after the next).
	Prevented int
}

// Fencing checks the "write" op records (Lock is the resource, Result the
// token) and the fencing tokens acquires returned: an accepted write with a
// token below the highest accepted before it is a stale write; a token that
// goes backwards between successive acquires of one lock is a regression
// (for example a failover that lost the counter's last increments).
func Fencing(h []sim.Record) (FencingReport, []Violation) {
	var rep FencingReport
	var out []Violation
	highest := map[string]int64{} // resource -> highest accepted token
	type acq struct {
		end    time.Duration
		seq    int
		token  int64
		client string
		lock   string
	}
	var acqs []acq
	for i := range h {
		r := &h[i]
		if r.Kind != sim.KindOp || r.Outcome == sim.OutcomeUnknown {
			continue
		}
		tok, err := strconv.ParseInt(r.Result, 10, 64)
		if err != nil {
			continue
		}
		switch r.Op {
		case "write":
			t := r.At()
			if end, ok := r.Returned(); ok {
				t = end
			}
			if r.Outcome != sim.OutcomeOK {
				rep.Rejected++
				rep.Prevented++
				continue
			}
			rep.Accepted++
			if tok < highest[r.Lock] {
				rep.StaleAccepted++
				out = append(out, Violation{Kind: StaleWrite, Lock: r.Lock, Holders: []string{r.Client}, From: t, To: t,
					Detail: fmt.Sprintf("accepted token %d after %d", tok, highest[r.Lock]), Faults: FaultsBefore(h, t, 5)})
			}
			highest[r.Lock] = max(highest[r.Lock], tok)
		case "acquire":
			if r.Outcome == sim.OutcomeOK {
				end, _ := r.Returned()
				acqs = append(acqs, acq{end, r.Seq, tok, r.Client, r.Lock})
			}
		}
	}
	// Tokens are issued in the order the acquires took effect, which their
	// returns follow (an acquire that waited was called early and returns
	// late): compare in return order.
	slices.SortStableFunc(acqs, func(a, b acq) int { return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(a.seq, b.seq)) })
	last := map[string]acq{}
	for _, a := range acqs {
		if prev, ok := last[a.lock]; ok && a.token < prev.token {
			out = append(out, Violation{Kind: TokenRegression, Lock: a.lock, Holders: []string{prev.client, a.client}, From: a.end, To: a.end,
				Detail: fmt.Sprintf("token %d issued after %d", a.token, prev.token), Faults: FaultsBefore(h, a.end, 5)})
		}
		last[a.lock] = a
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
func Waits(h []sim.Record, end time.Duration) WaitStats {
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
		if r.Kind != sim.KindOp || (r.Op != "acquire" && r.Op != "acquire-read") {
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
		if r.Outcome == sim.OutcomeOK {
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
func LivenessViolations(h []sim.Record, end, bound time.Duration) []Violation {
	ws := Waits(h, end)
	if ws.LongestUnavailable <= bound {
		return nil
	}
	return []Violation{{Kind: Liveness, Lock: ws.LongestLock, From: ws.LongestFrom, To: ws.LongestFrom + ws.LongestUnavailable,
		Detail: fmt.Sprintf("free while clients waited for %v, longer than the bound %v", ws.LongestUnavailable, bound),
		Faults: FaultsBefore(h, ws.LongestFrom, 5)}}
}
