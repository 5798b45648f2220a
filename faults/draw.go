package faults

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/locksim/locksim/sim"
)

// Rates describes random faults. Event rates are per minute of world time
// and per target (Poisson arrivals); link-fault probabilities hold for the
// whole run. Every kind and every target draws from its own stream of the
// world's seed, so raising one rate, or adding a node or a client, does not
// move the faults drawn for the others.
type Rates struct {
	// Failover is failovers per minute of each group that has replicas.
	Failover float64
	// Crash is crashes per minute of each node; each restarts after a draw
	// from CrashDown (default fixed 1 s).
	Crash     float64
	CrashDown sim.Dist
	// Pause is pauses per minute of each client, each lasting a draw from
	// PauseFor (default uniform 0.5-5 s).
	Pause    float64
	PauseFor sim.Dist
	// ClockJump is clock jumps per minute of each node and each client, by a
	// draw from JumpBy (default uniform 1-10 s), forward or backward with
	// equal odds.
	ClockJump float64
	JumpBy    sim.Dist
	// Partition is partitions per minute of each node and each client that
	// isolate it from everything else for a draw from PartitionFor (default
	// uniform 0.5-5 s).
	Partition    float64
	PartitionFor sim.Dist
	// DriftPPM bounds a constant drift drawn uniformly in [-DriftPPM,
	// +DriftPPM] for every node and client at time zero.
	DriftPPM int64
	// Link faults on every link for the whole run.
	DropRequest, DropReply, DropPush, Duplicate float64
	// DelayP delays a message by a draw from Delay (default uniform 0-1 s).
	DelayP float64
	Delay  sim.Dist
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
		d    sim.Dist
	}{{"crash_down", r.CrashDown}, {"pause_for", r.PauseFor}, {"jump_by", r.JumpBy}, {"partition_for", r.PartitionFor}, {"delay", r.Delay}} {
		if err := d.d.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.name, err))
		}
	}
	if r.DriftPPM < 0 || r.DriftPPM >= 1_000_000 {
		errs = append(errs, fmt.Errorf("drift_ppm = %d out of range [0, 1000000)", r.DriftPPM))
	}
	return errors.Join(errs...)
}

// MaxRate bounds event rates (per minute): beyond it a run is all faults and
// arrival gaps approach the clock's resolution.
const MaxRate = 60_000

func orDefault(d, def sim.Dist) sim.Dist {
	if d == (sim.Dist{}) {
		return def
	}
	return d
}

// Draw draws a schedule for a run of length dur on w's topology from the
// world's seed.
func Draw(w *sim.World, r Rates, dur time.Duration) (Schedule, error) {
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("faults: rates: %w", err)
	}
	if dur <= 0 {
		return nil, fmt.Errorf("faults: Draw: duration %v must be positive", dur)
	}
	nodes, clients := w.Nodes(), w.Clients()
	all := append(append([]string{}, nodes...), clients...)
	isNode := func(name string) bool { _, err := w.Node(name); return err == nil }
	var s Schedule

	// Every target draws from its own stream per kind ("faults/crash/m1"), so
	// adding a node or a client adds its faults and moves nobody else's.
	stream := func(kind, target string) *rand.Rand { return w.Rand("faults/" + kind + "/" + target) }
	// arrivals returns Poisson arrival times in [0, dur) for a per-minute rate.
	arrivals := func(rng *rand.Rand, perMinute float64) []time.Duration {
		var out []time.Duration
		if perMinute <= 0 {
			return out
		}
		mean := float64(time.Minute) / perMinute
		for t := time.Duration(rng.ExpFloat64() * mean); t < dur; t += max(time.Duration(rng.ExpFloat64()*mean), 1) {
			out = append(out, t)
		}
		return out
	}

	for _, g := range w.Groups() {
		if grp, _ := w.Group(g); grp.Size() < 2 {
			continue
		}
		rng := stream("failover", g)
		for _, t := range arrivals(rng, r.Failover) {
			s = append(s, Failover{At: t, Group: g})
		}
	}
	down := orDefault(r.CrashDown, sim.Fixed(time.Second))
	for _, n := range nodes {
		rng := stream("crash", n)
		for _, t := range arrivals(rng, r.Crash) {
			s = append(s, Crash{At: t, Node: n, Down: down.Sample(rng)})
		}
	}
	pauseFor := orDefault(r.PauseFor, sim.Uniform(500*time.Millisecond, 5*time.Second))
	for _, c := range clients {
		rng := stream("pause", c)
		for _, t := range arrivals(rng, r.Pause) {
			s = append(s, Pause{At: t, Client: c, For: pauseFor.Sample(rng)})
		}
	}
	jumpBy := orDefault(r.JumpBy, sim.Uniform(time.Second, 10*time.Second))
	partFor := orDefault(r.PartitionFor, sim.Uniform(500*time.Millisecond, 5*time.Second))
	for _, e := range all {
		rng := stream("clock-jump", e)
		for _, t := range arrivals(rng, r.ClockJump) {
			by := jumpBy.Sample(rng)
			if rng.IntN(2) == 0 {
				by = -by
			}
			f := ClockJump{At: t, By: by}
			if isNode(e) {
				f.Node = e
			} else {
				f.Client = e
			}
			s = append(s, f)
		}
		if len(all) > 1 {
			rng = stream("partition", e)
			for _, t := range arrivals(rng, r.Partition) {
				var rest []string
				for _, o := range all {
					if o != e {
						rest = append(rest, o)
					}
				}
				s = append(s, Partition{From: t, Until: t + max(partFor.Sample(rng), 1), A: []string{e}, B: rest})
			}
		}
		if r.DriftPPM > 0 {
			ppm := stream("drift", e).Int64N(2*r.DriftPPM+1) - r.DriftPPM
			f := ClockDrift{PPM: ppm}
			if isNode(e) {
				f.Node = e
			} else {
				f.Client = e
			}
			s = append(s, f)
		}
	}
	for _, lf := range []LinkFault{
		{Kind: DropRequests, P: r.DropRequest},
		{Kind: DropReplies, P: r.DropReply},
		{Kind: DropPushes, P: r.DropPush},
		{Kind: Duplicate, P: r.Duplicate},
		{Kind: Delay, P: r.DelayP, Delay: orDefault(r.Delay, sim.Uniform(0, time.Second))},
	} {
		if lf.P > 0 {
			s = append(s, lf)
		}
	}
	return s, nil
}
