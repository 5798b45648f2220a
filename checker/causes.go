// Causes: the records a reader looks at first to see why a violation
// happened, and one line about each.

package checker

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
)

// FaultsBefore returns what a reader looks at first to see why something
// went wrong at t, in history order: the fault records of h at or before
// t, at most max of them (the latest); and the records that set the stage
// without being faults, which max does not crowd out: the node and client
// records of the topology's clock drifts (a drift configured from the
// start is as much a cause as a clock-drift fault), and each client's
// latest WAIT at or before t that fewer replicas acknowledged than the
// master had (what a failover can lose).
//
// It indexes h each time (a pass over h): an oracle that explains many
// violations indexes once (newCauses) and asks the index.
func FaultsBefore(h []history.Record, t time.Duration, max int) []history.Record {
	return newCauses(h).before(t, max)
}

// causes indexes a history's records that FaultsBefore returns, so that
// each question costs about the records returned and a binary search, not
// a pass over the history: with a violation per holding, a pass each made
// explaining them quadratic.
type causes struct {
	h []history.Record
	// faults, stage and waits are indices into h, in history order: the
	// fault records; the node and client records with a Detail (clock
	// drifts); each client's partly acknowledged WAITs.
	faults, stage []int
	waits         map[string][]int
	clients       []string // the keys of waits, sorted
	// sorted: every list above is in time order (At non-decreasing) as
	// well, so a binary search finds the records at or before a time;
	// otherwise before scans.
	sorted bool
}

// lazyCauses is h's causes index, made on the first question: most
// histories have no violation to explain.
type lazyCauses struct {
	h []history.Record
	c *causes
}

// before is FaultsBefore(l.h, t, 5), as every violation lists its causes.
func (l *lazyCauses) before(t time.Duration) []history.Record {
	if l.c == nil {
		l.c = newCauses(l.h)
	}
	return l.c.before(t, 5)
}

// newCauses indexes h.
func newCauses(h []history.Record) *causes {
	c := &causes{h: h, waits: map[string][]int{}, sorted: true}
	for i := range h {
		r := &h[i]
		switch {
		case r.Kind == history.KindFault:
			c.faults = c.note(c.faults, i)
		case (r.Kind == history.KindNode || r.Kind == history.KindClient) && r.Detail != "":
			c.stage = append(c.stage, i)
		case r.Kind == history.KindReq && r.Op == history.ReqWait && r.Outcome == history.OutcomeOK:
			if k, n, ok := history.ParseWaitDetail(r.Detail); ok && k < n {
				c.waits[r.Client] = c.note(c.waits[r.Client], i)
			}
		}
	}
	c.clients = slices.Sorted(maps.Keys(c.waits))
	return c
}

// note appends i to list, clearing sorted if it goes back in time.
func (c *causes) note(list []int, i int) []int {
	if n := len(list); n > 0 && c.h[list[n-1]].At() > c.h[i].At() {
		c.sorted = false
	}
	return append(list, i)
}

// upTo is how many of list (in time order) are at or before t; only when
// c.sorted.
func (c *causes) upTo(list []int, t time.Duration) int {
	return upTo(list, t, func(i int) time.Duration { return c.h[i].At() })
}

// lastAtOrBefore is the last max indices of list (history order) whose
// records are at or before t, in history order.
func (c *causes) lastAtOrBefore(list []int, t time.Duration, max int) []int {
	if c.sorted {
		n := c.upTo(list, t)
		return list[n-min(n, max) : n]
	}
	var out []int
	for j := len(list) - 1; j >= 0 && len(out) < max; j-- {
		if c.h[list[j]].At() <= t {
			out = append(out, list[j])
		}
	}
	slices.Reverse(out)
	return out
}

// before is FaultsBefore(c.h, t, max).
func (c *causes) before(t time.Duration, max int) []history.Record {
	var idx []int
	if max > 0 {
		idx = append(idx, c.lastAtOrBefore(c.faults, t, max)...)
	}
	for _, i := range c.stage {
		if c.h[i].At() <= t {
			idx = append(idx, i)
		}
	}
	for _, cl := range c.clients {
		idx = append(idx, c.lastAtOrBefore(c.waits[cl], t, 1)...)
	}
	slices.Sort(idx)
	var out []history.Record
	for _, i := range idx {
		out = append(out, c.h[i])
	}
	return out
}

// DescribeCause is one line about a record FaultsBefore returns: "after
// 5s failover m1: ..." for a fault ("after 1s partition [m1] | [r2] from
// 1s for 2s" for one on no single node or client), "m1's clock: drift
// +2000 ppm (from the topology)" for a drifting node or client, "after 1.2s c1's WAIT on m1: 1
// of 2 replicas acknowledged" for a WAIT.
func DescribeCause(r history.Record) string {
	switch r.Kind {
	case history.KindNode, history.KindClient:
		who := r.Node + r.Client
		return fmt.Sprintf("%s's clock: %s (from the topology)", who, r.Detail)
	case history.KindReq:
		return fmt.Sprintf("after %v %s's %s on %s: %s", r.At(), r.Client, strings.ToUpper(r.Op), r.Node, r.Detail)
	}
	target := strings.TrimSpace(r.Node + " " + r.Client)
	if target == "" { // a partition or heal: its detail names the sides
		return fmt.Sprintf("after %v %s %s", r.At(), r.Op, r.Detail)
	}
	return fmt.Sprintf("after %v %s %s: %s", r.At(), r.Op, target, r.Detail)
}
