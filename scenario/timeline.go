package scenario

// The static check of the timed faults (checkTimeline): a scripted fault
// with a time of its own that cannot act then (a crash of a node already
// down, a restart of one that is up, a failover of a group with no running
// replica left, a client crashed twice) is an error of the file, at the
// fault's line, found before any run: run, it would be skipped and the
// run would show a scenario other than the one the file describes.
//
// Only what the file alone decides is checked. A node, group or client
// that a fault bound to an operation (on) or a random fault (rates) may
// also change is left to the run, where a scripted fault that cannot act
// fails the expectation, named in the verdict (Skipped). The walk follows
// the simulation's rules: a failover crashes the master if it is up and
// promotes a running replica; a node restarted after its group failed
// over comes back as a replica of the new master; the steps of one instant
// run in the file's order, a crash's restart right after its crash.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/faults"
)

// stepKind is one state-changing step of a timed fault.
type stepKind int8

const (
	stepCrash stepKind = iota
	stepCrashRestart
	stepRestart
	stepFailover
	stepFailoverRejoin
	stepClientCrash
)

// timedStep is a step of scripted fault i at its time.
type timedStep struct {
	at   time.Duration
	i    int
	kind stepKind
}

// world is one state the timed faults may have left the nodes and clients
// in: a failover that may promote either of two running replicas (the
// more up-to-date, which only the run knows) splits the walk in two.
type world struct {
	up       map[string]bool   // nodes running
	master   map[string]string // group -> its master
	crashed  map[string]bool   // clients crashed for good
	acted    map[int]bool      // crash fault i -> its crash acted (so its restart will)
	why      map[string]string // node or client -> what last changed it
	promoted map[string]string // group -> what promoted its master
	// downBy is the fault whose step last took a node down; rejoin, the
	// master a failover with down crashed (faults.Failover.Down): its
	// rejoin restarts that node only if that failover's crash is what
	// keeps it down.
	downBy map[string]int
	rejoin map[int]string
}

// maxWorlds bounds the walk: past it (a long chain of failovers of groups
// with several replicas), the rest of the schedule is left to the run.
const maxWorlds = 256

// timeline is the walk's state: the worlds the steps so far may have
// left, and what the file alone does not decide.
type timeline struct {
	s       *Scenario
	worlds  []world
	members map[string][]string // group -> its nodes, master first
	dynamic map[string]bool     // nodes, groups and clients a bound or random fault may change
}

// checkTimeline walks s's timed faults in time order and fails the first
// step that can act in none of the worlds; objs are the faults' mappings.
func (d *decoder) checkTimeline(s *Scenario, objs []*obj) {
	if d.err != nil {
		return
	}
	tl := newTimeline(s)
	for _, st := range timedSteps(s) {
		if len(tl.worlds) > maxWorlds {
			return
		}
		if msg, field := tl.step(st); msg != "" {
			f := s.Faults[st.i].Fault
			d.failf(objs[st.i].at(field), fmt.Sprintf("faults[%d].%s", st.i, field), "%s cannot act: %s", stepName(f, st), msg)
			return
		}
	}
}

func newTimeline(s *Scenario) *timeline {
	tl := &timeline{s: s, members: map[string][]string{}, dynamic: map[string]bool{}}
	w := world{up: map[string]bool{}, master: map[string]string{}, crashed: map[string]bool{}, acted: map[int]bool{},
		why: map[string]string{}, promoted: map[string]string{}, downBy: map[string]int{}, rejoin: map[int]string{}}
	for _, n := range s.Nodes {
		g := n.Config.Name
		w.master[g] = g
		tl.members[g] = []string{g}
		for _, r := range n.Replicas {
			tl.members[g] = append(tl.members[g], r.Config.Name)
		}
		for _, m := range tl.members[g] {
			w.up[m] = true
		}
	}
	tl.worlds = []world{w}
	tl.markDynamic()
	return tl
}

// markDynamic marks what a fault bound to an operation or a random fault
// may change: its node, group or client; a group with such a node, and
// every node of such a group (whom a failover promotes depends on them).
func (tl *timeline) markDynamic() {
	s := tl.s
	for _, f := range s.Faults {
		on, ok := f.Fault.(faults.OnOp)
		if !ok {
			continue
		}
		switch in := on.Fault.(type) {
		case faults.Crash:
			tl.dynamic[in.Node] = true
		case faults.Restart:
			tl.dynamic[in.Node] = true
		case faults.Failover:
			tl.dynamic[in.Group] = true
		case faults.ClientCrash:
			tl.dynamic[in.Client] = true
		}
	}
	for _, g := range slices.Sorted(maps.Keys(tl.members)) {
		ms := tl.members[g]
		if s.HasRates && (s.Rates.Crash > 0 || (s.Rates.Failover > 0 && len(ms) > 1)) {
			tl.dynamic[g] = true
		}
		if slices.ContainsFunc(ms, func(m string) bool { return tl.dynamic[m] }) {
			tl.dynamic[g] = true
		}
		if tl.dynamic[g] {
			for _, m := range ms {
				tl.dynamic[m] = true
			}
		}
	}
}

