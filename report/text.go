// The text timeline: the events around a violation, as lines a reader
// follows.

package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// Text writes the events of h around the first violation of v (focus), a few lines
// a reader follows to see why: the op records (call, return, outcome,
// result), the faults, what the nodes' lock keys said, the WAITs (how many
// replicas acknowledged), the requests on a lock's key that ran more than
// once (resent, or duplicated) and, for a violation about waiting (liveness), the
// pub/sub subscriptions (on which node), from lead before the violation started (or the involved holders'
// holdings began) until it ended, at most max lines (the first and last
// halves are kept when there are more); a call under way at the window's
// start is listed from its call, and the header says so. Ahead of them,
// and not counted in max, come the causes the violation names (checker.FaultsBefore) that
// precede the window: the topology's clock drifts, earlier faults (a
// partition that lasts to the end), the last WAIT not every replica
// acknowledged. Refused acquires (contenders polling a held lock) are
// counted, not listed: they are most of a busy history and change nothing,
// but for the one the violation is about (namedBy).
// It returns "" when v has no violation.
func Text(h []history.Record, v checker.Verdict, lead time.Duration, max int) string {
	if len(v.Violations) == 0 {
		return ""
	}
	x := focus(v.Violations)
	sel := textWindow(h, x, lead)
	for _, y := range v.Violations {
		sel.keys[y.Lock] = true
		if y.Kind.Fairness() {
			sel.keys[checker.RedissonFairQueue(y.Lock).Queue] = true
		}
	}
	var before []string
	for _, r := range x.Faults {
		if r.At() < sel.from {
			before = append(before, eventLine(r))
		}
	}
	var lines []string
	refused := 0
	early := false // a call under way at the window's start, listed from its call
	for _, r := range h {
		line, refusal := sel.line(r)
		switch {
		case refusal && namedBy(r, x):
			lines = append(lines, opLine(r)) // the refusal the violation is about
		case refusal:
			refused++
			continue
		case line != "":
			lines = append(lines, line)
		default:
			continue
		}
		early = early || r.At() < sel.from
	}
	if len(lines) > max {
		half := max / 2
		skipped := len(lines) - 2*half
		lines = append(append(lines[:half:half], fmt.Sprintf("%12s  (%d more events)", "...", skipped)), lines[len(lines)-half:]...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "timeline %s to %s (%s on %s)", fmtT(sel.from), fmtT(sel.to), x.Kind, x.Lock)
	if early {
		// Without it, a line before the window's start read as a
		// contradiction of the header.
		fmt.Fprintf(&b, ", the calls under way at %s listed from their call", fmtT(sel.from))
	}
	b.WriteString(":\n")
	for _, l := range before {
		b.WriteString("  " + l + "\n")
	}
	if len(before) > 0 {
		fmt.Fprintf(&b, "  %12s\n", "...")
	}
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	if refused > 0 {
		noun := "acquires"
		if refused == 1 {
			noun = "acquire"
		}
		fmt.Fprintf(&b, "  (and %d refused %s)\n", refused, noun)
	}
	return b.String()
}

// textSelection says which records Text shows: those in [from, to], of
// the violations' lock keys, and the subscriptions when waiting.
type textSelection struct {
	from, to time.Duration
	keys     map[string]bool
	// waiting says the violation is about waiting (isWaiting), so that
	// subscriptions matter.
	waiting bool
}

// textWindow is the selection around x: from lead before it started, or
// earlier to show how the holders involved came to hold, until it ended.
func textWindow(h []history.Record, x checker.Violation, lead time.Duration) textSelection {
	sel := textSelection{from: max0(x.From - lead), to: x.To, keys: map[string]bool{}, waiting: isWaiting(x.Kind)}
	for _, hd := range checker.Holdings(h, x.To) {
		if hd.Lock == x.Lock && slices.Contains(x.Holders, hd.Client) && hd.From <= x.To && hd.To >= x.From {
			sel.from = min(sel.from, max0(hd.From-5*time.Millisecond))
		}
	}
	return sel
}

// line is r's line of the text, "" if it is not shown; refused says r is
// a refused acquire in the window, counted rather than shown.
func (sel textSelection) line(r history.Record) (line string, refused bool) {
	if !sel.inWindow(r) {
		return "", false
	}
	switch r.Kind {
	case history.KindOp:
		if (r.Op == history.OpAcquire || r.Op == history.OpAcquireRead) && r.Outcome == history.OutcomeFail {
			return "", true
		}
		return opLine(r), false
	case history.KindFault, history.KindNode, history.KindClient:
		return eventLine(r), false
	case history.KindReq:
		if r.Op == history.ReqWait || (sel.waiting && (r.Op == history.ReqSubscribe || r.Op == history.ReqUnsubscribe)) {
			return eventLine(r), false
		}
		if len(r.Applied) > 1 && len(r.Args) > 0 && sel.keys[r.Args[0]] {
			return eventLine(r) + "; " + ranTimes(r), false
		}
	case history.KindTruth:
		if !sel.keys[r.Key] {
			return "", false
		}
		state := "gone"
		if !r.Gone {
			state = truthState(r)
		}
		return fmt.Sprintf("%12s  %-8s %s = %s", fmtT(r.At()), r.Node, r.Key, state), false
	}
	return "", false
}

// ranTimes says that req record r's command ran more than once, and when:
// its client sent it again after an attempt whose reply it did not get
// (a lost reply, a timeout) though that attempt had run, or the network
// delivered it twice. A second run of a SET NX then finds the key its
// first run set, of a release the key gone: the cause of many a wrong
// answer, which the op's line alone hides.
func ranTimes(r history.Record) string {
	ts := make([]string, len(r.Applied))
	for i, a := range r.Applied {
		ts[i] = fmtT(time.Duration(a))
	}
	return fmt.Sprintf("ran %d times (at %s): resent after a reply that did not come, or duplicated on the way", len(r.Applied), strings.Join(ts, ", "))
}

// namedBy reports whether op record r is the operation violation x is
// about: one that spans x exactly (a linearizability violation spans the
// operation no order fits), so that the timeline lists it even when it is
// a refused acquire, which it otherwise only counts.
func namedBy(r history.Record, x checker.Violation) bool {
	e, ok := r.Returned()
	return ok && r.At() == x.From && e == x.To && x.From < x.To
}

// inWindow says whether r falls in the window: an op or a request if it
// was in flight at some point of it, anything else if it happened in it.
func (sel textSelection) inWindow(r history.Record) bool {
	t := r.At()
	if r.Kind == history.KindOp || r.Kind == history.KindReq {
		e, ok := r.Returned()
		if !ok {
			e = sel.to
		}
		return t <= sel.to && e >= sel.from
	}
	return t >= sel.from && t <= sel.to
}

// eventLine is the timeline's line for a fault, a drifting node or client
// of the topology, or a req record (a WAIT, a subscription); "" for a node
// record without drift.
func eventLine(r history.Record) string {
	t := fmtT(r.At())
	switch r.Kind {
	case history.KindFault:
		target := strings.TrimSpace(r.Client + " " + r.Node)
		return fmt.Sprintf("%12s  %-8s FAULT %s %s", t, target, r.Op, r.Detail)
	case history.KindNode, history.KindClient:
		if r.Detail == "" {
			return ""
		}
		return fmt.Sprintf("%12s  %-8s clock %s (topology)", t, r.Node+r.Client, r.Detail)
	case history.KindReq:
		s := fmt.Sprintf("%12s  %-8s %s %s", t, r.Client, strings.ToUpper(r.Op), strings.Join(r.Args, " "))
		if r.Op == history.ReqWait {
			s += " on " + r.Node // the node that answered (after a failover, the promoted one)
		}
		switch e, ok := r.Returned(); {
		case ok && r.Op == history.ReqUnsubscribe: // sent, no reply awaited
		case ok && r.Outcome == history.OutcomeOK:
			s += " → " + fmtT(e)
		case ok:
			s += " → " + fmtT(e) + " " + string(r.Outcome) + " " + r.Result
		default:
			s += " …never returned"
		}
		if r.Detail != "" {
			s += ": " + r.Detail
		}
		return s
	}
	return ""
}

// opLine is the text timeline's line for an op record: who, what, when it
// returned, and how.
func opLine(r history.Record) string {
	who := holderOf(r)
	ret := "…never returned"
	if e, ok := r.Returned(); ok {
		ret = "→ " + fmtT(e)
	} else if r.Answered != nil {
		// It returned, not knowing what it did: when it answered, and
		// its outcome, unknown.
		ret = "→ " + fmtT(time.Duration(*r.Answered))
	}
	s := fmt.Sprintf("%12s  %-8s %s %s %s %s", fmtT(r.At()), who, r.Op, r.Lock, ret, r.Outcome)
	if r.Result != "" {
		s += " " + r.Result
	}
	if r.Detail != "" {
		s += " (" + r.Detail + ")"
	}
	return s
}

func truthState(r history.Record) string {
	if r.Items != nil {
		return "[" + strings.Join(r.Items, " ") + "]"
	}
	if r.Fields == nil {
		return r.Value
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.Fields)) {
		parts = append(parts, k+":"+r.Fields[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func max0(d time.Duration) time.Duration { return max(d, 0) }

// fmtT formats a world time in seconds with millisecond precision, so that
// columns line up.
func fmtT(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// focus is the violation Text explains: the first, passing over a quorum
// held by down nodes (checker.QuorumHeldByDown) when the verdict has
// another. That loss let nobody in; it often only precedes the finding
// (a forgotten node restarts empty, and the silent loss and second holder
// follow), which is what the reader needs to see.
func focus(vs []checker.Violation) checker.Violation {
	for _, x := range vs {
		if x.Kind != checker.QuorumHeldByDown {
			return x
		}
	}
	return vs[0]
}
