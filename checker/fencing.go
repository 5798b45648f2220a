// The fencing oracle: what the protected resources accepted, and whether
// the tokens acquires got only ever grew.

package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/scripts"
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
// holder's are not). But a token handed on is not stale: one issued again
// (a counter a restart set back) to a holder that took the lock after its
// earlier holders had let it go, writing within its holding, which
// overlaps no other holding of the token (handedOn). Its writes are the
// rightful holder's, one holder at a time; the issue is a regression. Each
// stale write counts once in StaleAccepted and is one StaleWrite
// violation, naming the other holder that wrote the token first and the
// writer.
//
// A write whose holder's holding has ended (its lease ran out during a
// pause between its check and its write) is not stale when no later token
// has reached the resource yet: the resource takes it before the next
// holder's first write, and every write with the next token is then
// ordered after it. That is what fencing promises, an order of the
// writes by token, not that a write never lands while another client
// holds the lock; the overlap itself is the mutual-exclusion and
// silent-loss oracles' finding.
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
func Fencing(h []history.Record) (FencingReport, []Violation) {
	return fencing(indexRecords(h), nil, &lazyReqs{h: h}, nil)
}

// fencedAcquireReq is the req record's command of FencedLock's acquire
// script, whose reply carries the token it issued.
var fencedAcquireReq = "eval:" + scripts.FencedAcquire.Name

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
// computes them if it needs them), and h's req index. Only which holding an acquire belongs to
// is read, so any end after the last record serves. The stale writes come
// before the regressions, each in record order, then all by time (a stable
// sort), as the verdict lists them.
//
// w is what it may spend (nil: no bound): a unit per write and acquire
// with a token, and per holding of the acquirer's looked at.
func fencing(ix *recordIndex, hs []Holding, reqs *lazyReqs, w *oracleWork) (FencingReport, []Violation) {
	h := ix.h
	causes := &lazyCauses{h: h}
	ti := tokenIssues{h: h, ix: ix, hs: hs, reqs: reqs, causes: causes, w: w}
	fw := fencedWrites{highest: map[string]written{}, causes: causes, ti: &ti}
	for _, i := range ix.ops {
		r := &h[i]
		if r.Kind != history.KindOp || r.Outcome == history.OutcomeUnknown {
			continue
		}
		if !w.charge(1, r.At()) {
			break
		}
		if !maybeInt(r.Result) {
			continue // what ParseInt refuses, without its error's allocation
		}
		tok, err := strconv.ParseInt(r.Result, 10, 64)
		if err != nil {
			continue
		}
		switch {
		case r.Op == history.OpWrite:
			fw.write(h, r, tok)
		case r.Op == history.OpAcquire && r.Outcome == history.OutcomeOK:
			ti.add(r, tok)
		}
	}
	out := append(fw.stale, ti.regressions()...)
	slices.SortStableFunc(out, func(a, b Violation) int { return cmp.Compare(a.From, b.From) })
	return fw.rep, out
}

// written is the highest token a resource accepted, the holders with a
// write of it accepted, in the order of their first, and when each wrote
// it last (lastAt[i] is writers[i]'s).
type written struct {
	token   int64
	writers []string
	lastAt  []time.Duration
}

// fencedWrites judges the writes to fenced resources in record order, as
// the resources took them.
type fencedWrites struct {
	rep     FencingReport
	highest map[string]written // resource -> its highest accepted token
	stale   []Violation
	causes  *lazyCauses
	// ti has the history's holdings (tokenIssues.index), and byToken
	// indexes its exclusive ones by token, on the first question
	// (handedOn).
	ti      *tokenIssues
	byToken map[string][]Holding
}

// write judges r, a write of h with token tok: a rejected one was
// prevented; an accepted one is stale below the resource's highest token,
// or at it after another holder's write (staleAtSameToken).
func (fw *fencedWrites) write(h []history.Record, r *history.Record, tok int64) {
	t := r.At()
	if end, ok := r.Returned(); ok {
		t = end
	}
	if r.Outcome != history.OutcomeOK {
		fw.rep.Rejected++
		fw.rep.Prevented++
		return
	}
	fw.rep.Accepted++
	holder := holderName(r)
	top, seen := fw.highest[r.Lock]
	switch {
	case seen && tok < top.token:
		fw.rep.StaleAccepted++
		fw.stale = append(fw.stale, Violation{Kind: StaleWrite, Lock: r.Lock, Holders: []string{holder}, From: t, To: t,
			Detail: fmt.Sprintf("accepted token %d after %d", tok, top.token), Faults: fw.causes.before(t)})
	case seen && tok == top.token:
		fw.staleAtSameToken(h, r, holder, top, t)
	default: // the first write, or a higher token
		fw.highest[r.Lock] = written{tok, []string{holder}, []time.Duration{t}}
	}
}

