package realrun

// The run as the target of faults (faults.Target): the steps of the
// scripted faults, scheduled by the clock, on real servers and proxies.
// What it lacks of the simulation's capabilities (faults.RuleAdder,
// OpBinder) is what package faults reports it cannot run (Check); it
// pauses and crashes clients (worker.go), moves nodes' clocks (clock.go)
// and binds faults to operations (onop.go).

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
)

var (
	_ faults.Target       = (*target)(nil)
	_ faults.ReplyDropper = (*target)(nil)
)

// target is the run as the target of faults: it turns their steps into
// acts on the servers and proxies (srv), the worker processes (wk) and the
// triggers bound to operations (trig), each recorded in the history (h).
// mu guards acts and started: the steps collected before the run starts
// (ActAt), which start sorts and hands to the scheduler; the rest of its
// state is its parts'.
type target struct {
	s    *scenario.Scenario
	h    *hist
	srv  *servers
	trig *triggers
	wk   *workers
	life *tasks
	errs *failures

	mu      sync.Mutex
	acts    []action
	started bool
	// kills counts each node's kills (kill), so that a failover's rejoin
	// can tell that its node went down again since (FailoverSteps).
	kills map[string]int
}

// action is a fault's step at a time of the run.
type action struct {
	at time.Duration
	do func()
}

// start applies the scripted faults to the run, closes the lists of steps
// and triggers, runs the steps due at 0 before any client starts, and
// returns the others, in time order (steps at one time in the order the
// faults made them).
func (t *target) start() ([]action, error) {
	var sched faults.Schedule
	for _, f := range t.s.Faults {
		sched = append(sched, f.Fault)
	}
	if err := sched.Apply(t); err != nil {
		return nil, fmt.Errorf("%s: %w", t.s.File, err)
	}
	t.mu.Lock()
	acts := t.acts
	t.acts, t.started = nil, true
	t.mu.Unlock()
	t.trig.close()
	slices.SortStableFunc(acts, func(a, b action) int { return int(a.at - b.at) })
	i := 0
	for ; i < len(acts) && acts[i].at <= 0; i++ {
		acts[i].do()
	}
	return acts[i:], nil
}

// schedule runs acts, in time order, each at its time, until the run stops.
func (t *target) schedule(acts []action) {
	for _, a := range acts {
		if wait := a.at - t.h.rec.Since(); wait > 0 {
			tm := time.NewTimer(wait)
			select {
			case <-t.life.ctx.Done():
				tm.Stop()
				return
			case <-tm.C:
			}
		}
		if t.life.ctx.Err() != nil {
			return
		}
		a.do()
	}
}

// Now is the real time since the history's zero.
func (t *target) Now() time.Duration { return t.h.rec.Since() }

// ActAt adds act to the steps the run takes at at. Every fault the real
// backend runs is scheduled by the clock, so every step is known before the
// run starts (start orders them); a step added later has no scheduler to
// run it and is refused. An error from act is skipOrFail's.
func (t *target) ActAt(at time.Duration, name string, act func() error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		return errors.New("realrun: a fault step scheduled after the start")
	}
	t.acts = append(t.acts, action{at, func() {
		if err := act(); err != nil {
			t.errs.skipOrFail(name, err)
		}
	}})
	return nil
}

// cannotAct is the error of a step that finds its target in a state it
// does not act on (faults.ErrCannotAct).
func cannotAct(format string, args ...any) error {
	return fmt.Errorf("realrun: %s: %w", fmt.Sprintf(format, args...), faults.ErrCannotAct)
}

// CheckNode reports a name that is no node of the run.
func (t *target) CheckNode(name string) error {
	if _, ok := t.srv.byName[name]; !ok {
		return fmt.Errorf("realrun: unknown node %q", name)
	}
	return nil
}

// CheckClient reports a name that is no client of the run.
func (t *target) CheckClient(name string) error {
	if !t.srv.isClient(name) {
		return fmt.Errorf("realrun: unknown client %q", name)
	}
	return nil
}