// timedSteps are the state-changing steps of s's timed faults that fall
// within the run, in the order the simulation takes them: by time, then
// in the file's order (each fault schedules its steps when applied, in
// file order, and the steps of one instant run in that order).
func timedSteps(s *Scenario) []timedStep {
	var out []timedStep
	add := func(at time.Duration, i int, k stepKind) {
		if at <= s.Duration {
			out = append(out, timedStep{at, i, k})
		}
	}
	for i, f := range s.Faults {
		switch x := f.Fault.(type) {
		case faults.Crash:
			add(x.At, i, stepCrash)
			if !x.Stay {
				add(x.At+x.Down, i, stepCrashRestart)
			}
		case faults.Restart:
			add(x.At, i, stepRestart)
		case faults.Failover:
			add(x.At, i, stepFailover)
			if x.Down > 0 {
				add(x.At+x.Down, i, stepFailoverRejoin)
			}
		case faults.ClientCrash:
			add(x.At, i, stepClientCrash)
		}
	}
	slices.SortStableFunc(out, func(a, b timedStep) int { return cmp.Compare(a.at, b.at) })
	return out
}

// stepName names the step of f in errors: the fault's own name, or for a
// crash's restart "the restart at T of crash ...".
func stepName(f faults.Fault, st timedStep) string {
	switch st.kind {
	case stepCrashRestart:
		return fmt.Sprintf("the restart at %v of %s", st.at, f.Name())
	case stepFailoverRejoin:
		return fmt.Sprintf("the restart at %v of the master failed over by %s", st.at, f.Name())
	}
	return f.Name()
}

// step takes st in every world. A world where it cannot act goes on
// unchanged (the run would skip it there); when it can act in none, step
// says why (in the first world) and which of the fault's fields decides.
func (tl *timeline) step(st timedStep) (msg, field string) {
	field = "at"
	switch f := tl.s.Faults[st.i].Fault.(type) {
	case faults.Crash:
		if st.kind == stepCrashRestart {
			field = "down"
		}
	case faults.Failover:
		switch {
		case st.kind == stepFailoverRejoin:
			field = "down"
		case f.To != "":
			field = "to"
		}
	}
	var next []world
	failed := 0
	for _, w := range tl.worlds {
		ws, why := tl.stepIn(w, st)
		if why != "" {
			if failed == 0 {
				msg = why
			}
			failed++
			ws = []world{w}
		}
		next = append(next, ws...)
	}
	if failed == len(tl.worlds) {
		return msg, field
	}
	tl.worlds = dedupe(next)
	return "", ""
}

// stepIn takes st in w: the worlds it leaves, or why it cannot act there.
func (tl *timeline) stepIn(w world, st timedStep) ([]world, string) {
	by := fmt.Sprintf("at %v by faults[%d]", st.at, st.i)
	switch f := tl.s.Faults[st.i].Fault.(type) {
	case faults.Crash:
		switch {
		case tl.dynamic[f.Node]:
		case st.kind == stepCrash && !w.up[f.Node]:
			return nil, fmt.Sprintf("node %s is already down (%s)", f.Node, w.why[f.Node])
		case st.kind == stepCrash:
			w = w.clone()
			w.up[f.Node], w.acted[st.i], w.why[f.Node] = false, true, "crashed "+by
			w.downBy[f.Node] = st.i
		case !w.acted[st.i]:
		case w.up[f.Node]:
			return nil, fmt.Sprintf("node %s is up (%s)", f.Node, w.whyUp(f.Node))
		default:
			w = w.clone()
			w.up[f.Node], w.why[f.Node] = true, "restarted "+by+", its down time"
		}
	case faults.Restart:
		switch {
		case tl.dynamic[f.Node]:
		case w.up[f.Node]:
			return nil, fmt.Sprintf("node %s is up (%s)", f.Node, w.whyUp(f.Node))
		default:
			w = w.clone()
			w.up[f.Node], w.why[f.Node] = true, "restarted "+by
		}
	case faults.Failover:
		if !tl.dynamic[f.Group] {
			return tl.failoverStep(w, f, st, by)
		}
	case faults.ClientCrash:
		switch {
		case tl.dynamic[f.Client]:
		case w.crashed[f.Client]:
			return nil, fmt.Sprintf("client %s has already crashed (%s)", f.Client, w.why[f.Client])
		default:
			w = w.clone()
			w.crashed[f.Client], w.why[f.Client] = true, "crashed "+by
		}
	}
	return []world{w}, ""
}

