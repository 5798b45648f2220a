package realrun

// The run as the target of faults (faults.Target): the steps of the
// scripted faults, scheduled by the clock, on real servers and proxies.
// What it lacks of the simulation's capabilities (faults.RuleAdder,
// OpBinder) is what package faults reports it cannot run (Check); it
// pauses and crashes clients (worker.go) and moves nodes' clocks
// (clock.go).

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
)

var (
	_ faults.Target       = (*run)(nil)
	_ faults.ReplyDropper = (*run)(nil)
)

// action is a fault's step at a time of the run.
type action struct {
	at time.Duration
	do func()
}

// schedule runs acts, in time order, each at its time, until the run stops.
func (r *run) schedule(acts []action) {
	defer r.bg.Done()
	for _, a := range acts {
		if wait := a.at - r.rec.Since(); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-r.stopCtx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if r.stopCtx.Err() != nil {
			return
		}
		a.do()
	}
}

// Now is the real time since the history's zero.
func (r *run) Now() time.Duration { return r.rec.Since() }

// ActAt adds act to the steps the run takes at t. Every fault the real
// backend runs is scheduled by the clock, so every step is known before the
// run starts (start orders them); a step added later has no scheduler to
// run it and is refused. An error from act is skipOrFail's.
func (r *run) ActAt(t time.Duration, name string, act func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return errors.New("realrun: a fault step scheduled after the start")
	}
	r.acts = append(r.acts, action{t, func() {
		if err := act(); err != nil {
			r.skipOrFail(name, err)
		}
	}})
	return nil
}

// skipOrFail handles the error of a step of the fault named name: one that
// could not act (faults.ErrCannotAct: its node, group or client was not in
// a state it acts on, which a fault bound to an operation can bring about)
// is recorded as skipped, as the simulation records it, and the run's
// expectation fails on it (scenario.JudgeRun); any other fails the run: on
// real servers a step that cannot be taken is a broken harness, not a fact
// of the run.
func (r *run) skipOrFail(name string, err error) {
	if errors.Is(err, faults.ErrCannotAct) {
		r.rec.Skipped(name, err)
		return
	}
	if name != "" {
		err = fmt.Errorf("%s: %w", name, err)
	}
	r.fail(err)
}

// cannotAct is the error of a step that finds its target in a state it
// does not act on (faults.ErrCannotAct).
func cannotAct(format string, args ...any) error {
	return fmt.Errorf("realrun: %s: %w", fmt.Sprintf(format, args...), faults.ErrCannotAct)
}

// CheckNode reports a name that is no node of the run.
func (r *run) CheckNode(name string) error {
	if _, ok := r.servers[name]; !ok {
		return fmt.Errorf("realrun: unknown node %q", name)
	}
	return nil
}

// CheckClient reports a name that is no client of the run.
func (r *run) CheckClient(name string) error {
	if _, ok := r.cproxies[name]; !ok {
		return fmt.Errorf("realrun: unknown client %q", name)
	}
	return nil
}

// CheckGroup reports a name that is no replication group of the run.
func (r *run) CheckGroup(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.current[name]; !ok {
		return fmt.Errorf("realrun: unknown group %q", name)
	}
	return nil
}

// CrashNode kills node. Without persistence, what it held is gone from
// this instant (as in the simulation): the truth says so at once, not at
// the restart, so that a holder relying on it has silently lost it from
// now.
func (r *run) CrashNode(node string) error {
	if r.servers[node].State() == redistest.Down {
		return cannotAct("crash %s: node is already down", node)
	}
	if err := r.kill(node); err != nil {
		return err
	}
	r.lost(node)
	return nil
}

// kill kills node, recording the crash and not yet the loss of what it
// held (lost).
func (r *run) kill(node string) error {
	// No snapshot may straddle the kill (a read answered before it and
	// stamped after it would bring the key back).
	r.cl.snap.Lock()
	defer r.cl.snap.Unlock()
	return r.cl.Kill(node)
}

// lost records, for a node killed without persistence, that its keys are
// gone.
func (r *run) lost(node string) {
	if r.servers[node].Persistence() == redistest.PersistNone {
		r.cl.snap.Lock()
		defer r.cl.snap.Unlock()
		r.rec.Truth(r.rec.Since(), node, r.s.LockKey(), history.KeyState{})
	}
}

// RestartNode restarts node; once the run is stopping, a restart that
// fails (its snapshot cancelled) is no error.
func (r *run) RestartNode(node string) error {
	if st := r.servers[node].State(); st != redistest.Down {
		return cannotAct("restart %s: node is %v", node, st)
	}
	if err := r.cl.Restart(r.stopCtx, node); err != nil && r.stopCtx.Err() == nil {
		return err
	}
	return nil
}