// CheckGroup reports a name that is no replication group of the run.
func (t *target) CheckGroup(name string) error { return t.srv.checkGroup(name) }

// CrashNode kills node. Without persistence, what it held is gone from
// this instant (as in the simulation): the truth says so at once, not at
// the restart, so that a holder relying on it has silently lost it from
// now.
func (t *target) CrashNode(node string) error {
	if t.srv.byName[node].State() == redistest.Down {
		return cannotAct("crash %s: node is already down", node)
	}
	if err := t.kill(node); err != nil {
		return err
	}
	t.lost(node)
	return nil
}

// kill kills node, recording the crash and not yet the loss of what it
// held (lost).
func (t *target) kill(node string) error {
	// No snapshot may straddle the kill (a read answered before it and
	// stamped after it would bring the key back).
	t.h.cl.snap.Lock()
	defer t.h.cl.snap.Unlock()
	t.mu.Lock()
	if t.kills == nil {
		t.kills = map[string]int{}
	}
	t.kills[node]++
	t.mu.Unlock()
	return t.h.cl.Kill(node)
}

// killsOf is how many times node was killed.
func (t *target) killsOf(node string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.kills[node]
}

// lost records, for a node killed without persistence, that its watched
// keys are gone.
func (t *target) lost(node string) {
	if t.srv.byName[node].Persistence() == redistest.PersistNone {
		t.h.cl.snap.Lock()
		defer t.h.cl.snap.Unlock()
		at := t.h.rec.Since()
		for _, k := range t.h.cl.watched() {
			t.h.rec.Truth(at, node, k, history.KeyState{})
		}
	}
}

// RestartNode restarts node; once the run is stopping, a restart that
// fails (its snapshot cancelled) is no error.
func (t *target) RestartNode(node string) error {
	if st := t.srv.byName[node].State(); st != redistest.Down {
		return cannotAct("restart %s: node is %v", node, st)
	}
	if err := t.h.cl.Restart(t.life.ctx, node); err != nil && t.life.ctx.Err() == nil {
		return err
	}
	return nil
}

var _ faults.MasterRejoiner = (*target)(nil)

// FailoverSteps are Failover and its rejoin, as the simulation's
// World.FailoverSteps: when the failover killed the group's master, the
// rejoin brings that node back as a replica of the group's master then:
// the process restarted and made to replicate through a new link
// (servers.follow). A node that is not down then (something else
// restarted it), or that was killed again since (its own fault restarts
// it), is left alone, the skip recorded. Not under Sentinel, whose
// sentinels promote seconds after the kill, whenever they agree: Check
// refuses a failover's down there.
func (t *target) FailoverSteps(group, to string) (failover, rejoin func() error) {
	old, kills := "", 0
	failover = func() error {
		m := t.srv.master(group)
		wasUp := t.srv.byName[m].State() == redistest.Running
		if err := t.Failover(group, to); err != nil || !wasUp || t.srv.byName[m].State() != redistest.Down {
			return err
		}
		old, kills = m, t.killsOf(m)
		return nil
	}
	rejoin = func() error {
		switch {
		case old == "":
			return nil // the failover killed no master
		case t.srv.byName[old].State() == redistest.Down && t.killsOf(old) != kills:
			return cannotAct("restart %s: it was restarted and killed again since its failover", old)
		}
		if err := t.RestartNode(old); err != nil {
			return err
		}
		return t.srv.follow(old, t.srv.master(group))
	}
	return failover, rejoin
}

