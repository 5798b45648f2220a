package faults

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/locksim/locksim/setup"
)

// Rates describes random faults. Event rates are per minute of world time
// and per target (Poisson arrivals); link-fault probabilities hold for the
// whole run. Every kind and every target draws from its own stream of the
// world's seed, so raising one rate, or adding a node or a client, does not
// move the faults drawn for the others.
type Rates struct {
	// Failover is failovers per minute of each group that has replicas.
	// The master a failover crashes stays down, unless FailoverDown is set:
	// then it restarts after a draw from it and rejoins its group as a
	// replica (a supervisor restarts the process and Sentinel repoints
	// it), so that the group can fail over again.
	Failover     float64
	FailoverDown setup.Dist
	// Crash is crashes per minute of each node; each restarts after a draw
	// from CrashDown (default fixed 1 s).
	Crash     float64
	CrashDown setup.Dist
	// Pause is pauses per minute of each client, each lasting a draw from
	// PauseFor (default uniform 0.5-5 s).
	Pause    float64
	PauseFor setup.Dist
	// ClockJump is clock jumps per minute of each node and each client, by a
	// draw from JumpBy (default uniform 1-10 s), forward or backward with
	// equal odds.
	ClockJump float64
	JumpBy    setup.Dist
	// Partition is partitions per minute of each node and each client that
	// isolate it from everything else for a draw from PartitionFor (default
	// uniform 0.5-5 s).
	Partition    float64
	PartitionFor setup.Dist
	// DriftPPM bounds a constant drift drawn uniformly in [-DriftPPM,
	// +DriftPPM] for every node and client at time zero.
	DriftPPM int64
	// Link faults on every link for the whole run.
	DropRequest, DropReply, DropPush, Duplicate float64
	// DelayP delays a message by a draw from Delay (default uniform 0-1 s).
	DelayP float64
	Delay  setup.Dist
}

func (r Rates) validate() error {
	var errs []error
	for _, v := range []struct {
		name string
		v    float64
		prob bool
	}{
		{"failover", r.Failover, false}, {"crash", r.Crash, false}, {"pause", r.Pause, false},
		{"clock_jump", r.ClockJump, false}, {"partition", r.Partition, false},
		{"drop_request", r.DropRequest, true}, {"drop_reply", r.DropReply, true},
		{"drop_push", r.DropPush, true}, {"duplicate", r.Duplicate, true}, {"delay_p", r.DelayP, true},
	} {
		if math.IsNaN(v.v) || v.v < 0 || (v.prob && v.v > 1) || (!v.prob && v.v > MaxRate) {
			kind := fmt.Sprintf("rate per minute in [0,%g]", float64(MaxRate))
			if v.prob {
				kind = "probability in [0,1]"
			}
			errs = append(errs, fmt.Errorf("%s = %v is not a valid %s", v.name, v.v, kind))
		}
	}
	for _, d := range []struct {
		name string
		d    setup.Dist
	}{{"failover_down", r.FailoverDown}, {"crash_down", r.CrashDown}, {"pause_for", r.PauseFor}, {"jump_by", r.JumpBy}, {"partition_for", r.PartitionFor}, {"delay", r.Delay}} {
		if err := d.d.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.name, err))
		}
	}
	if r.DriftPPM < 0 || r.DriftPPM > setup.MaxDriftPPM {
		errs = append(errs, fmt.Errorf("drift_ppm = %d out of range [0, %d]", r.DriftPPM, setup.MaxDriftPPM))
	}
	return errors.Join(errs...)
}

// MaxRate bounds event rates (per minute): beyond it a run is all faults and
// arrival gaps approach the clock's resolution.
const MaxRate = 60_000

func orDefault(d, def setup.Dist) setup.Dist {
	if d == (setup.Dist{}) {
		return def
	}
	return d
}

// Topology is what Draw reads of a run: its nodes, clients and
// replication groups, and its PRNG streams by component name. Draw
// takes nothing else, so that a schedule depends only on the topology and
// the seed behind the streams (the simulation, *sim.World, is one).
type Topology interface {
	// Nodes, Clients and Groups name the run's nodes, clients and
	// replication groups (a group by its first master's name), each in
	// an order the topology fixes (the simulation's: creation order).
	Nodes() []string
	Clients() []string
	Groups() []string
	// GroupSize is the number of nodes of group (master and replicas).
	GroupSize(group string) int
	// CheckNode returns an error when the run has no node name.
	CheckNode(name string) error
	// Rand is the PRNG stream of component, the same sequence for the same
	// seed and component whatever else draws.
	Rand(component string) *rand.Rand
}

// Draw draws a schedule for a run of length dur on w's topology from w's
// streams: failovers, crashes, pauses, then each endpoint's clock
// jumps, partitions and drift, then the link faults, in that order (the
// order faults are applied in, which the histories keep).
func Draw(w Topology, r Rates, dur time.Duration) (Schedule, error) {
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("faults: rates: %w", err)
	}
	if dur <= 0 {
		return nil, fmt.Errorf("faults: Draw: duration %v must be positive", dur)
	}
	d := drawer{w: w, r: r, dur: dur}
	s := d.failovers()
	s = append(s, d.crashes()...)
	s = append(s, d.pauses()...)
	all := append(w.Nodes(), w.Clients()...)
	for _, e := range all {
		s = append(s, d.clockJumps(e)...)
		s = append(s, d.partitions(e, all)...)
		s = append(s, d.drift(e)...)
	}
	return append(s, d.linkFaults()...), nil
}

