// The ground-truth oracles: what the nodes said, against what the holders
// believed and did.

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
)

// Truth indexes a history's node-side records: the topology, failovers, and
// every change of every key on every node, so that checkers can ask what a
// group's master said about a key at any instant.
type Truth struct {
	groupOf  map[string]string          // node -> group
	masters  map[string][]masterSpan    // group -> masters over time
	changes  map[string][]truthChange   // node + "\x00" + key -> changes in order
	keyNodes map[string][]string        // key -> nodes that ever had it (sorted)
	keyTimes map[string][]time.Duration // key -> every change or failover time (sorted)
	failAt   map[string][]time.Duration // group -> failover times
	recs     []history.Record
}

type masterSpan struct {
	from time.Duration
	node string
}

type truthChange struct {
	t   time.Duration
	rec *history.Record // nil for "gone"
}

// NewTruth indexes h.
func NewTruth(h []history.Record) *Truth {
	tr := &Truth{groupOf: map[string]string{}, masters: map[string][]masterSpan{}, changes: map[string][]truthChange{},
		keyNodes: map[string][]string{}, keyTimes: map[string][]time.Duration{}, failAt: map[string][]time.Duration{}, recs: h}
	for i := range h {
		r := &h[i]
		switch {
		case r.Kind == history.KindNode:
			tr.groupOf[r.Node] = r.Value
			if r.Op == history.RoleMaster {
				tr.masters[r.Value] = append(tr.masters[r.Value], masterSpan{r.At(), r.Node})
			}
		case r.Kind == history.KindFault && r.Op == history.FaultFailover && r.Value != "":
			tr.masters[r.Node] = append(tr.masters[r.Node], masterSpan{r.At(), r.Value})
			tr.failAt[r.Node] = append(tr.failAt[r.Node], r.At())
		case r.Kind == history.KindTruth:
			k := r.Node + "\x00" + r.Key
			c := truthChange{t: r.At(), rec: r}
			if r.Gone {
				c.rec = nil
			}
			tr.changes[k] = append(tr.changes[k], c)
			if !slices.Contains(tr.keyNodes[r.Key], r.Node) {
				tr.keyNodes[r.Key] = append(tr.keyNodes[r.Key], r.Node)
			}
			tr.keyTimes[r.Key] = append(tr.keyTimes[r.Key], r.At())
		}
	}
	for _, k := range slices.Sorted(maps.Keys(tr.keyNodes)) {
		slices.Sort(tr.keyNodes[k])
	}
	return tr
}

