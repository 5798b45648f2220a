package sim

// The World as the target of faults: faults.Target and every capability
// package faults asks of a target (ClientPauser, ClientCrasher, ClockSetter,
// RuleAdder, OpBinder). The methods name what a fault does and look the
// node or client up when it does it, so that a fault's value carries names,
// not pointers into one world.

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
)

// ActAt runs act at world time t in the scheduler, as At does. An error
// from act is recorded as a history.FaultSkipped fault, "name: error": a
// fault that cannot act when its time comes (a crash of a node already
// down) is a fact of the run, not a reason to stop it.
func (w *World) ActAt(t time.Duration, name string, act func() error) error {
	return w.At(t, w.orSkip(name, act))
}

// ActOnOp is OnOp for an act that may fail, recorded as ActAt records it.
func (w *World) ActOnOp(sel setup.OpSelector, ev setup.OpEvent, after time.Duration, name string, act func() error) error {
	return w.OnOp(sel, ev, after, name, w.orSkip(name, act))
}

// orSkip runs act, recording its error as a skipped fault named name.
func (w *World) orSkip(name string, act func() error) func() {
	return func() {
		if err := act(); err != nil {
			w.RecordSkipped(name, "", err)
		}
	}
}

// RecordSkipped records that the fault named name could not act, because
// of err, as a history.FaultSkipped fault (history.SkippedDetail: "name:
// err"). value marks whose
// fault it was: "" for the world's own ActAt and ActOnOp (a fault drawn
// from rates), history.SkippedScripted for a fault the scenario scripted,
// which records its skips itself (package scenario).
func (w *World) RecordSkipped(name, value string, err error) {
	w.hist.add(history.Record{Kind: history.KindFault, T: int64(w.now), Op: history.FaultSkipped, Value: value, Detail: history.SkippedDetail(name, err)})
}

// CheckNode returns Node's error for name, if any.
func (w *World) CheckNode(name string) error { _, err := w.Node(name); return err }

// CheckClient returns Client's error for name, if any.
func (w *World) CheckClient(name string) error { _, err := w.Client(name); return err }

// CheckGroup returns Group's error for name, if any.
func (w *World) CheckGroup(name string) error { _, err := w.Group(name); return err }

// CrashNode crashes node name (Node.Crash).
func (w *World) CrashNode(name string) error {
	n, err := w.Node(name)
	if err != nil {
		return err
	}
	return n.Crash()
}

// RestartNode restarts node name (Node.Restart).
func (w *World) RestartNode(name string) error {
	n, err := w.Node(name)
	if err != nil {
		return err
	}
	return n.Restart()
}

// FailoverSteps are a failover of group (Failover) and its rejoin: when
// the failover crashed the group's master, the rejoin restarts that node
// (Node.Restart), which makes it a replica of the group's master then: a
// supervisor restarting the process and Sentinel repointing it. The
// restart is that crash's only: a node something else restarted in
// between, or that crashed again since (its own fault restarts it), is
// left alone, and the skip recorded.
func (w *World) FailoverSteps(group, to string) (failover, rejoin func() error) {
	var old *Node
	crash := -1
	failover = func() error {
		g, err := w.Group(group)
		if err != nil {
			return err
		}
		m := g.master
		wasUp := m.up
		if err := w.Failover(group, to); err != nil || !wasUp {
			return err
		}
		old, crash = m, m.crashes
		return nil
	}
	rejoin = func() error {
		switch {
		case old == nil:
			return nil // the failover crashed no master
		case old.up || old.crashes != crash:
			return fmt.Errorf("sim: restart %s: it was restarted, or restarted and crashed again, since its failover", old.name)
		}
		return old.Restart()
	}
	return failover, rejoin
}

// Partition is Network.Partition without a name: the record names the
// sides and the window.
func (w *World) Partition(a, b []string, from, until time.Duration) error {
	return w.net.Partition("", a, b, from, until)
}

// PauseClient pauses client name for d (Client.Pause).
func (w *World) PauseClient(name string, d time.Duration) error {
	c, err := w.Client(name)
	if err != nil {
		return err
	}
	return c.Pause(d)
}

// CrashClient crashes client name (Client.Crash).
func (w *World) CrashClient(name string) error {
	c, err := w.Client(name)
	if err != nil {
		return err
	}
	return c.Crash()
}

// JumpClock moves the clock of node or client name by by (Node.JumpClock,
// Client.JumpClock).
func (w *World) JumpClock(name string, by time.Duration) error {
	if n, ok := w.nodes[name]; ok {
		n.JumpClock(by)
		return nil
	}
	if c, ok := w.clients[name]; ok {
		c.JumpClock(by)
		return nil
	}
	return fmt.Errorf("sim: unknown node or client %q", name)
}

// SetDrift sets the clock rate error of node or client name (Node.SetDrift,
// Client.SetDrift).
func (w *World) SetDrift(name string, ppm int64) error {
	if n, ok := w.nodes[name]; ok {
		return n.SetDrift(ppm)
	}
	if c, ok := w.clients[name]; ok {
		return c.SetDrift(ppm)
	}
	return fmt.Errorf("sim: unknown node or client %q", name)
}

// AddRule adds a link rule to the world's network (Network.AddRule).
func (w *World) AddRule(r setup.Rule) error { return w.net.AddRule(r) }

// CheckRule returns what AddRule would reject in r, adding nothing.
func (w *World) CheckRule(r setup.Rule) error { return w.net.checkRule(r) }
