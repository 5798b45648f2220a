// Explanations: the text that describes operations and model states, the
// violation that explains where an illegal lock history first went wrong,
// and the annotations of the visualization.

package checker

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/locksim/locksim/history"
)

// describeFree describes the free lock, with the linearization point it is
// known to be at or after (when not the start).
func describeFree(at int64) string {
	if at > 0 {
		return "free (now≥" + fmtTime(at) + ")"
	}
	return "free"
}

// describeState describes a model state for a reader: the lock states it
// may be in (sorted, so that the text does not depend on the set's order),
// then the armed operations that may still take effect.
func (lh *linHistory) describeState(st *linState) string {
	descs := make([]string, len(st.set))
	for i, x := range st.set {
		descs[i] = x.describe(lh.holders)
	}
	slices.Sort(descs)
	s := strings.Join(descs, " or ")
	if len(st.armed) > 0 {
		as := make([]string, len(st.armed))
		for i, a := range st.armed {
			as[i] = lh.holders[a.holder] + " " + linKindNames[a.kind] + "@" + time.Duration(a.call).String()
		}
		s += "; may still take effect: " + strings.Join(as, ", ")
	}
	return s
}

// fmtTime renders a model time, with the sentinels as "∞" (never) and "?"
// (no return).
func fmtTime(t int64) string {
	switch t {
	case never:
		return "∞"
	case farReturn:
		return "?"
	}
	return time.Duration(t).String()
}

// fmtHolds renders a hold count range: "×2", "×1+" (unbounded), "×1..3".
func fmtHolds(lo, hi int32) string {
	switch {
	case lo == hi:
		return "×" + strconv.Itoa(int(lo))
	case hi == manyHolds:
		return "×" + strconv.Itoa(int(lo)) + "+"
	}
	return "×" + strconv.Itoa(int(lo)) + ".." + strconv.Itoa(int(hi))
}

// describeOp describes an operation as the models read it: holder, kind,
// outcome and result, and what makes it uncertain (armed, partial) or
// bounds its hold (watchdog, lease, the instant the nodes forgot it).
func (lh *linHistory) describeOp(o *linOp) string {
	var b strings.Builder
	b.WriteString(lh.holders[o.holder] + " " + linKindNames[o.kind] + " → " + o.out.String())
	if o.result != "" {
		b.WriteString(" " + strconv.Quote(o.result))
	}
	if o.out == outUnknown {
		b.WriteString(" (armed: may take effect any number of times from its call on)")
	}
	if o.partial {
		b.WriteString(fmt.Sprintf(" (released on %d of %d nodes)", o.released, o.nodes))
	}
	if o.kind == linAcquire || o.kind == linAcquireRead {
		if o.lease == never {
			b.WriteString(" (watchdog")
			if o.wdStop != never {
				b.WriteString(", unrenewed from " + fmtTime(o.wdStop))
			}
			b.WriteString(")")
		} else {
			b.WriteString(" (lease " + time.Duration(o.lease).String() + ")")
		}
	}
	if o.lostBy > 0 {
		b.WriteString(" (forgotten by the nodes from " + fmtTime(o.lostBy) + ")")
	}
	return b.String()
}

// prefix is the history of ops as it stood at time t: the operations called
// by t, those that had not returned by t with their outcome unknown. If ops
// are illegal so are they at any later t (an unknown outcome allows
// whatever the real one did), which makes the first illegal t a bisection.
func prefix(ops []linOp, t int64) []linOp {
	var out []linOp
	for _, o := range ops {
		if o.call > t {
			continue
		}
		if o.ret > t {
			o.out, o.ret = outUnknown, farReturn
		}
		out = append(out, o)
	}
	return out
}

