// The limits of what a simulated run may grow to (limits.go has those of a
// file): the history is held in memory and checked whole, so a run is
// bounded by what fits and checks.

package scenario

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/history"
)

// MaxRecords bounds the history a simulated run may record. The history is
// held in memory until the run ends and is checked whole (the oracles and
// the linearizability check read all of it), so its size is the run's
// memory: about 340 bytes per record held after the run (BenchmarkLimits:
// the records, their req records and the world's indexes), and about
// 1.3 KB per record of peak RSS once the check's working set and the
// garbage collector's headroom are counted (TestSoakMemory: 1.8 million
// records peaked at 2.3 GB). At 1,500,000 records a run stays near 2 GB
// and its check (the oracles and the windowed linearizability check of
// up to about 750,000 lock operations) under a minute.
//
// The bound is on the history's weight (history.Weight), not its records
// alone: a truth record copies its key's whole collection, so behind a
// fair lock's queue of 1,000 waiters, or in a read-write lock's hash of
// 1,000 readers, one record holds a thousand members, and such a history
// outgrew its records' measure many times over: 1,000 fair-lock clients
// on a master with a replica, with pauses and delayed messages, peaked at
// 18.4 GB in three virtual minutes, far under MaxRecords records, where
// a 16 GB machine kills the process. Sixteen members weigh as one record;
// that run is now refused at 20.9 virtual seconds (1.6 GB peak).
//
// A run that weighs more stops at the record that took it past the limit
// (the simulated world stops itself: sim.History.SetLimit; a run on real
// servers is weighed every second) with an error naming the file, the
// duration's line and field, the limit and the time reached: the history
// is not streamed to disk, so the honest answer is to refuse what cannot
// be held and checked. Looking only every ten virtual seconds had let a
// run that records fast (1,000 clients that never think, or a client
// whose messages take no time, so that virtual time never moves) run the
// machine out of memory before the first look.
//
// How fast a run reaches it depends on the workload, not on the format's
// fields alone: about 1,200 records per client per virtual minute for a
// client that retries every 100 ms (1,000 such clients reach it after
// about 75 virtual seconds, three of them after about seven virtual
// hours; a client that holds for seconds records far fewer). That is why
// the bound is on records, counted as the run goes, and docs/limits.md
// publishes the sizes that fit.
const MaxRecords = 1_500_000

// Overweight returns the *Error of a run of s whose history has grown to
// records records holding entries collection members by at, when they
// weigh more than limit records (history.Weight; limit is MaxRecords but
// in tests): it names the duration's line and field, what the history
// holds (the members when they tip it over), the time reached and the
// limit. Both backends look at their history as it grows and stop with
// it.
func (s *Scenario) Overweight(records, entries int, at time.Duration, limit int) error {
	if history.Weight(records, entries) <= limit {
		return nil
	}
	clients := fmt.Sprintf("%d clients", len(s.Clients))
	if len(s.Clients) == 1 {
		clients = "1 client"
	}
	what := fmt.Sprintf("recorded %d history records", records)
	if records <= limit {
		what = fmt.Sprintf("recorded %d history records holding %d members of hashes, lists and sorted sets (each truth record copies its key's whole collection or value: a fair lock's queue, a read-write lock's readers, a string a script appends to, 64 bytes of which count as a member), which weigh as %d records (%d members to a record)",
			records, entries, history.Weight(records, entries), history.EntriesPerRecord)
	}
	return &Error{File: s.File, Line: s.DurationLine, Field: "duration",
		Msg: fmt.Sprintf("the run %s by %v of its %v (%s), above the limit of %d (scenario.MaxRecords): the history is held in memory and checked whole, about 1.3 KB of peak memory a record; shorten the duration or use fewer clients",
			what, at, s.Duration, clients, limit)}
}

// MaxFaultEvents bounds the fault events a file's rates draw over its
// duration, in expectation: the rates per minute times the nodes or
// clients each applies to, times the duration in minutes. Each drawn fault
// is a record and world events scheduled up front, before the run starts,
// so they are counted before anything is built; beyond this a run is
// faults and little else.
const MaxFaultEvents = 200_000

// CheckLimits reports, before anything is built, whether the file's rates
// draw more fault events than MaxFaultEvents over its duration, as an
// *Error naming the file, the rates' line and the field.
func (s *Scenario) CheckLimits() error {
	if !s.HasRates {
		return nil
	}
	nodes := s.nodeCount()
	groups := 0
	for _, n := range s.Nodes {
		if len(n.Replicas) > 0 {
			groups++
		}
	}
	clients := len(s.Clients)
	r := s.Rates
	perMinute := r.Failover*float64(groups) + r.Crash*float64(nodes) + r.Pause*float64(clients) +
		(r.ClockJump+r.Partition)*float64(nodes+clients)
	events := perMinute * s.Duration.Minutes()
	if events > MaxFaultEvents {
		return &Error{File: s.File, Line: s.RatesLine, Field: "rates",
			Msg: fmt.Sprintf("the rates draw about %.0f fault events over the duration %v (%.1f a minute over %d nodes and %d clients), above the limit of %d: each is a record and world events scheduled before the run starts; lower the rates or the duration",
				events, s.Duration, perMinute, nodes, clients, MaxFaultEvents)}
	}
	return nil
}
