package checker

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
)

// The oracles' indexed answers (the causes index, Master's search, the
// reentrancy oracle's bounds, the silent-loss oracle's spans) against the
// passes they replaced, kept here as the reference: the same answers, on
// random histories shaped to break them (equal times, operations in
// flight over many changes, unknown outcomes, failovers back and forth,
// records out of time order).

// refShared reports whether two of client's owners had an acquire or a
// release on lock under way at once (one called while the other's had
// not ended: returned, or given up when its outcome stayed unknown).
func refShared(h []history.Record, client, lock string) bool {
	ends := func(r *history.Record) (int64, bool) {
		switch {
		case r.End != nil:
			return *r.End, true
		case r.Answered != nil:
			return *r.Answered, true
		}
		return 0, false
	}
	isOp := func(r *history.Record) bool {
		return r.Kind == history.KindOp && r.Client == client && r.Lock == lock && len(r.Args) > 0 &&
			(r.Op == history.OpAcquire || r.Op == history.OpRelease || r.Op == history.OpAcquireRead || r.Op == history.OpReleaseRead)
	}
	for i := range h {
		for j := range h {
			a, b := &h[i], &h[j]
			if !isOp(a) || !isOp(b) || a.Args[0] == b.Args[0] || b.T < a.T {
				continue
			}
			if end, ok := ends(a); !ok || end > b.T {
				return true
			}
		}
	}
	return false
}

