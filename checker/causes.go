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
func FaultsBefore(h []history.Record, t time.Duration, max int) []history.Record {
	var faults []int
	stage := map[int]bool{}
	lastWait := map[string]int{} // client -> its latest partly acknowledged WAIT
	for i := range h {
		r := &h[i]
		if r.At() > t {
			continue
		}
		switch {
		case r.Kind == history.KindFault:
			faults = append(faults, i)
		case (r.Kind == history.KindNode || r.Kind == history.KindClient) && r.Detail != "":
			stage[i] = true
		case r.Kind == history.KindReq && r.Op == history.ReqWait && r.Outcome == history.OutcomeOK:
			if k, n, ok := history.ParseWaitDetail(r.Detail); ok && k < n {
				lastWait[r.Client] = i
			}
		}
	}
	if len(faults) > max {
		faults = faults[len(faults)-max:]
	}
	for _, i := range faults {
		stage[i] = true
	}
	for _, c := range slices.Sorted(maps.Keys(lastWait)) {
		stage[lastWait[c]] = true
	}
	var out []history.Record
	for _, i := range slices.Sorted(maps.Keys(stage)) {
		out = append(out, h[i])
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