// Groups lists the groups in which key ever existed, sorted.
func (tr *Truth) Groups(key string) []string {
	var out []string
	for _, n := range tr.keyNodes[key] {
		g := tr.groupOf[n]
		if g == "" {
			g = n
		}
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// Master is the node serving group at t.
func (tr *Truth) Master(group string, t time.Duration) string {
	m := group
	for _, s := range tr.masters[group] {
		if s.from <= t {
			m = s.node
		}
	}
	return m
}

// State is key's record on node at t (after every change at t), or nil
// when the key did not exist.
func (tr *Truth) State(node, key string, t time.Duration) *history.Record {
	cs := tr.changes[node+"\x00"+key]
	i, _ := slices.BinarySearchFunc(cs, t, func(c truthChange, t time.Duration) int {
		if c.t <= t {
			return -1
		}
		return 1
	})
	if i == 0 {
		return nil
	}
	return cs[i-1].rec
}

// holderField is the hash field of a holder "client/owner": lock.Client ids
// are the client names in locksim's workloads, so the field is
// "client:owner".
func holderField(holder string) string { return strings.Replace(holder, "/", ":", 1) }

// Names reports whether a key state names the holding's holder: a string
// key holding its token, or a hash with its field (or its write field).
func Names(st *history.Record, h Holding) bool {
	if st == nil {
		return false
	}
	if st.Fields == nil {
		return h.Token != "" && st.Value == h.Token
	}
	f := holderField(h.Client)
	_, ok := st.Fields[f]
	_, okw := st.Fields[f+":write"]
	return ok || okw
}

// namedBy counts the groups whose master names h at t.
func (tr *Truth) namedBy(h Holding, groups []string, t time.Duration) int {
	n := 0
	for _, g := range groups {
		if Names(tr.State(tr.Master(g, t), h.Lock, t), h) {
			n++
		}
	}
	return n
}

// SilentLosses reports, for every holding, the spans of its belief during
// which the nodes no longer gave the lock to its holder: the group's master,
// or for a lock kept on several groups (RedLock) a majority of them.
//
// The groups of a lock are those where its key ever appeared, so a RedLock
// node that never received the key (down from the start) is not counted:
// this errs towards reporting less loss, never more.
func (tr *Truth) SilentLosses(hs []Holding) []Violation {
	var out []Violation
	for _, h := range hs {
		groups := tr.Groups(h.Lock)
		if len(groups) == 0 || h.To <= h.From {
			continue
		}
		quorum := len(groups)/2 + 1
		times := []time.Duration{h.From}
		for _, t := range tr.keyTimes[h.Lock] {
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
		slices.Sort(times)
		times = slices.Compact(times)
		lostFrom := time.Duration(-1)
		flush := func(until time.Duration) {
			if lostFrom >= 0 && until > lostFrom {
				out = append(out, Violation{
					Kind: SilentLoss, Lock: h.Lock, Holders: []string{h.Client}, From: lostFrom, To: until,
					Detail: fmt.Sprintf("%s believed it held the lock while %s", h.Client, tr.describe(h, groups, lostFrom)),
					Faults: FaultsBefore(tr.recs, lostFrom, 5),
				})
			}
			lostFrom = -1
		}
		for _, t := range times {
			named := tr.namedBy(h, groups, t) >= quorum
			switch {
			case !named && lostFrom < 0:
				lostFrom = t
			case named && lostFrom >= 0:
				flush(t)
			}
		}
		flush(h.To)
	}
	return out
}

func (tr *Truth) describe(h Holding, groups []string, t time.Duration) string {
	if len(groups) == 1 {
		m := tr.Master(groups[0], t)
		st := tr.State(m, h.Lock, t)
		switch {
		case st == nil:
			return fmt.Sprintf("the master %s had no key", m)
		case st.Fields != nil:
			return fmt.Sprintf("the master %s named %v", m, slices.Sorted(maps.Keys(st.Fields)))
		}
		return fmt.Sprintf("the master %s held %q", m, st.Value)
	}
	return fmt.Sprintf("only %d of %d groups named it", tr.namedBy(h, groups, t), len(groups))
}

// opEndingAt is the successful operation of rs that returned at t, if any.
func opEndingAt(rs []*history.Record, t time.Duration) *history.Record {
	for _, r := range rs {
		if end, ok := r.Returned(); ok && end == t && r.Outcome == history.OutcomeOK {
			return r
		}
	}
	return nil
}

// broughtBack names the failover of group at t, if there was one, as the
// cause of a hold the master shows at t.
func (tr *Truth) broughtBack(group string, t time.Duration) string {
	if slices.Contains(tr.failAt[group], t) {
		return fmt.Sprintf(", brought back by the failover to %s", tr.Master(group, t))
	}
	return ""
}

// holdCount is a hash field's count in a key state (0 when absent).
func holdCount(st *history.Record, field string) int {
	if st == nil || st.Fields == nil {
		return 0
	}
	n, _ := strconv.Atoi(st.Fields[field])
	return n
}

// ReentrancyViolations compares, for reentrant locks (op records with an
// owner) on a single group, the hold count the master shows with the
// holder's unmatched successful acquires, at every change of the key, every
// failover of its group, and every return of the holder's successful
// acquires and releases, while the holder has no other operation in flight
// and none of unknown outcome; and reports a release that removed the lock
// while its owner still held levels. A read-write lock's halves are
// compared each on its own field.
//
// A count that disagrees with a living owner's acquires (it has unmatched
// acquires: a retried acquire counted twice, a failover that brought back a
// count its releases had lowered) is Reentrancy. A count for an owner with
// no unmatched acquire is Resurrected: nobody holds the lock by belief, yet
// the master names a holder and everyone waits until its TTL (a release
// lost in a failover, the promoted replica never got it). One violation is
// reported per episode: later counts follow from it until the master's
// count agrees with the holder's acquires again.
// Expiry and loss are silent losses, not reentrancy errors: a holder whose
// field is gone is not compared.
func (tr *Truth) ReentrancyViolations(h []history.Record) []Violation {
	// A holder's hold count lives in its hash field: "client:owner", or for
	// a read-write lock's write half "client:owner:write". Each half is
	// compared on its own.
	type holderLock struct{ holder, lock, field string }
	ops := map[holderLock][]*history.Record{}
	var order []holderLock
	rw := map[string]bool{}
	for i := range h {
		if r := &h[i]; r.Kind == history.KindOp && (r.Op == history.OpAcquireRead || r.Op == history.OpReleaseRead) {
			rw[r.Lock] = true
		}
	}
	for i := range h {
		r := &h[i]
		if r.Kind != history.KindOp || len(r.Args) == 0 || r.Args[0] == "" {
			continue
		}
		holder := r.Client + "/" + r.Args[0]
		field := holderField(holder)
		switch r.Op {
		case history.OpAcquire, history.OpRelease:
			if rw[r.Lock] {
				field += ":write"
			}
		case history.OpAcquireRead, history.OpReleaseRead:
		default:
			continue
		}
		k := holderLock{holder, r.Lock, field}
		if _, ok := ops[k]; !ok {
			order = append(order, k)
		}
		ops[k] = append(ops[k], r)
	}
	var out []Violation
	for _, k := range order {
		groups := tr.Groups(k.lock)
		if len(groups) != 1 {
			continue
		}
		rs := ops[k]
		// unmatched(t) is the count the master should show at t: successful
		// acquires returned by t minus successful releases called by t, back
		// to 0 at a release answered "not held" (the node had no hold for
		// the owner, whatever the owner believed, and the lock forgets its
		// holds). An "expire" changes nothing: the owner's own estimate ran
		// out, the master keeps the count until the key's TTL, and the
		// workload still releases. busyBut(t, r): an op other than r in
		// flight or unknown.
		type step struct {
			t     time.Duration
			delta int // +1, -1, or 0 for a reset
		}
		var steps []step
		for _, r := range rs {
			end, done := r.Returned()
			switch {
			case strings.HasPrefix(r.Op, "acquire") && r.Outcome == history.OutcomeOK && done:
				steps = append(steps, step{end, 1})
			case strings.HasPrefix(r.Op, "release") && r.Outcome == history.OutcomeOK:
				steps = append(steps, step{r.At(), -1})
			case strings.HasPrefix(r.Op, "release") && r.Outcome == history.OutcomeFail:
				steps = append(steps, step{r.At(), 0})
			}
		}
		slices.SortStableFunc(steps, func(a, b step) int { return cmp.Compare(a.t, b.t) })
		unmatched := func(t time.Duration) int {
			n := 0
			for _, s := range steps {
				switch {
				case s.t > t:
					return n
				case s.delta == 0:
					n = 0
				default:
					n += s.delta
				}
			}
			return n
		}
		busyBut := func(t time.Duration, self *history.Record) bool {
			for _, r := range rs {
				end, done := r.Returned()
				if r != self && r.At() <= t && (!done || end >= t) {
					return true
				}
			}
			return false
		}
		// Compare at every change of the key and failover of its group, and
		// when each successful acquire and release returns: a double-applied
		// acquire whose copies landed during the holder's own operations
		// shows only there, as a hold above its acquires once the acquire
		// returns, or a hold left after the last release.
		var checks []time.Duration
		checks = append(checks, tr.keyTimes[k.lock]...)
		checks = append(checks, tr.failAt[groups[0]]...)
		for _, r := range rs {
			if end, ok := r.Returned(); ok && r.Outcome == history.OutcomeOK && !busyBut(end, r) {
				checks = append(checks, end)
			}
		}
		slices.Sort(checks)
		reported := false
		for _, t := range slices.Compact(checks) {
			if busyBut(t, opEndingAt(rs, t)) {
				continue
			}
			st := tr.State(tr.Master(groups[0], t), k.lock, t)
			got, want := holdCount(st, k.field), unmatched(t)
			if got == want || (got == 0 && want <= 0) {
				reported = false // agreement again: a later disagreement is a new episode
				continue
			}
			if got == 0 || reported {
				continue
			}
			reported = true
			if want > 0 {
				out = append(out, Violation{
					Kind: Reentrancy, Lock: k.lock, Holders: []string{k.holder}, From: t, To: t,
					Detail: fmt.Sprintf("the master shows %d holds for %s, which has %d unmatched acquires", got, k.holder, want),
					Faults: FaultsBefore(tr.recs, t, 5),
				})
				continue
			}
			out = append(out, Violation{
				Kind: Resurrected, Lock: k.lock, Holders: []string{k.holder}, From: t, To: t,
				Detail: fmt.Sprintf("the master %s shows %d holds for %s, which holds nothing (its releases returned)%s: nobody holds the lock, and every other client waits for its TTL",
					tr.Master(groups[0], t), got, k.holder, tr.broughtBack(groups[0], t)),
				Faults: FaultsBefore(tr.recs, t, 5),
			})
		}
		for _, r := range rs {
			if strings.HasPrefix(r.Op, "release") && r.Outcome == history.OutcomeOK && r.Result == "1" {
				if before := unmatched(r.At() - 1); before > 1 {
					out = append(out, Violation{
						Kind: Reentrancy, Lock: k.lock, Holders: []string{k.holder}, From: r.At(), To: r.At(),
						Detail: fmt.Sprintf("a release by %s removed the lock while it held %d levels", k.holder, before),
						Faults: FaultsBefore(tr.recs, r.At(), 5),
					})
				}
			}
		}
	}
	return out
}

// isReleaseReq reports whether a req record's command is one that gives a
// lock back: an unlock or release script ("eval:reentrant_unlock",
// "eval:rw_write_unlock", "eval:simple_release", ...) or a plain DEL.
// Renewals, acquires and reads are not.
func isReleaseReq(op string) bool {
	return op == "del" || strings.HasPrefix(op, "eval:") && (strings.HasSuffix(op, "unlock") || strings.HasSuffix(op, "release"))
}

// clientReqs indexes h's req records that name a key (Args[0]) by client:
// each client's indices into h, in call order, for opReqs.
func clientReqs(h []history.Record) map[string][]int {
	reqs := map[string][]int{}
	for i := range h {
		if r := &h[i]; r.Kind == history.KindReq && len(r.Args) > 0 {
			reqs[r.Client] = append(reqs[r.Client], i)
		}
	}
	return reqs
}

// opReqs is the req records op sent: of its client's req records (reqs,
// from clientReqs), those on op's lock (first argument) called between op's
// call and its return (or after its call, when it never returned) that keep
// accepts, as indices into h in call order. A client's commands are sent by
// its ops, so these are the commands that made op's answer.
func opReqs(h []history.Record, reqs []int, op *history.Record, keep func(*history.Record) bool) []int {
	var out []int
	j, _ := slices.BinarySearchFunc(reqs, op.T, func(i int, t int64) int { return cmp.Compare(h[i].T, t) })
	for ; j < len(reqs); j++ {
		r := &h[reqs[j]]
		if op.End != nil && r.T > *op.End {
			break
		}
		if r.Args[0] == op.Lock && keep(r) {
			out = append(out, reqs[j])
		}
	}
	return out
}

// releaseRuns is when a release op took effect: the times a node ran the
// release commands its client sent on its lock between its call and its
// return (req records' Applied, sorted), or nil when the history does not
// say (a real server's history records no runs).
func releaseRuns(h []history.Record, reqs []int, op *history.Record) []time.Duration {
	var out []time.Duration
	for _, i := range opReqs(h, reqs, op, func(r *history.Record) bool { return isReleaseReq(r.Op) }) {
		for _, t := range h[i].Applied {
			out = append(out, time.Duration(t))
		}
	}
	slices.Sort(out)
	return out
}

// IdempotencyViolations reports, on single-group locks, an owner's release
// whose answer contradicts what the master held when the release took
// effect (when a node ran its command, from the req records' Applied):
//
//   - "not held" although the master named the owner just before the
//     release's first run: its own first run gave the hold back (the
//     symptom of an unlock retried after its reply was lost), or it refused
//     a hold that was there;
//   - success for a run that changed the lock while the master named
//     someone else (a non-owner releasing another's lock, as a plain DEL
//     landing after the lease does).
//
// A release delayed in flight past its lease that lands while another
// client holds the lock truthfully answers "not held": that is no
// violation, although the master named the owner when it was sent. Only
// when the history records no run (real servers) is the release judged at
// its call, which may then flag such a delayed release. The holding's
// token comes from the holder's last acquire.
func (tr *Truth) IdempotencyViolations(h []history.Record) []Violation {
	var out []Violation
	lastToken := map[string]string{}
	reqs := clientReqs(h) // client -> its req records on a key, in call order
	for i := range h {
		r := &h[i]
		if r.Kind != history.KindOp {
			continue
		}
		holder := holderName(r)
		if r.Op == history.OpAcquire && r.Outcome == history.OutcomeOK {
			lastToken[holder+"\x00"+r.Lock] = r.Result
		}
		if r.Op != history.OpRelease || (r.Outcome != history.OutcomeOK && r.Outcome != history.OutcomeFail) {
			continue
		}
		groups := tr.Groups(r.Lock)
		if len(groups) != 1 {
			continue
		}
		hd := Holding{Client: holder, Lock: r.Lock, Token: lastToken[holder+"\x00"+r.Lock]}
		// before(t) is the master's state just before a run at t, and
		// after(t) just after it.
		before := func(t time.Duration) *history.Record { return tr.State(tr.Master(groups[0], t), r.Lock, t-1) }
		after := func(t time.Duration) *history.Record { return tr.State(tr.Master(groups[0], t), r.Lock, t) }
		runs := releaseRuns(h, reqs[r.Client], r)
		if len(runs) == 0 {
			// No recorded run: judge at the call, the best a real
			// server's history allows.
			t := r.At()
			st := after(t)
			held := Names(st, hd)
			switch {
			case r.Outcome == history.OutcomeFail && held:
				out = append(out, Violation{
					Kind: UnlockIdempotency, Lock: r.Lock, Holders: []string{holder}, From: t, To: t,
					Detail: fmt.Sprintf("%s's unlock answered \"not held\" although the master named it when the unlock was sent", holder),
					Faults: FaultsBefore(tr.recs, t, 5),
				})
			case r.Outcome == history.OutcomeOK && !held && st != nil:
				out = append(out, Violation{
					Kind: UnlockIdempotency, Lock: r.Lock, Holders: []string{holder}, From: t, To: t,
					Detail: fmt.Sprintf("%s's unlock succeeded while the lock belonged to someone else", holder),
					Faults: FaultsBefore(tr.recs, t, 5),
				})
			}
			continue
		}
		if r.Outcome == history.OutcomeFail {
			if t := runs[0]; Names(before(t), hd) {
				detail := fmt.Sprintf("%s's unlock answered \"not held\" although the master named it when the unlock took effect", holder)
				if len(runs) > 1 {
					detail = fmt.Sprintf("%s's unlock ran %d times and answered \"not held\", although the master named it when the first run took effect", holder, len(runs))
				}
				out = append(out, Violation{
					Kind: UnlockIdempotency, Lock: r.Lock, Holders: []string{holder}, From: t, To: t,
					Detail: detail, Faults: FaultsBefore(tr.recs, t, 5),
				})
			}
			continue
		}
		for _, t := range runs {
			if st := before(t); st != nil && !Names(st, hd) && after(t) != st {
				out = append(out, Violation{
					Kind: UnlockIdempotency, Lock: r.Lock, Holders: []string{holder}, From: t, To: t,
					Detail: fmt.Sprintf("%s's unlock succeeded, and one of its runs changed the lock while %s", holder, tr.describe(hd, groups, t-1)),
					Faults: FaultsBefore(tr.recs, t, 5),
				})
				break
			}
		}
	}
	return out
}

// Check runs the belief, ground-truth and fencing oracles over h (end
// closes open holdings) and returns the verdict, violations in time order.
// Liveness needs a bound from the caller (LivenessViolations) and
// linearizability a model (Linearizable).
func Check(h []history.Record, end time.Duration) Verdict {
	var v Verdict
	tr := NewTruth(h)
	hs := Holdings(h, end)
	all := overlapViolations(h, hs)
	all = append(all, tr.SilentLosses(hs)...)
	all = append(all, tr.ReentrancyViolations(h)...)
	all = append(all, tr.IdempotencyViolations(h)...)
	_, fenced := fencing(h, hs)
	all = append(all, fenced...)
	slices.SortStableFunc(all, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Lock, b.Lock))
	})
	v.Add(all...)
	return v
}
