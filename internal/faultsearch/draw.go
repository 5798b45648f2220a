// Package faultsearch draws fault schedules with rapid and runs the
// searches over them that shrink a failing schedule: what locksim's fact
// searches (package props) and a user's search of their own lock
// (locktest.Search) share.
//
// A schedule is drawn as small integers and durations (times in steps of
// 100 ms, lengths in milliseconds, names picked from the run's topology),
// so that rapid shrinks a failing one to the simplest schedule that still
// fails: fewer faults, earlier, shorter, on the first node or client.
package faultsearch

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/setup"
)

// Names are the names of a run's topology that a fault is drawn against:
// its nodes, clients and replication groups, each in a fixed order. A
// *sim.World has them, and so does any faults.Topology.
type Names interface {
	Nodes() []string
	Clients() []string
	Groups() []string
	// GroupSize is the number of nodes of group (master and replicas).
	GroupSize(group string) int
}

// Kinds are the fault kinds Space.Fault draws, in the scenario files'
// spelling.
var Kinds = []string{"failover", "crash", "pause", "client-crash", "clock-jump", "drop-replies", "drop-requests", "delay", "duplicate"}

// Space is what a search draws schedules from.
type Space struct {
	// Kinds are the fault kinds to draw (from Kinds).
	Kinds []string
	// Dur is the run's length: an instant fault's time is drawn in [0,
	// Dur], a link fault's window starts in it.
	Dur time.Duration
	// Max is the most faults a schedule holds (it may hold none).
	Max int
	// Ops, when set, are the operations a fault may be bound to instead of
	// a time (faults.OnOp: "pause c1 when its 2nd release is applied"):
	// each fault then also draws whether it is bound, and to which op of
	// which client. A fault that must land between two requests of one
	// operation (a crash between a lock's SETNX and its EXPIRE) is found
	// this way and almost never by a time. Without Ops nothing more is
	// drawn, so a search without them draws what it always drew.
	Ops []string
}

// Draw draws a seed in [1, 2^20] and a schedule of up to sp.Max faults
// against n's names.
func (sp Space) Draw(t *rapid.T, n Names) (uint64, faults.Schedule) {
	seed := rapid.Uint64Range(1, 1<<20).Draw(t, "seed")
	count := rapid.IntRange(0, sp.Max).Draw(t, "faults")
	var sched faults.Schedule
	for i := 0; i < count; i++ {
		sched = append(sched, sp.Fault(t, n, i))
	}
	return seed, sched
}

// Fault draws fault i of a schedule: one of sp.Kinds against n's names,
// within sp.Dur, bound to an operation when sp.Ops allow it and the draw
// says so (decided before its time, which a bound fault does not draw). A
// kind with nothing to act on (a failover without a replicated group)
// fails t as a setup error.
func (sp Space) Fault(t *rapid.T, n Names, i int) faults.Fault {
	kind := rapid.SampledFrom(sp.Kinds).Draw(t, fmt.Sprintf("kind%d", i))
	bound := len(sp.Ops) > 0 && rapid.Bool().Draw(t, fmt.Sprintf("bound%d", i))
	ms := func(label string, lo, hi int) time.Duration {
		return time.Duration(rapid.IntRange(lo, hi).Draw(t, fmt.Sprintf("%s%d", label, i))) * time.Millisecond
	}
	at := func(label string) time.Duration {
		if bound {
			return 0 // the operation decides
		}
		return time.Duration(rapid.IntRange(0, int(sp.Dur/(100*time.Millisecond))).Draw(t, fmt.Sprintf("%s%d", label, i))) * 100 * time.Millisecond
	}
	pick := func(label string, from []string) string {
		if len(from) == 0 { // a setup error, not a finding: the searches tell them apart
			t.Fatalf("setup: nothing to draw a %s from", label)
		}
		return rapid.SampledFrom(from).Draw(t, fmt.Sprintf("%s%d", label, i))
	}
	var f faults.Fault
	switch kind {
	case "failover":
		var replicated []string
		for _, g := range n.Groups() {
			if n.GroupSize(g) > 1 {
				replicated = append(replicated, g)
			}
		}
		f = faults.Failover{At: at("at"), Group: pick("group", replicated)}
	case "crash":
		f = faults.Crash{At: at("at"), Node: pick("node", n.Nodes()), Down: ms("down", 0, 10000)}
	case "pause":
		f = faults.Pause{At: at("at"), Client: pick("client", n.Clients()), For: ms("for", 0, 20000)}
	case "client-crash":
		f = faults.ClientCrash{At: at("at"), Client: pick("client", n.Clients())}
	case "clock-jump":
		f = faults.ClockJump{At: at("at"), Node: pick("node", n.Nodes()), By: ms("by", -20000, 20000)}
	case "drop-replies", "drop-requests", "delay", "duplicate":
		lf := faults.LinkFault{Kind: faults.LinkKind(kind), From: at("from")}
		if !bound {
			lf.Until = lf.From + ms("len", 1, 2000)
		}
		lf.Client = pick("client", n.Clients())
		lf.P = float64(rapid.IntRange(1, 10).Draw(t, fmt.Sprintf("p%d", i))) / 10
		if kind == "drop-replies" || kind == "drop-requests" {
			lf.Node = pick("node", n.Nodes())
		}
		if kind == "delay" {
			lf.Delay = setup.Fixed(ms("delay", 1, 5000))
		}
		f = lf
	default:
		panic("faultsearch: unknown fault kind " + kind)
	}
	if bound {
		return sp.bind(t, n, f, i)
	}
	return f
}

// bind binds f, drawn without a time, to an operation of sp.Ops: the nth
// op of a client (the fault's own client, if it has one: "pause c1 when
// its 2nd release is applied"; a link fault's links are the op's
// client's), an instant fault at an event of it (its call, its first
// request applied, its return) some milliseconds after, a link fault on
// its first messages.
func (sp Space) bind(t *rapid.T, n Names, f faults.Fault, i int) faults.Fault {
	sel := setup.OpSelector{
		Op:  rapid.SampledFrom(sp.Ops).Draw(t, fmt.Sprintf("op%d", i)),
		Nth: rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("nth%d", i)),
	}
	switch x := f.(type) {
	case faults.LinkFault:
		sel.Client = x.Client
		msgs := rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("messages%d", i))
		return faults.OnOp{Trigger: faults.Trigger{Op: sel, Messages: msgs}, Fault: x}
	case faults.Pause:
		sel.Client = x.Client
	case faults.ClientCrash:
		sel.Client = x.Client
	default:
		sel.Client = rapid.SampledFrom(n.Clients()).Draw(t, fmt.Sprintf("opclient%d", i))
	}
	// Half the faults act at the event itself (after 0): between two
	// requests of the op, where a time almost never falls.
	after := rapid.OneOf(rapid.Just(0), rapid.IntRange(1, 2000)).Draw(t, fmt.Sprintf("after%d", i))
	tr := faults.Trigger{Op: sel,
		Event: rapid.SampledFrom(setup.OpEvents).Draw(t, fmt.Sprintf("event%d", i)),
		After: time.Duration(after) * time.Millisecond}
	return faults.OnOp{Trigger: tr, Fault: f}
}