// explain finds where an illegal lock history first goes wrong: the earliest
// return t such that the history as it stood at t is illegal. The
// operations returning at t are the culprits; the states the model allows
// just before them (from a linearization of the history with their outcomes
// made unknown) name the holders they collide with.
//
// Each Porcupine search (one per bisection step, and the last) has a budget
// of its own (bud's steps and memory, as a window's search): a search that
// runs out of it, or past bud.Wall, counts as not illegal, so the
// bisection moves on, and the state before the culprits is then unknown.
func (lh *linHistory) explain(h []history.Record, init *linState, ops []linOp, bud Budget) Violation {
	// search runs one budgeted search of ops'; illegal only when it
	// finished within its budget and found no order.
	search := func(sub []linOp) bool {
		b := newLinBudget(bud.Steps, bud.Memory)
		pops := lh.operations(sub)
		words := porcupineSearch(b, len(pops))
		res := porcupine.CheckOperationsTimeout(lh.windowModel(init, b, words), pops, bud.Wall)
		return res == porcupine.Illegal && !b.spent() // b is read only once the search finished
	}
	var rets []int64
	for _, o := range ops {
		if o.out != outUnknown {
			rets = append(rets, o.ret)
		}
	}
	slices.Sort(rets)
	rets = slices.Compact(rets)
	lo, hi := 0, len(rets)-1 // the whole history (rets[hi]) is known illegal
	for lo < hi {
		mid := (lo + hi) / 2
		if search(prefix(ops, rets[mid])) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	t := int64(0)
	if len(rets) > 0 {
		t = rets[lo]
	}
	relaxed := prefix(ops, t)
	var culprits []*linOp
	for i := range relaxed {
		if o := &relaxed[i]; o.ret == t && o.out != outUnknown {
			culprits = append(culprits, o)
		}
	}
	// Descriptions of the culprits, then make them unknown.
	from := t
	var what []string
	var holders []string
	for _, o := range culprits {
		from = min(from, o.call)
		what = append(what, fmt.Sprintf("%s [%v, %v]", lh.describeOp(o), time.Duration(o.call), time.Duration(o.ret)))
		holders = append(holders, lh.holders[o.holder])
	}
	for _, o := range culprits {
		o.out, o.ret = outUnknown, farReturn
	}
	before, others := lh.stateBeforeCulprits(init, relaxed, culprits, bud)
	holders = append(holders, others...)
	slices.Sort(holders)
	holders = slices.Compact(holders)
	n := 0
	for _, o := range ops {
		if o.call <= t {
			n++
		}
	}
	return Violation{
		Kind:    Linearizability,
		Lock:    lh.locks[ops[0].lock],
		Holders: holders,
		From:    time.Duration(from),
		To:      time.Duration(t),
		Detail: fmt.Sprintf("%s fits no order of the %d operations called by then (%s lock model); just before it the lock could be: %s",
			strings.Join(what, " and "), n, lh.kind, before),
		Faults: FaultsBefore(h, time.Duration(t), 5),
	}
}

// stateBeforeCulprits describes the states the lock could be in just
// before culprits (relaxed's, their outcomes made unknown), from one
// budgeted search of relaxed, and names the holders those states hold;
// "unknown (...)" when the search timed out or ran out of its budget.
func (lh *linHistory) stateBeforeCulprits(init *linState, relaxed []linOp, culprits []*linOp, bud Budget) (string, []string) {
	b := newLinBudget(bud.Steps, bud.Memory)
	pops := lh.operations(relaxed)
	words := porcupineSearch(b, len(pops))
	res, info := porcupine.CheckOperationsVerbose(lh.windowModel(init, b, words), pops, bud.Wall)
	switch {
	case res == porcupine.Illegal && b.spent(): // b is read only once the search finished
		return "unknown (the search ran out of its budget)", nil
	case res != porcupine.Ok:
		return "unknown (the search timed out)", nil
	}
	// Replayed without a budget: the search found the order within it.
	st, ok := stateBefore(lh.windowModel(init, nil, 0), info, culprits)
	if !ok {
		return "unknown (the search timed out)", nil
	}
	var holders []string
	for _, x := range st.set {
		for _, hi := range x.holders() {
			holders = append(holders, lh.holders[hi])
		}
	}
	return lh.describeState(st), holders
}

// stateBefore replays the linearization in info up to the first culprit
// and returns the model's state there.
func stateBefore(model porcupine.Model, info porcupine.LinearizationInfo, culprits []*linOp) (*linState, bool) {
	parts := info.PartialLinearizationsOperations()
	if len(parts) != 1 || len(parts[0]) == 0 {
		return nil, false
	}
	// A complete linearization: every longest one is the same sequence.
	seq := parts[0][0]
	state := model.Init()
	for _, op := range seq {
		if slices.Contains(culprits, op.Input.(*linOp)) {
			break
		}
		ok, next := model.Step(state, op.Input, op.Output)
		if !ok {
			return nil, false
		}
		state = next
	}
	st, ok := state.(*linState)
	return st, ok
}

// annotations for the visualization: faults, expiries, violations.
// undecided, when not "", says why the drawing's search did not decide: an
// "undecided" annotation over the whole history says so.
func (lh *linHistory) annotations(h []history.Record, vs []Violation, undecided string) []porcupine.Annotation {
	var out []porcupine.Annotation
	holderIdx := map[string]int{}
	for i, x := range lh.holders {
		holderIdx[x] = i
	}
	for i := range h {
		r := &h[i]
		switch {
		case r.Kind == history.KindFault:
			desc := r.Op
			for _, s := range []string{r.Node, r.Client} {
				if s != "" {
					desc += " " + s
				}
			}
			out = append(out, porcupine.Annotation{Tag: "faults", Start: r.T, End: r.T, Description: desc,
				Details: strings.TrimSpace(desc + " at " + r.At().String() + ": " + r.Detail), BackgroundColor: "#ffd6a5"})
		case r.Kind == history.KindOp && r.Op == history.OpExpire:
			if c, ok := holderIdx[holderName(r)]; ok {
				out = append(out, porcupine.Annotation{ClientId: c, Start: r.T, End: r.T, Description: "expire " + r.Lock,
					Details:         strings.TrimSpace(holderName(r) + "'s belief in " + r.Lock + " ended at " + r.At().String() + " " + r.Detail),
					BackgroundColor: "#e0e0e0"})
			}
		}
	}
	for _, v := range vs {
		a := porcupine.Annotation{Tag: "linearizability", Start: int64(v.From), End: int64(v.To),
			Description: "violated: " + v.Lock, Details: v.String(), BackgroundColor: "#ff9191"}
		if v.Kind == FalseRefusal { // availability: told no while its try held the lock
			a.Description, a.BackgroundColor = "false refusal: "+v.Lock, "#ffd27f"
		}
		out = append(out, a)
	}
	if undecided != "" {
		out = append(out, porcupine.Annotation{Tag: "linearizability", Start: 0, End: lh.end,
			Description: "undecided", Details: undecided, BackgroundColor: "#fff3a5"})
	}
	return out
}