// drawer draws the faults of one schedule.
type drawer struct {
	w   Topology
	r   Rates
	dur time.Duration
}

// stream is the PRNG of one kind on one target ("faults/crash/m1"): every
// target draws from its own stream per kind, so that adding a node or a
// client adds its faults and moves nobody else's.
func (d drawer) stream(kind, target string) *rand.Rand {
	return d.w.Rand("faults/" + kind + "/" + target)
}

// arrivals returns Poisson arrival times in [0, dur) for a per-minute rate.
func (d drawer) arrivals(rng *rand.Rand, perMinute float64) []time.Duration {
	var out []time.Duration
	if perMinute <= 0 {
		return out
	}
	mean := float64(time.Minute) / perMinute
	for t := time.Duration(rng.ExpFloat64() * mean); t < d.dur; t += max(time.Duration(rng.ExpFloat64()*mean), 1) {
		out = append(out, t)
	}
	return out
}

// isNode reports whether endpoint e is a node (else it is a client).
func (d drawer) isNode(e string) bool { return d.w.CheckNode(e) == nil }

func (d drawer) failovers() Schedule {
	var s Schedule
	for _, g := range d.w.Groups() {
		if d.w.GroupSize(g) < 2 {
			continue
		}
		rng := d.stream("failover", g)
		for _, t := range d.arrivals(rng, d.r.Failover) {
			f := Failover{At: t, Group: g}
			if d.r.FailoverDown != (setup.Dist{}) {
				f.Down = max(d.r.FailoverDown.Sample(rng), 1)
			}
			s = append(s, f)
		}
	}
	return s
}

func (d drawer) crashes() Schedule {
	var s Schedule
	down := orDefault(d.r.CrashDown, setup.Fixed(time.Second))
	for _, n := range d.w.Nodes() {
		rng := d.stream("crash", n)
		for _, t := range d.arrivals(rng, d.r.Crash) {
			s = append(s, Crash{At: t, Node: n, Down: down.Sample(rng)})
		}
	}
	return s
}

func (d drawer) pauses() Schedule {
	var s Schedule
	pauseFor := orDefault(d.r.PauseFor, setup.Uniform(500*time.Millisecond, 5*time.Second))
	for _, c := range d.w.Clients() {
		rng := d.stream("pause", c)
		for _, t := range d.arrivals(rng, d.r.Pause) {
			s = append(s, Pause{At: t, Client: c, For: pauseFor.Sample(rng)})
		}
	}
	return s
}

// clockJumps are endpoint e's clock jumps, forward or backward with equal
// odds.
func (d drawer) clockJumps(e string) Schedule {
	var s Schedule
	jumpBy := orDefault(d.r.JumpBy, setup.Uniform(time.Second, 10*time.Second))
	rng := d.stream("clock-jump", e)
	for _, t := range d.arrivals(rng, d.r.ClockJump) {
		by := jumpBy.Sample(rng)
		if rng.IntN(2) == 0 {
			by = -by
		}
		f := ClockJump{At: t, By: by}
		if d.isNode(e) {
			f.Node = e
		} else {
			f.Client = e
		}
		s = append(s, f)
	}
	return s
}

// partitions are the partitions that isolate endpoint e from the rest of
// all (none when e is alone).
func (d drawer) partitions(e string, all []string) Schedule {
	if len(all) < 2 {
		return nil
	}
	var s Schedule
	partFor := orDefault(d.r.PartitionFor, setup.Uniform(500*time.Millisecond, 5*time.Second))
	rng := d.stream("partition", e)
	for _, t := range d.arrivals(rng, d.r.Partition) {
		var rest []string
		for _, o := range all {
			if o != e {
				rest = append(rest, o)
			}
		}
		s = append(s, Partition{From: t, Until: t + max(partFor.Sample(rng), 1), A: []string{e}, B: rest})
	}
	return s
}

// drift is endpoint e's constant drift from time zero, if DriftPPM is set.
func (d drawer) drift(e string) Schedule {
	if d.r.DriftPPM <= 0 {
		return nil
	}
	f := ClockDrift{PPM: d.stream("drift", e).Int64N(2*d.r.DriftPPM+1) - d.r.DriftPPM}
	if d.isNode(e) {
		f.Node = e
	} else {
		f.Client = e
	}
	return Schedule{f}
}

// linkFaults are the link faults on every link for the whole run.
func (d drawer) linkFaults() Schedule {
	var s Schedule
	r := d.r
	for _, lf := range []LinkFault{
		{Kind: DropRequests, P: r.DropRequest},
		{Kind: DropReplies, P: r.DropReply},
		{Kind: DropPushes, P: r.DropPush},
		{Kind: Duplicate, P: r.Duplicate},
		{Kind: Delay, P: r.DelayP, Delay: orDefault(r.Delay, setup.Uniform(0, time.Second))},
	} {
		if lf.P > 0 {
			s = append(s, lf)
		}
	}
	return s
}