// refFaultsBefore is FaultsBefore as one pass over h.
func refFaultsBefore(h []history.Record, t time.Duration, max int) []history.Record {
	var faults []int
	stage := map[int]bool{}
	lastWait := map[string]int{}
	for i := range h {
		r := &h[i]
		if r.At() > t {
			continue
		}
		switch {
		case r.Kind == history.KindFault:
			faults = append(faults, i)
		case (r.Kind == history.KindNode || r.Kind == history.KindClient) && r.Detail != "":
			stage[i] = true
		case r.Kind == history.KindReq && r.Op == history.ReqWait && r.Outcome == history.OutcomeOK:
			if k, n, ok := history.ParseWaitDetail(r.Detail); ok && k < n {
				lastWait[r.Client] = i
			}
		}
	}
	if len(faults) > max {
		faults = faults[len(faults)-max:]
	}
	for _, i := range faults {
		stage[i] = true
	}
	for _, i := range lastWait {
		stage[i] = true
	}
	var idx []int
	for i := range stage {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var out []history.Record
	for _, i := range idx {
		out = append(out, h[i])
	}
	return out
}

// refMaster is Master as a scan of the group's masters.
func (tr *Truth) refMaster(group string, t time.Duration) string {
	m := group
	for _, s := range tr.masters[group] {
		if s.from <= t {
			m = s.node
		}
	}
	return m
}

// refReentrancy is ReentrancyViolations as it compared every count at
// every check time, each question a pass over the owner's operations.
func (tr *Truth) refReentrancy(h []history.Record) []Violation {
	order, ops := countedOps(indexRecords(h))
	var out []Violation
	for _, k := range order {
		groups := tr.Groups(k.lock)
		if len(groups) != 1 {
			continue
		}
		group, rops := groups[0], ops[k]
		// A step: +1, -1, a reset to 0, or an uncertain -1 (a release
		// that ended in an error) that lowers only the least count.
		type refStep struct {
			t         time.Duration
			delta     int
			reset, or bool
			givenUp   bool // -1, not below 0 (a release of unknown outcome given up)
			pin       bool // the master agreed with a count of a range: to
			to        int
			unpin     bool // the master showed no hold: back to the owner's own count
		}
		// returned is when r ended: its return, or, for an operation of
		// unknown outcome, the owner's next call or its requests' last
		// run after it, whichever is later (none when the owner called
		// nothing after it).
		returned := func(r *history.Record) (time.Duration, bool) {
			if end, ok := r.Returned(); ok || r.Outcome != history.OutcomeUnknown {
				if !ok || r.Outcome == history.OutcomeOK {
					return end, ok
				}
				// A returned operation not answered ok ends at the last run of a request
				// it sent (its client's, on its lock, from its call to its
				// return, naming its owner; a renewal is none), if later
				// than its return.
				field := r.Client + ":" + r.Args[0]
				for i := range h {
					q := &h[i]
					in := q.T >= r.T && (q.T < *r.End || (q.T == *r.End && *r.End == r.T))
					if q.Kind == history.KindReq && q.Client == r.Client && len(q.Args) > 0 && q.Args[0] == r.Lock && in &&
						!renewals[q.Op] &&
						(slices.Contains(q.Args[1:], field) || slices.Contains(q.Args[1:], field+":write")) {
						for _, at := range q.Applied {
							end = max(end, time.Duration(at))
						}
					}
				}
				return end, ok
			}
			next, ok := time.Duration(0), false
			if r.Answered != nil {
				next, ok = time.Duration(*r.Answered), true
			} else {
				for _, o := range rops {
					if o.At() > r.At() && (!ok || o.At() < next) {
						next, ok = o.At(), true
					}
				}
			}
			end := next
			field := r.Client + ":" + r.Args[0]
			for i := range h {
				q := &h[i]
				before := time.Duration(q.T) < next || (r.Answered != nil && time.Duration(q.T) == next)
				if q.Kind == history.KindReq && q.Client == r.Client && len(q.Args) > 0 && q.Args[0] == r.Lock && q.T >= r.T && before &&
					!renewals[q.Op] &&
					(!refShared(h, r.Client, r.Lock) || slices.Contains(q.Args[1:], field) || slices.Contains(q.Args[1:], field+":write")) {
					if history.InFlightAtEnd(q.Detail) {
						return 0, false
					}
					for _, at := range q.Applied {
						end = max(end, time.Duration(at))
					}
				}
			}
			return end, ok
		}
		var steps []refStep
		for _, r := range rops {
			end, done := r.Returned()
			acquire := r.Op == history.OpAcquire || r.Op == history.OpAcquireRead
			switch {
			case acquire && r.Outcome == history.OutcomeOK && done:
				steps = append(steps, refStep{t: end, delta: 1})
			case !acquire && r.Outcome == history.OutcomeOK:
				steps = append(steps, refStep{t: r.At(), delta: -1})
			case !acquire && r.Outcome == history.OutcomeFail:
				steps = append(steps, refStep{t: r.At(), reset: true})
			case !acquire && r.Outcome == history.OutcomeError:
				steps = append(steps, refStep{t: r.At(), delta: -1, or: true})
			case !acquire && r.Outcome == history.OutcomeUnknown:
				// Given up (it ends): its owner's hold is given up, and
				// the master's count says whether it ran; never given up,
				// it may yet run.
				_, ended := returned(r)
				steps = append(steps, refStep{t: r.At(), delta: -1, or: !ended, givenUp: ended})
			}
		}
		slices.SortStableFunc(steps, func(a, b refStep) int { return cmp.Compare(a.t, b.t) })
		// bel is the owner's own count: the steps without pins, an errored
		// release given up.
		unmatched := func(t time.Duration) (int, int) {
			lo, hi, bel := 0, 0, 0
			for _, s := range steps {
				switch {
				case s.t > t:
					return lo, hi
				case s.reset:
					lo, hi, bel = 0, 0, 0
				case s.unpin:
					lo, hi = bel, bel
				case s.pin:
					lo, hi = s.to, s.to
				case s.or:
					if lo > 0 {
						lo--
					}
					if bel > 0 {
						bel--
					}
				case s.givenUp:
					lo, hi, bel = max(lo-1, 0), max(hi-1, 0), max(bel-1, 0)
				default:
					lo, hi, bel = lo+s.delta, hi+s.delta, bel+s.delta
				}
			}
			return lo, hi
		}
		// ownLeast is the least count by the owner's operations alone, no
		// check's pin in it.
		ownLeast := func(t time.Duration) int {
			lo := 0
			for _, s := range steps {
				switch {
				case s.t > t:
					return lo
				case s.pin || s.unpin:
				case s.reset:
					lo = 0
				case s.or:
					if lo > 0 {
						lo--
					}
				case s.givenUp:
					lo = max(lo-1, 0)
				default:
					lo += s.delta
				}
			}
			return lo
		}
		// Wherever the master shows no hold for the owner (at any change
		// of the key or of its master, or step of the owner's), what the
		// count kept beyond the owner's own is gone: an unpin there.
		var zeros []time.Duration
		zeros = append(zeros, tr.keyTimes(k.lock)...)
		zeros = append(zeros, tr.failAt[group]...)
		for _, st := range steps {
			zeros = append(zeros, st.t)
		}
		slices.Sort(zeros)
		none := func(t time.Duration) bool { // after every change at t, or after one of them
			m := tr.refMaster(group, t)
			if holdCount(tr.State(m, k.lock, t), k.field) == 0 {
				return true
			}
			for i := range h {
				if r := &h[i]; r.Kind == history.KindTruth && r.Node == m && r.Key == k.lock && r.At() == t && holdCount(r, k.field) == 0 {
					return true
				}
			}
			return false
		}
		for _, t := range slices.Compact(zeros) {
			if none(t) {
				at := len(steps)
				for i, s := range steps {
					if s.t > t {
						at = i
						break
					}
				}
				steps = slices.Insert(steps, at, refStep{t: t, unpin: true})
			}
		}
		busyBut := func(t time.Duration, self *history.Record) bool {
			for _, r := range rops {
				end, done := returned(r)
				if r != self && r.At() <= t && (!done || end >= t) {
					return true
				}
			}
			return false
		}
		endingAt := func(t time.Duration) *history.Record {
			for _, r := range rops {
				if _, ok := r.Returned(); ok && r.Outcome != history.OutcomeUnknown {
					if end, _ := returned(r); end == t {
						return r
					}
				}
			}
			return nil
		}
		var checks []time.Duration
		checks = append(checks, tr.keyTimes(k.lock)...)
		checks = append(checks, tr.failAt[group]...)
		for _, r := range rops {
			if _, ok := r.Returned(); ok && r.Outcome != history.OutcomeUnknown {
				if end, _ := returned(r); !busyBut(end, r) {
					checks = append(checks, end)
				}
			}
		}
		slices.Sort(checks)
		reported := "" // the class of the episode under way: "below", "above" or none
		agreed := time.Duration(math.MinInt64)
		for _, t := range slices.Compact(checks) {
			if busyBut(t, endingAt(t)) {
				continue
			}
			m := tr.refMaster(group, t)
			got := holdCount(tr.State(m, k.lock, t), k.field)
			lo, hi := unmatched(t)
			if (lo <= got && got <= hi) || (got == 0 && lo <= 0) {
				reported = ""
				agreed = t
				if lo < hi && lo <= got && got <= hi {
					at := len(steps)
					for i, s := range steps {
						if s.t > t {
							at = i
							break
						}
					}
					steps = slices.Insert(steps, at, refStep{t: t, pin: true, to: got})
				}
				continue
			}
			class := "above"
			if hi > 0 && got < lo {
				class = "below"
			}
			if got == 0 || reported == class {
				continue
			}
			reported = class
			if class == "below" {
				out = append(out, Violation{Kind: Reentrancy, Lock: k.lock, Holders: []string{k.holder}, From: t, To: t,
					Detail: fmt.Sprintf("the master shows %s for %s, which has %s: its next release frees the lock while it still holds it",
						counted(got, "hold"), k.holder, unmatchedAcquires(lo, hi)),
					Faults: refFaultsBefore(tr.recs, t, 5)})
				continue
			}
			if hi > 0 {
				// The cause: the latest failover, crash or restart since
				// the counts agreed at which the master's count rose.
				rose := ""
				// In time order, latest first (a history's records may be
				// out of it).
				byTime := make([]*history.Record, 0, len(tr.recs))
				for i := range tr.recs {
					byTime = append(byTime, &tr.recs[i])
				}
				slices.SortStableFunc(byTime, func(a, b *history.Record) int { return cmp.Compare(a.T, b.T) })
				for i := len(byTime) - 1; i >= 0 && rose == ""; i-- {
					f := byTime[i]
					u := f.At()
					if u > t || u <= agreed || u <= 0 || !refFaultOf(h, f, group) {
						continue
					}
					before := holdCount(tr.State(tr.refMaster(group, u-1), k.lock, u-1), k.field)
					now := holdCount(tr.State(tr.refMaster(group, u), k.lock, u), k.field)
					if now > before {
						rose = fmt.Sprintf("; the master's count rose from %d to %d at %v%s", before, now, u, refBroughtBack(tr, group, tr.refMaster(group, u), u))
					}
				}
				out = append(out, Violation{Kind: LeakedHold, Lock: k.lock, Holders: []string{k.holder}, From: t, To: t,
					Detail: fmt.Sprintf("the master shows %s for %s, which has %s%s: unless a loss takes it back, its last release will leave a hold, the lock held by nobody until its lease ends",
						counted(got, "hold"), k.holder, unmatchedAcquires(lo, hi), rose),
					Faults: refFaultsBefore(tr.recs, t, 5)})
				continue
			}
			// An acquire of the owner's not answered ok, under way when
			// the master's count rose at a change that no failover,
			// crash or restart made, took a hold the owner does not count.
			uncounted := false
			for _, r := range rops {
				acquire := r.Op == history.OpAcquire || r.Op == history.OpAcquireRead
				if !acquire || r.Outcome == history.OutcomeOK {
					continue
				}
				to := time.Duration(math.MaxInt64)
				if end, ok := returned(r); ok {
					to = end
				}
				for i := range h {
					c := &h[i]
					u := c.At()
					if c.Kind != history.KindTruth || c.Key != k.lock || u <= agreed || u > t || u < r.At() || u > to {
						continue
					}
					fault := false
					for j := range h {
						if f := &h[j]; f.At() == u && refFaultOf(h, f, group) {
							fault = true
						}
					}
					mu := tr.refMaster(group, u)
					if !fault && mu == tr.refMaster(group, u-1) && holdCount(tr.State(mu, k.lock, u), k.field) > holdCount(tr.State(mu, k.lock, u-1), k.field) {
						uncounted = true
					}
				}
			}
			if uncounted {
				out = append(out, Violation{Kind: LeakedHold, Lock: k.lock, Holders: []string{k.holder}, From: t, To: t,
					Detail: fmt.Sprintf("the master shows %s for %s, which has no unmatched acquire: one of its acquires took the lock although not answered ok; nobody holds it, and the others wait for its lease to end, or for as long as %s keeps re-acquiring it",
						counted(got, "hold"), k.holder, k.holder),
					Faults: refFaultsBefore(tr.recs, t, 5)})
				continue
			}
			back := refBroughtBack(tr, group, m, t)
			out = append(out, Violation{Kind: Resurrected, Lock: k.lock, Holders: []string{k.holder}, From: t, To: t,
				Detail: fmt.Sprintf("the master %s shows %s for %s, which holds nothing (its releases ended)%s: nobody holds the lock, and every other client waits for its TTL",
					m, counted(got, "hold"), k.holder, back),
				Faults: refFaultsBefore(tr.recs, t, 5)})
		}
		for _, r := range rops {
			release := r.Op == history.OpRelease || r.Op == history.OpReleaseRead
			if !release || r.Outcome != history.OutcomeOK || r.Result != "1" {
				continue
			}
			if before := ownLeast(r.At() - 1); before > 1 {
				out = append(out, Violation{Kind: Reentrancy, Lock: k.lock, Holders: []string{k.holder}, From: r.At(), To: r.At(),
					Detail: fmt.Sprintf("a release by %s removed the lock while it held %d levels", k.holder, before),
					Faults: refFaultsBefore(tr.recs, r.At(), 5)})
			}
		}
	}
	return out
}

// refFaultOf reports whether f is a fault of group's: a failover of
// group, or a crash or restart of a node that serves or served it (its
// own group by its node record, or its name without one; or a group it
// was made master of). Another group's fault changes none of group's
// counts, even at the same instant.
func refFaultOf(h []history.Record, f *history.Record, group string) bool {
	if f.Kind != history.KindFault {
		return false
	}
	switch f.Op {
	case history.FaultFailover:
		return f.Node == group && f.Value != ""
	case history.FaultCrash, history.FaultRestart:
	default:
		return false
	}
	if f.Node == "" {
		return false
	}
	own := f.Node
	for i := range h {
		r := &h[i]
		switch {
		case r.Kind == history.KindNode && r.Node == f.Node:
			own = r.Value
			if r.Op == history.RoleMaster && r.Value == group {
				return true
			}
		case r.Kind == history.KindFault && r.Op == history.FaultFailover && r.Node == group && r.Value == f.Node:
			return true
		}
	}
	return own == group
}

// refDownSince is downSince as a scan of the history's crashes and
// restarts of node, in time order (history order among equal times).
func (tr *Truth) refDownSince(node string, t time.Duration) (time.Duration, bool) {
	var cs []downChange
	for _, r := range tr.recs {
		if r.Kind == history.KindFault && r.Node == node && (r.Op == history.FaultCrash || r.Op == history.FaultRestart) {
			cs = append(cs, downChange{r.At(), r.Op == history.FaultCrash})
		}
	}
	slices.SortStableFunc(cs, func(a, b downChange) int { return cmp.Compare(a.t, b.t) })
	since, down := time.Duration(0), false
	for _, c := range cs {
		if c.t <= t {
			since, down = c.t, c.down
		}
	}
	if !down {
		return 0, false
	}
	return since, true
}

// refSilentLosses is SilentLosses scanning every change of the key, every
// failover and every crash and restart of any node for each holding, and
// asking refMaster and refDownSince (the spans, their kinds and texts are
// the oracle's own lossSpans and lossWith).
func (tr *Truth) refSilentLosses(hs []Holding) []Violation {
	var out []Violation
	for _, h := range hs {
		groups := tr.Groups(h.Lock)
		if len(groups) == 0 || h.To <= h.From {
			continue
		}
		times := []time.Duration{h.From}
		for _, t := range tr.keyTimes(h.Lock) {
			if t > h.From && t < h.To {
				times = append(times, t)
			}
		}
		for _, g := range groups {
			for _, t := range tr.failAt[g] {
				if t > h.From && t < h.To {
					times = append(times, t)
				}
			}
		}
		for _, r := range tr.recs {
			if r.Kind == history.KindFault && (r.Op == history.FaultCrash || r.Op == history.FaultRestart) && r.At() > h.From && r.At() < h.To {
				times = append(times, r.At())
			}
		}
		slices.Sort(times)
		at := func(t time.Duration) loss { return tr.lossWith(h, groups, t, tr.refMaster, tr.refDownSince) }
		out = append(out, tr.lossSpans(h, groups, slices.Compact(times), at)...)
	}
	return out
}

// oracleRandHistory is a random history of owners on one lock kept in a
// hash on m1 (replica r1; failovers back and forth, some out of time
// order), with faults, partly acknowledged WAITs and drifting nodes: times
// on a coarse grid, so that calls, returns, changes and failovers often
// coincide.
func oracleRandHistory(r *rand.Rand, n int) []history.Record { return oracleRandHistoryIn(r, n, 1) }

// oracleRandHistoryIn is oracleRandHistory on groups groups, 1 or 2 (m2,
// replica r2, a group of its own): with two, the failovers, crashes and
// restarts of both fall on the one grid, so that the other group's often
// coincide with the lock's changes, and the lock's key is on both groups
// in half the histories and on m1's alone in the others (a lock on two is
// one the reentrancy oracle does not compare). With one it draws what
// oracleRandHistory always drew.
func oracleRandHistoryIn(r *rand.Rand, n, groups int) []history.Record {
	h := []history.Record{
		{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		{Kind: history.KindNode, Node: "r1", Op: history.RoleReplica, Value: "m1", Detail: "drift=+1000ppm"},
	}
	nodes, keyNodes := []string{"m1", "r1"}, []string{"m1", "r1"}
	if groups == 2 {
		h = append(h,
			history.Record{Kind: history.KindNode, Node: "m2", Op: history.RoleMaster, Value: "m2"},
			history.Record{Kind: history.KindNode, Node: "r2", Op: history.RoleReplica, Value: "m2"})
		nodes = append(nodes, "m2", "r2")
		if r.IntN(2) == 0 {
			keyNodes = nodes
		}
	}
	owners := []struct{ client, owner string }{{"c1", "a"}, {"c1", "b"}, {"c2", "a"}, {"c3", "a"}}
	fields := []string{"c1:a", "c1:b", "c2:a", "c3:a", "c1:a:write", "c2:a:write"}
	ops := []string{history.OpAcquire, history.OpRelease, history.OpAcquireRead, history.OpReleaseRead}
	master := map[string]string{"m1": "m1", "m2": "m2"}
	other := map[string]string{"m1": "r1", "r1": "m1", "m2": "r2", "r2": "m2"}
	grid := func() time.Duration { return time.Duration(r.IntN(60)) * time.Millisecond }
	for range n {
		t := grid()
		switch x := r.IntN(20); {
		case x < 9:
			o := owners[r.IntN(len(owners))]
			rec := history.Record{Kind: history.KindOp, T: int64(t), Client: o.client, Lock: "lk", Op: ops[r.IntN(len(ops))], Args: []string{o.owner}}
			switch r.IntN(6) {
			case 0:
				rec.Outcome = history.OutcomeUnknown
			case 1:
				rec.Outcome = history.OutcomeFail
			case 2:
				rec.Outcome = history.OutcomeError // a release's count uncertain
			default:
				rec.Outcome = history.OutcomeOK
				rec.Result = []string{"", "0", "1"}[r.IntN(3)]
			}
			if rec.Outcome != history.OutcomeUnknown || r.IntN(2) == 0 {
				end := int64(t + time.Duration(r.IntN(4))*5*time.Millisecond)
				rec.End = &end
			} else if r.IntN(2) == 0 {
				// Given up by its caller, its outcome unknown.
				answered := int64(t + time.Duration(r.IntN(4))*5*time.Millisecond)
				rec.Answered = &answered
			}
			h = append(h, rec)
			if r.IntN(2) == 0 {
				// Its request (or, naming another field, another owner's
				// of the client), run at some of a few instants, perhaps
				// long after the op.
				field := o.client + ":" + o.owner
				if r.IntN(4) == 0 {
					field = fields[r.IntN(len(fields))]
				}
				q := history.Record{Kind: history.KindReq, T: int64(t + time.Duration(r.IntN(2))*time.Millisecond), Client: o.client, Node: "m1",
					Op: "eval:lock", Args: []string{"lk", field}, Outcome: history.OutcomeUnknown}
				for range r.IntN(3) {
					q.Applied = append(q.Applied, q.T+int64(time.Duration(r.IntN(30))*time.Millisecond))
				}
				if len(q.Applied) == 0 && q.T/int64(time.Millisecond)%3 == 0 {
					// Still on its way at the end (picked without a draw of
					// r, so that the histories are those drawn without it).
					q.Detail = history.InFlightDetail("")
				}
				h = append(h, q)
			}
		case x < 16:
			var fs map[string]string
			if r.IntN(5) > 0 {
				fs = map[string]string{}
				for _, f := range fields {
					if r.IntN(3) == 0 {
						fs[f] = strconv.Itoa(1 + r.IntN(3))
					}
				}
			}
			node := keyNodes[r.IntN(len(keyNodes))]
			h = append(h, history.Record{Kind: history.KindTruth, T: int64(t), Node: node, Key: "lk", Fields: fs, Gone: fs == nil})
		case x < 18:
			g := "m1"
			if groups == 2 {
				g = []string{"m1", "m2"}[r.IntN(2)]
			}
			to := other[master[g]]
			h = append(h, history.Record{Kind: history.KindFault, T: int64(t), Op: history.FaultFailover, Node: g, Value: to})
			master[g] = to
		case x < 19:
			// A crash or a restart of either node, in any order: a node
			// down when it is promoted, or restarted while up.
			op := []string{history.FaultCrash, history.FaultRestart}[r.IntN(2)]
			h = append(h, history.Record{Kind: history.KindFault, T: int64(t), Op: op, Node: nodes[r.IntN(len(nodes))]})
		default:
			h = append(h, history.Record{Kind: history.KindReq, T: int64(t), Client: owners[r.IntN(len(owners))].client,
				Op: history.ReqWait, Node: "m1", Outcome: history.OutcomeOK, Detail: history.WaitDetail(int64(r.IntN(2)), 1)})
		}
	}
	if r.IntN(2) == 0 {
		// Mostly in time order, as histories are, with a few records out.
		slices.SortStableFunc(h[2*groups:], func(a, b history.Record) int { return cmp.Compare(a.T, b.T) })
	}
	for i := range h {
		h[i].Seq = i
	}
	return h
}

// TestOraclesIndexedAgreeWithPasses: on 400 random histories, the
// reentrancy (and resurrected-lock) oracle, the silent-loss oracle (with
// its spans held by down nodes),
// Master and FaultsBefore give exactly what the passes they replaced gave,
// and the histories make each oracle find something often enough to mean
// it. Then on 400 histories of two groups (oracleRandHistoryIn), the same
// but for FaultsBefore, which no group changes: a fault of the other
// group at the instant the lock's count rises is none of the lock's
// (refFaultOf), and a lock on both groups is compared by neither.
func TestOraclesIndexedAgreeWithPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 1))
	for _, groups := range []int{1, 2} {
		var reent, silent, down, coincide int
		for i := range 400 {
			h := oracleRandHistoryIn(r, 20+r.IntN(60), groups)
			tr := NewTruth(h)
			want, got := tr.refReentrancy(h), tr.ReentrancyViolations(h)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d groups, history %d: reentrancy\n got %v\nwant %v\n%v", groups, i, got, want, h)
			}
			reent += len(want)
			if groups == 2 && len(tr.groups("lk")) == 1 && slices.ContainsFunc(tr.faultInstants("m2"), func(u time.Duration) bool {
				_, ok := slices.BinarySearch(tr.keyTimes("lk"), u)
				return ok
			}) {
				coincide++
			}
			hs := Holdings(h, 70*time.Millisecond)
			want, got = tr.refSilentLosses(hs), tr.SilentLosses(hs)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d groups, history %d: silent losses\n got %v\nwant %v\n%v", groups, i, got, want, h)
			}
			for _, x := range want {
				if x.Kind == QuorumHeldByDown {
					down++
				} else {
					silent++
				}
			}
			for at := time.Duration(-1); at < 65*time.Millisecond; at += time.Millisecond {
				for _, g := range []string{"m1", "m2"}[:groups] {
					if a, b := tr.Master(g, at), tr.refMaster(g, at); a != b {
						t.Fatalf("%d groups, history %d: Master(%s) at %v is %s, the scan's %s", groups, i, g, at, a, b)
					}
				}
				if groups > 1 {
					continue
				}
				for _, max := range []int{0, 1, 5} {
					if a, b := newCauses(h).before(at, max), refFaultsBefore(h, at, max); !reflect.DeepEqual(a, b) {
						t.Fatalf("history %d: FaultsBefore(%v, %d)\n got %v\nwant %v", i, at, max, a, b)
					}
				}
			}
		}
		t.Logf("%d groups: %d reentrancy or resurrected violations, %d silent losses, %d held by down nodes, %d histories with the other group's fault at a change of the lock",
			groups, reent, silent, down, coincide)
		if reent < 200 || silent < 200 || down < 50 || (groups == 2 && coincide < 50) {
			t.Fatalf("%d groups: too few to compare: %d reentrancy, %d silent losses, %d held by down nodes, %d coinciding", groups, reent, silent, down, coincide)
		}
	}
}