// Failover kills group's master and promotes to (or the running replica
// with the highest replication offset), which becomes the group's master
// for the clients; the other replicas follow it. Under engine sentinel the
// sentinels promote (sentinelEngine.ask).
func (t *target) Failover(group, to string) error {
	if err := t.canFailOver(group, to); err != nil {
		return err
	}
	if sen := t.srv.sen; sen != nil {
		old, err := sen.ask(group, to)
		if err != nil || t.srv.byName[old].State() != redistest.Running {
			return err // already down: the sentinels fail it over anyway
		}
		if sen.opts.Freeze {
			return t.h.cl.Pause(old)
		}
		return t.CrashNode(old)
	}
	old, reps := t.srv.masterOf(group)
	slices.Sort(reps)
	if to == "" {
		to = t.srv.mostAdvanced(reps)
	}
	if !slices.Contains(reps, to) {
		return fmt.Errorf("failover %s: no running replica %q to promote", group, to)
	}
	// The old master's loss is recorded after the promotion's failover
	// record: the simulation's failover moves the group's authority at
	// the instant it kills the master, and the milliseconds between the
	// kill and REPLICAOF NO ONE here are no window in which a holder's
	// key was gone from its group's master.
	killed := false
	if t.srv.byName[old].State() != redistest.Down {
		if err := t.kill(old); err != nil {
			t.errs.fail(err) // the promotion goes on, as Sentinel's would
		} else {
			killed = true
		}
	}
	err := t.h.cl.Promote(t.life.ctx, to)
	if killed {
		t.lost(old)
	}
	if err != nil {
		return err
	}
	t.srv.promoted(group, to)
	t.wk.notifyCurrent(group, to) // the clients' worker processes, if any
	var errs []error
	for _, rep := range reps {
		if rep != to {
			errs = append(errs, t.srv.follow(rep, to))
		}
	}
	return errors.Join(errs...)
}

// canFailOver returns faults.ErrCannotAct when group has no running node
// but its current master (or to is not one), as the simulation's failover
// finds no running replica to promote.
func (t *target) canFailOver(group, to string) error {
	old := t.srv.master(group)
	for _, n := range t.s.Nodes {
		if n.Config.Name != group {
			continue
		}
		names := []string{group}
		for _, rp := range n.Replicas {
			names = append(names, rp.Config.Name)
		}
		for _, name := range names {
			if name != old && (to == "" || name == to) && t.srv.byName[name].State() == redistest.Running {
				return nil
			}
		}
	}
	if to != "" {
		return cannotAct("failover %s: %q is not a running replica", group, to)
	}
	return cannotAct("failover %s: no running replica to promote", group)
}

// Partition cuts every proxy between a member of a and one of b
// (client-to-node proxies, and replication links) at from, and heals them
// at until (0: never).
func (t *target) Partition(a, b []string, from, until time.Duration) error {
	if err := t.ActAt(from, "", func() error { t.cut(a, b, true); return nil }); err != nil || until <= 0 {
		return err
	}
	return t.ActAt(until, "", func() error { t.cut(a, b, false); return nil })
}

// cut cuts (or heals) the proxies between a and b (servers.cut), and
// records it.
func (t *target) cut(a, b []string, cut bool) {
	t.srv.cut(a, b, cut)
	op := history.FaultPartition
	if !cut {
		op = history.FaultHeal
	}
	t.h.rec.Fault(op, "", "", fmt.Sprintf("%v | %v", a, b))
}

// DropReplies drops every reply on the proxies of client and node (all
// when empty) from from until until (0: the end).
func (t *target) DropReplies(client, node string, from, until time.Duration, name string) error {
	if err := t.ActAt(from, "", func() error { t.dropReplies(client, node, name, true); return nil }); err != nil || until <= 0 {
		return err
	}
	return t.ActAt(until, "", func() error { t.dropReplies(client, node, name, false); return nil })
}

// dropReplies starts (or ends) dropping every reply on the matching
// proxies, and records it.
func (t *target) dropReplies(client, node, name string, on bool) {
	all := func([]string) bool { return true }
	for _, p := range t.srv.proxiesOf(client, node) {
		if on {
			linkRules(p, faults.DropReplies, "", 0, nil, all)
		} else {
			p.ClearRules()
		}
	}
	op := string(faults.DropReplies)
	if !on {
		op += "-end"
	}
	t.h.rec.Fault(op, node, client, name)
}
