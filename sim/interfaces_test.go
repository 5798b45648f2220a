package sim_test

import (
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// The World offers every capability package faults asks of a target, so
// that each fault kind runs on it, and is a topology faults.Draw draws a
// schedule from. Asserted here, so that faults need not import sim.
var _ interface {
	faults.Target
	faults.ClientPauser
	faults.ClientCrasher
	faults.ClockSetter
	faults.OpBinder
	faults.Topology
} = (*sim.World)(nil)

// A Client is what a workload runs on (traffic.Client), as the real
// backend's client is.
var _ traffic.Client = (*sim.Client)(nil)