// staleAtSameToken judges an accepted write of the resource's highest
// token top by holder at t: stale when another holder wrote with it
// before (the resource cannot tell the two apart), unless the token was
// handed on (handedOn: its holders held it one after another, and holder
// holds it now), and holder joins the token's writers.
func (fw *fencedWrites) staleAtSameToken(h []history.Record, r *history.Record, holder string, top written, t time.Duration) {
	if i := slices.IndexFunc(top.writers, func(w string) bool { return w != holder }); i >= 0 && !fw.handedOn(holder, top, t) {
		other := top.writers[i]
		fw.rep.StaleAccepted++
		fw.stale = append(fw.stale, Violation{Kind: StaleWrite, Lock: r.Lock, Holders: []string{other, holder}, From: t, To: t,
			Detail: fmt.Sprintf("accepted token %d from %s after %s had written with it", top.token, holder, other), Faults: fw.causes.before(t)})
	}
	if i := slices.Index(top.writers, holder); i >= 0 {
		top.lastAt[i] = t
	} else {
		top.writers = append(top.writers, holder)
		top.lastAt = append(top.lastAt, t)
	}
	fw.highest[r.Lock] = top
}

// handedOn reports whether holder's write at t with top's token was
// handed that token: it writes within a holding of the token (of some
// lock) that spans t, and every other holder that wrote with the token
// held it on that lock too, let it go before holder's holding began, and
// wrote with it last before then; and no other holding of the token on
// that lock begun by t overlaps holder's. So a token issued again (a
// counter a restart set back) to a holder that took the lock after its
// earlier holders had let it go: its writes are the lock's rightful
// holder's, one holder at a time, and nothing stale reaches the resource
// (the issue itself is a TokenRegression). Two holdings of the token at
// once, an earlier holder writing after the next one took the token, a
// write outside the writer's holding, the token of another lock, and a
// history without the holdings (only the writes) are not handed on: the
// resource cannot tell those writers apart.
func (fw *fencedWrites) handedOn(holder string, top written, t time.Duration) bool {
	if fw.byToken == nil {
		if fw.ti.byHolder == nil {
			fw.ti.index()
		}
		fw.byToken = map[string][]Holding{}
		for _, hd := range fw.ti.hs {
			if !hd.Shared && hd.Token != "" {
				fw.byToken[hd.Token] = append(fw.byToken[hd.Token], hd)
			}
		}
	}
	hds := fw.byToken[strconv.FormatInt(top.token, 10)]
	own := slices.IndexFunc(hds, func(hd Holding) bool { return hd.Client == holder && hd.From <= t && t <= hd.To })
	if own < 0 {
		return false
	}
	mine := hds[own]
	for i, w := range top.writers {
		if w == holder {
			continue
		}
		let := slices.ContainsFunc(hds, func(hd Holding) bool { return hd.Client == w && hd.Lock == mine.Lock && hd.To <= mine.From })
		if !let || top.lastAt[i] >= mine.From {
			return false
		}
	}
	return !slices.ContainsFunc(hds, func(hd Holding) bool {
		return hd.Client != holder && hd.Lock == mine.Lock && hd.From <= t && hd.From < mine.To && mine.From < hd.To
	})
}

// issue is one token an acquire got.
type issue struct {
	// first and last bound when the token was issued: the first and last
	// run of the request that returned it, or the acquire's return when
	// the history records no runs.
	first, last time.Duration
	seq         int
	token       int64
	holder      string
	lock        string
	from        time.Duration // start of the holding it belongs to (-1: none)
}

// tokenIssues collects the tokens successful acquires got, to find the
// regressions among them.
type tokenIssues struct {
	h  []history.Record
	ix *recordIndex // h's records by kind
	hs []Holding    // h's holdings; nil until needed, when the caller had none
	// byHolder indexes h, built on the first acquire with a token (most
	// locks have none).
	byHolder map[string][]Holding // holder + "\x00" + lock -> its exclusive holdings
	reqs     *lazyReqs
	issues   []issue
	causes   *lazyCauses
	w        *oracleWork
}

// add records the token tok that r, a successful acquire, got.
func (ti *tokenIssues) add(r *history.Record, tok int64) {
	if ti.byHolder == nil {
		ti.index()
	}
	end, _ := r.Returned()
	holder := holderName(r)
	a := issue{end, end, r.Seq, tok, holder, r.Lock, ti.holdingStart(holder, r.Lock, end)}
	if first, last, ok := ti.issueRuns(r, tok); ok {
		a.first, a.last = first, last
	}
	ti.issues = append(ti.issues, a)
}