// failoverStep takes st, a step of failover f, in w: the failover
// (failover), or its rejoin, which restarts the master it crashed if that
// crash is what keeps it down.
func (tl *timeline) failoverStep(w world, f faults.Failover, st timedStep, by string) ([]world, string) {
	if st.kind != stepFailoverRejoin {
		return tl.failover(w, f, st.i, by)
	}
	n, ok := w.rejoin[st.i]
	switch {
	case !ok: // the failover did not act, or crashed no master
	case w.up[n]:
		return nil, fmt.Sprintf("node %s is up (%s)", n, w.whyUp(n))
	case w.downBy[n] != st.i:
		return nil, fmt.Sprintf("node %s crashed again since (%s)", n, w.why[n])
	default:
		w = w.clone()
		w.up[n], w.why[n] = true, "back as a replica "+by+", its down time"
	}
	return []world{w}, ""
}

// failover takes failover f, fault i, in w: it crashes the master if it
// is up (noting that fault i took it down, and, with Down, that its rejoin
// restarts it) and promotes f.To, or else one of the running replicas: one
// world per replica it may promote (Sentinel's choice, the most
// up-to-date, is the run's to make).
func (tl *timeline) failover(w world, f faults.Failover, i int, by string) ([]world, string) {
	g := f.Group
	m := w.master[g]
	var cands []string
	for _, n := range tl.members[g] {
		if n != m && w.up[n] && (f.To == "" || n == f.To) {
			cands = append(cands, n)
		}
	}
	if len(cands) == 0 {
		if f.To != "" {
			return nil, fmt.Sprintf("%s is not a running replica of group %s (%s)", f.To, g, tl.describe(w, g))
		}
		return nil, fmt.Sprintf("group %s has no running replica left to promote (%s)", g, tl.describe(w, g))
	}
	out := make([]world, len(cands))
	for j, c := range cands {
		x := w.clone()
		if x.up[m] {
			x.up[m], x.why[m], x.downBy[m] = false, "crashed "+by+", the master it failed over", i
			if f.Down > 0 {
				x.rejoin[i] = m
			}
		}
		x.master[g], x.promoted[g] = c, "promoted "+by
		out[j] = x
	}
	return out, ""
}

// whyUp says why node is up in w: what restarted it, or that nothing took
// it down before.
func (w world) whyUp(node string) string {
	if why := w.why[node]; why != "" {
		return why
	}
	return "it has not crashed before"
}

// describe is the state of group g's nodes in w, for errors: "master r1
// (promoted at 1s by faults[0]); m1 down (crashed at 1s by faults[0], ...)".
func (tl *timeline) describe(w world, g string) string {
	m := w.master[g]
	parts := []string{"master " + m}
	if p := w.promoted[g]; p != "" {
		parts[0] += " (" + p + ")"
	}
	for _, n := range tl.members[g] {
		switch {
		case n == m:
		case w.up[n]:
			parts = append(parts, n+" up")
		default:
			parts = append(parts, fmt.Sprintf("%s down (%s)", n, w.why[n]))
		}
	}
	return strings.Join(parts, "; ")
}

func (w world) clone() world {
	return world{up: maps.Clone(w.up), master: maps.Clone(w.master), crashed: maps.Clone(w.crashed),
		acted: maps.Clone(w.acted), why: maps.Clone(w.why), promoted: maps.Clone(w.promoted),
		downBy: maps.Clone(w.downBy), rejoin: maps.Clone(w.rejoin)}
}

// key identifies what of w decides later steps (not the why strings).
func (w world) key() string {
	var b strings.Builder
	for _, n := range slices.Sorted(maps.Keys(w.up)) {
		fmt.Fprintf(&b, "%s=%v,", n, w.up[n])
	}
	for _, g := range slices.Sorted(maps.Keys(w.master)) {
		fmt.Fprintf(&b, "%s>%s,", g, w.master[g])
	}
	for _, c := range slices.Sorted(maps.Keys(w.crashed)) {
		fmt.Fprintf(&b, "%s!,", c)
	}
	for _, i := range slices.Sorted(maps.Keys(w.acted)) {
		fmt.Fprintf(&b, "%d:%v,", i, w.acted[i])
	}
	for _, n := range slices.Sorted(maps.Keys(w.downBy)) {
		fmt.Fprintf(&b, "%s<%d,", n, w.downBy[n])
	}
	for _, i := range slices.Sorted(maps.Keys(w.rejoin)) {
		fmt.Fprintf(&b, "%d^%s,", i, w.rejoin[i])
	}
	return b.String()
}

// dedupe drops the worlds equal to an earlier one.
func dedupe(ws []world) []world {
	seen := map[string]bool{}
	out := ws[:0]
	for _, w := range ws {
		if k := w.key(); !seen[k] {
			seen[k] = true
			out = append(out, w)
		}
	}
	return out
}
