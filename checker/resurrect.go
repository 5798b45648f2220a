// The resurrected-lock oracle: a hold the master shows for an owner that
// holds nothing by belief.

package checker

import (
	"fmt"
	"slices"
	"time"
)

// resurrected is the Resurrected violation for k's count: at t the master
// of group shows got holds for an owner whose releases all returned (no
// unmatched acquire). Nobody holds the lock by belief, yet the master names
// a holder, so every other client waits until its TTL: a release lost in a
// failover (the promoted replica never got it) brings a released lock back.
// It is availability, not safety (Kind.Safety): no two holders, only a
// wait. ReentrancyViolations finds these in its comparison of counts, as a
// disagreement with an owner that holds nothing.
func (tr *Truth) resurrected(k heldCount, group string, t time.Duration, got int) Violation {
	return Violation{
		Kind: Resurrected, Lock: k.lock, Holders: []string{k.holder}, From: t, To: t,
		Detail: fmt.Sprintf("the master %s shows %s for %s, which holds nothing (its releases ended)%s: nobody holds the lock, and every other client waits for its TTL",
			tr.Master(group, t), counted(got, "hold"), k.holder, tr.broughtBack(group, t)),
		Faults: tr.faultsBefore(t),
	}
}

// broughtBack names the failover of group at t, or the crash or restart
// of its master at t, if there was one, as the cause of a hold the master
// shows at t: a failover to a replica that still had it, or a node that
// persists to a file (a crash makes the node what its restart will load,
// everysec's last fsync).
func (tr *Truth) broughtBack(group string, t time.Duration) string {
	m := tr.Master(group, t)
	if slices.Contains(tr.failAt[group], t) {
		return fmt.Sprintf(", brought back by the failover to %s", m)
	}
	for _, c := range tr.downs[m] {
		switch {
		case c.t == t && c.down:
			return fmt.Sprintf(", brought back by the crash of %s (what its restart loads)", m)
		case c.t == t:
			return fmt.Sprintf(", brought back by the restart of %s", m)
		}
	}
	return ""
}