// index builds byHolder (from the caller's holdings, or h's own).
func (ti *tokenIssues) index() {
	if ti.hs == nil {
		ti.hs = holdings(ti.ix, historyEnd(ti.h))
	}
	ti.byHolder = map[string][]Holding{}
	for _, hd := range ti.hs {
		if !hd.Shared {
			k := hd.Client + "\x00" + hd.Lock
			ti.byHolder[k] = append(ti.byHolder[k], hd)
		}
	}
}

// holdingStart is the start of holder's latest exclusive holding of lock
// that spans t, or -1 when none does.
func (ti *tokenIssues) holdingStart(holder, lock string, t time.Duration) time.Duration {
	from := time.Duration(-1)
	hds := ti.byHolder[holder+"\x00"+lock]
	ti.w.charge(int64(len(hds)), t)
	for _, hd := range hds {
		if hd.From <= t && t <= hd.To {
			from = max(from, hd.From)
		}
	}
	return from
}

// issueRuns is when the node issued tok to r: the first and last run of
// the last of r's requests whose reply carried it (FencedLock's acquire
// script); ok is false when the history records no such run.
func (ti *tokenIssues) issueRuns(r *history.Record, tok int64) (first, last time.Duration, ok bool) {
	reply := history.FormatReply([]any{int64(-1), tok}) // the script's "acquired" reply with the token
	ix := ti.reqs.forOp(r, func(q *history.Record) bool {
		return q.Op == fencedAcquireReq && q.Outcome == history.OutcomeOK && q.Result == reply
	})
	if len(ix) == 0 {
		return 0, 0, false
	}
	runs := ti.h[ix[len(ix)-1]].Applied
	if len(runs) == 0 {
		return 0, 0, false
	}
	return time.Duration(runs[0]), time.Duration(runs[len(runs)-1]), true
}

// regressions walks the issues in the order their tokens could first have
// been issued, each compared with the highest token issued certainly
// before it: by an issue whose last run (byLast) came before its first.
// Ties go by record order, so that with one run each (or none) this is the
// issue (or return) order.
func (ti *tokenIssues) regressions() []Violation {
	acqs := ti.issues
	before := func(at time.Duration, seq int, than issue) bool {
		return cmp.Or(cmp.Compare(at, than.first), cmp.Compare(seq, than.seq)) < 0
	}
	slices.SortStableFunc(acqs, func(a, b issue) int { return cmp.Or(cmp.Compare(a.first, b.first), cmp.Compare(a.seq, b.seq)) })
	byLast := slices.Clone(acqs)
	slices.SortStableFunc(byLast, func(a, b issue) int { return cmp.Or(cmp.Compare(a.last, b.last), cmp.Compare(a.seq, b.seq)) })
	var out []Violation
	top := map[string]issue{} // lock -> the highest token issued certainly before
	j := 0
	for _, a := range acqs {
		for ; j < len(byLast) && before(byLast[j].last, byLast[j].seq, a); j++ {
			if prev, ok := top[byLast[j].lock]; !ok || byLast[j].token > prev.token {
				top[byLast[j].lock] = byLast[j]
			}
		}
		if prev, ok := top[a.lock]; ok {
			if v, bad := ti.regression(prev, a); bad {
				out = append(out, v)
			}
		}
	}
	return out
}

// regression judges a's token against prev's, the highest issued
// certainly before it: a regression unless above it, or the same token
// re-acquired by its holder within the holding that got it.
func (ti *tokenIssues) regression(prev, a issue) (Violation, bool) {
	var detail string
	switch {
	case a.token > prev.token:
		return Violation{}, false
	case a.token == prev.token && a.holder == prev.holder && a.from >= 0 && a.from == prev.from:
		return Violation{}, false // a re-acquire within the holding that got the token
	case a.token == prev.token:
		detail = fmt.Sprintf("token %d issued again, after %s got it", a.token, prev.holder)
	default:
		detail = fmt.Sprintf("token %d issued after %d", a.token, prev.token)
	}
	return Violation{Kind: TokenRegression, Lock: a.lock, Holders: []string{prev.holder, a.holder}, From: a.first, To: a.first,
		Detail: detail, Faults: ti.causes.before(a.first)}, true
}

// maybeInt is false for a string that strconv.ParseInt(s, 10, 64) refuses
// at its first byte (empty, or not a sign or digit): most results an op
// records ("OK", "held", a lock's token) are not tokens, and ParseInt
// allocates an error for each. It only spares the call: a string it passes
// is parsed as before.
func maybeInt(s string) bool {
	return s != "" && (s[0] == '-' || s[0] == '+' || (s[0] >= '0' && s[0] <= '9'))
}