// refLongestUnavailable is longestUnavailable asking, at each point, every
// span.
func refLongestUnavailable(waiting, held []span) (longest, from time.Duration) {
	in := func(ss []span, t time.Duration) bool {
		for _, s := range ss {
			if s.from <= t && t < s.to {
				return true
			}
		}
		return false
	}
	var pts []time.Duration
	for _, s := range slices.Concat(waiting, held) {
		pts = append(pts, s.from, s.to)
	}
	slices.Sort(pts)
	pts = slices.Compact(pts)
	start := time.Duration(-1)
	for _, t := range pts {
		bad := in(waiting, t) && !in(held, t)
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

// TestLongestUnavailableAgreesWithPass: on 2,000 random sets of spans
// (empty and inverted ones among them, on a coarse grid), the sweep of
// longestUnavailable finds the pass's span, and the sets give a span
// often.
func TestLongestUnavailableAgreesWithPass(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 2))
	spans := func() []span {
		ss := make([]span, r.IntN(12))
		for i := range ss {
			ss[i] = span{time.Duration(r.IntN(30)), time.Duration(r.IntN(30))}
		}
		return ss
	}
	found := 0
	for i := range 2000 {
		w, h := spans(), spans()
		gl, gf := longestUnavailable(w, h)
		wl, wf := refLongestUnavailable(w, h)
		if gl != wl || gf != wf {
			t.Fatalf("case %d: waiting %v held %v: %v from %v, the pass's %v from %v", i, w, h, gl, gf, wl, wf)
		}
		if wl > 0 {
			found++
		}
	}
	if found < 500 {
		t.Fatalf("only %d cases with an unavailable span", found)
	}
}

// refBroughtBack is the cause a hold the master m of group shows at t
// names: a failover of group at t, else a crash or restart of m at t.
func refBroughtBack(tr *Truth, group, m string, t time.Duration) string {
	if slices.Contains(tr.failAt[group], t) {
		return fmt.Sprintf(", brought back by the failover to %s", m)
	}
	for _, c := range tr.downs[m] {
		if c.t == t && c.down {
			return fmt.Sprintf(", brought back by the crash of %s (what its restart loads)", m)
		}
		if c.t == t {
			return fmt.Sprintf(", brought back by the restart of %s", m)
		}
	}
	return ""
}