// Failover kills group's master and promotes to (or the running replica
// with the highest replication offset), which becomes the group's master
// for the clients; the other replicas follow it.
func (r *run) Failover(group, to string) error {
	if err := r.canFailOver(group, to); err != nil {
		return err
	}
	if r.sen != nil {
		return r.sen.failover(group, to)
	}
	r.mu.Lock()
	old := r.current[group]
	var reps []string
	for rep, l := range r.links {
		if l.upstream == old {
			reps = append(reps, rep)
		}
	}
	r.mu.Unlock()
	slices.Sort(reps)
	if to == "" {
		to = r.mostAdvanced(reps)
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
	if r.servers[old].State() != redistest.Down {
		if err := r.kill(old); err != nil {
			r.fail(err) // the promotion goes on, as Sentinel's would
		} else {
			killed = true
		}
	}
	err := r.cl.Promote(r.stopCtx, to)
	if killed {
		r.lost(old)
	}
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.current[group] = to
	r.oldLinks = append(r.oldLinks, r.links[to].proxy)
	delete(r.links, to)
	r.mu.Unlock()
	r.notifyCurrent(group, to) // the clients' worker processes, if any
	var errs []error
	for _, rep := range reps {
		if rep != to {
			errs = append(errs, r.follow(rep, to))
		}
	}
	return errors.Join(errs...)
}

// canFailOver returns faults.ErrCannotAct when group has no running node
// but its current master (or to is not one), as the simulation's failover
// finds no running replica to promote.
func (r *run) canFailOver(group, to string) error {
	r.mu.Lock()
	old := r.current[group]
	r.mu.Unlock()
	for _, n := range r.s.Nodes {
		if n.Config.Name != group {
			continue
		}
		names := []string{group}
		for _, rp := range n.Replicas {
			names = append(names, rp.Config.Name)
		}
		for _, name := range names {
			if name != old && (to == "" || name == to) && r.servers[name].State() == redistest.Running {
				return nil
			}
		}
	}
	if to != "" {
		return cannotAct("failover %s: %q is not a running replica", group, to)
	}
	return cannotAct("failover %s: no running replica to promote", group)
}

// mostAdvanced is the running replica of reps with the highest replication
// offset ("" if none answers), as Sentinel picks.
func (r *run) mostAdvanced(reps []string) string {
	best, to := int64(-1), ""
	for _, rep := range reps {
		if r.servers[rep].State() != redistest.Running {
			continue
		}
		info, err := r.servers[rep].Info("replication")
		if err != nil {
			continue
		}
		if off, _ := strconv.ParseInt(info["slave_repl_offset"], 10, 64); off > best {
			best, to = off, rep
		}
	}
	return to
}

// follow makes replica rep replicate master through a new link.
func (r *run) follow(rep, master string) error {
	lp, err := redistest.ListenProxy(r.servers[master].Addr)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.oldLinks = append(r.oldLinks, r.links[rep].proxy)
	r.links[rep] = &link{proxy: lp, upstream: master}
	r.mu.Unlock()
	return r.servers[rep].ReplicaOf(lp.Addr)
}

// Partition cuts every proxy between a member of a and one of b
// (client-to-node proxies, and replication links) at from, and heals them
// at until (0: never).
func (r *run) Partition(a, b []string, from, until time.Duration) error {
	if err := r.ActAt(from, "", func() error { r.cut(a, b, true); return nil }); err != nil || until <= 0 {
		return err
	}
	return r.ActAt(until, "", func() error { r.cut(a, b, false); return nil })
}

// cut cuts (or heals) the proxies between a and b, and records it. A
// proxy cut by several partitions heals with the last.
func (r *run) cut(a, b []string, cut bool) {
	var ps []*redistest.Proxy
	r.mu.Lock()
	pair := func(x, y string) {
		if m, ok := r.cproxies[x]; ok {
			if px, ok := m[y]; ok {
				ps = append(ps, px)
			}
		}
		if l, ok := r.links[x]; ok && l.upstream == y {
			ps = append(ps, l.proxy)
		}
	}
	for _, x := range a {
		for _, y := range b {
			pair(x, y)
			pair(y, x)
		}
	}
	for _, px := range ps {
		if cut {
			if r.cuts[px]++; r.cuts[px] == 1 {
				px.Cut()
			}
		} else if r.cuts[px] > 0 {
			if r.cuts[px]--; r.cuts[px] == 0 {
				px.Heal()
			}
		}
	}
	r.mu.Unlock()
	op := history.FaultPartition
	if !cut {
		op = history.FaultHeal
	}
	r.rec.Fault(op, "", "", fmt.Sprintf("%v | %v", a, b))
}

// DropReplies drops every reply on the proxies of client and node (all
// when empty) from from until until (0: the end).
func (r *run) DropReplies(client, node string, from, until time.Duration, name string) error {
	if err := r.ActAt(from, "", func() error { r.dropReplies(client, node, name, true); return nil }); err != nil || until <= 0 {
		return err
	}
	return r.ActAt(until, "", func() error { r.dropReplies(client, node, name, false); return nil })
}

// dropReplies starts (or ends) dropping every reply on the matching
// proxies, and records it.
func (r *run) dropReplies(client, node, name string, on bool) {
	all := func([]string) bool { return true }
	for _, p := range r.proxiesOf(client, node) {
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
	r.rec.Fault(op, node, client, name)
}

// proxiesOf are the client-to-node proxies of client and node ("" every
// client, every node).
func (r *run) proxiesOf(client, node string) []*redistest.Proxy {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*redistest.Proxy
	for cname, m := range r.cproxies {
		if client != "" && client != cname {
			continue
		}
		for n, p := range m {
			if node == "" || node == n {
				out = append(out, p)
			}
		}
	}
	return out
}
