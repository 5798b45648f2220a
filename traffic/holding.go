package traffic

// The settings every workload shares (Holding), those the owner-based
// workloads share (OwnerConfig), and their checks, written once for all.

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Holding is the rhythm of a workload's loop, the same for every lock
// algorithm: when the client starts, how long it holds, how long it thinks,
// how many holdings it makes, and what its holders believe. Every workload
// config embeds it, so that a scenario's per-client settings override one
// struct whatever the algorithm, and its checks are written once (check).
type Holding struct {
	// Hold is how long the client keeps the lock once acquired (for the
	// owner-based workloads: once it has all Depth holds).
	Hold time.Duration
	// Think is the mean pause between attempts (after a release, or after a
	// refused acquire); each pause is drawn uniformly from
	// [Think/2, 3*Think/2] so that clients do not fall into lockstep.
	Think time.Duration
	// Start is how long the client waits, by its own clock, before its
	// first acquire (a late contender); 0 starts at once.
	Start time.Duration
	// Holds is how many holdings (successful first acquires) the client
	// makes before its workload stops, after the last one's releases (a
	// holder that holds once); 0 means no limit. Refused acquires do not
	// count.
	Holds int
	// Belief is the holders' belief model; empty means the workload's
	// default (its config's DefaultBelief).
	Belief Belief
}

// Check validates h for a workload of kind (its name in errors) on client
// and returns the belief model to use: h's, or def (the workload's
// default) when h leaves it empty. Workloads outside this package (the
// peer libraries' loops) use it so that their settings are judged as every
// workload's are.
func (h Holding) Check(kind string, def Belief, client string) (Belief, error) {
	return h.check(kind, def, client)
}

// check validates h for a workload of kind (its name in errors) on client,
// after the workload's own durations first (named in errors in that
// order), and returns the belief model to use: h's, or def when h leaves
// it empty.
func (h Holding) check(kind string, def Belief, client string, first ...dur) (Belief, error) {
	ds := append(first, dur{"hold", h.Hold}, dur{"think", h.Think}, dur{"start", h.Start})
	if err := checkDurations(kind, client, ds...); err != nil {
		return "", err
	}
	if h.Holds < 0 {
		return "", fmt.Errorf("traffic: %s on client %s: negative holds %d", kind, client, h.Holds)
	}
	return h.Belief.resolve(def, kind, client)
}

// OwnerConfig is what the owner-based workloads (Reentrant, FencedWrites,
// ReadWrite, RedissonRedLock) share beyond Holding: who holds, how deep,
// and how each acquire waits and for which lease. Their configs embed it,
// and newLoop checks it for all of them.
type OwnerConfig struct {
	// Owners are the owner names the client's holdings use, one holding at
	// a time, in turn (or at random with RandomOwners, from the client's
	// PRNG). Default: one owner, "main".
	Owners       []string
	RandomOwners bool
	// Concurrent runs every owner in a loop of its own, all at once on the
	// client's one lock.Client, as the threads of one Redisson instance
	// contend for a lock (or the goroutines of one lock.Client): each owner
	// acquires, holds, releases and thinks on its own, and Holds counts
	// each owner's holdings. Without it the client's holdings take the
	// owners one at a time. Each owner's loop draws from a PRNG stream of
	// its own, so that adding an owner changes no other owner's draws. Not
	// with RandomOwners, and only for the workloads on one lock.Client
	// (Reentrant, FencedWrites, Fair, Spin, NonReentrant, ReadWrite).
	Concurrent bool
	// Depth is how many times each holding acquires (reentrantly) before it
	// releases as many times. Default 1.
	Depth int
	// Wait is how long each acquire waits for the lock (TryLockFor's wait;
	// 0 tries once).
	Wait time.Duration
	// Lease is each acquire's lease; 0 means the watchdog keeps the lock.
	// With a lease, the holder's validity estimate is the lease, by its own
	// clock, from the acquire's call or its reply (Holding.Belief): when it
	// runs out before the release, an "expire" record ends the holder's
	// belief (the until-release model keeps no estimate: its belief ends at
	// the release). With the watchdog, under the careful model the
	// watchdog's report that the lock was lost does ("expire", "lost").
	Lease time.Duration
}

// names are what an owner-based workload is known by. kind is its kind's
// name, as scenario files spell it (algorithm.kind), in its errors and
// process names. stream names the PRNG stream its loop on a lock draws
// from ("traffic/<stream>/<lock>"): some streams carry an older name than
// the kind's, and a stream keeps its name so that a seed draws the same
// numbers, and so replays the same run, as it always has.
type names struct{ kind, stream string }

// newLoop validates the settings of an owner-based workload n on lockName
// (def is its default belief model) and returns its loop, without a lock
// and without starting it: the checks and the loop's construction every
// owner-based workload shares. It is newLoops for the workloads that run
// one loop, which refuse concurrent owners.
func newLoop(c Client, n names, def Belief, lockName string, oc OwnerConfig, h Holding) (*ownerLoop, error) {
	if oc.Concurrent && c != nil {
		return nil, fmt.Errorf("traffic: %s on client %s: concurrent owners are for the workloads on one lock client (%s)", n.kind, c.Name(), concurrentKinds)
	}
	loops, err := newLoops(c, n, def, lockName, oc, h)
	if err != nil {
		return nil, err
	}
	return loops[0], nil
}

// concurrentKinds names the workloads that take OwnerConfig.Concurrent, in
// errors.
const concurrentKinds = KindReentrant + ", " + KindFenced + ", " + KindFair + ", " + KindSpin + ", " + KindNonReentrant + ", " + KindReadWrite

// newLoops is newLoop for a workload that may run its owners at once: one
// loop whose holdings take oc's owners in turn (or at random), drawing
// from the stream "traffic/<stream>/<lock>"; or, with oc.Concurrent, one
// loop per owner, each its only owner, drawing from
// "traffic/<stream>/<lock>/<owner>".
func newLoops(c Client, n names, def Belief, lockName string, oc OwnerConfig, h Holding) ([]*ownerLoop, error) {
	kind := n.kind
	if c == nil {
		return nil, fmt.Errorf("traffic: %s: nil client", kind)
	}
	name := c.Name()
	if lockName == "" {
		return nil, fmt.Errorf("traffic: %s on client %s: empty lock name", kind, name)
	}
	model, err := h.check(kind, def, name, dur{"wait", oc.Wait}, dur{"lease", oc.Lease})
	if err != nil {
		return nil, err
	}
	owners, err := checkOwners(kind, name, oc.Owners)
	if err != nil {
		return nil, err
	}
	if oc.Concurrent && oc.RandomOwners {
		return nil, fmt.Errorf("traffic: %s on client %s: random owners with concurrent owners (each owner holds in a loop of its own; there is no holding to pick an owner for)", kind, name)
	}
	if i := slices.IndexFunc(owners, func(o string) bool { return strings.Contains(o, "/") }); oc.Concurrent && i >= 0 {
		// The owner ends its loop's stream name, after the lock's, which
		// may hold a "/": without one in the owner, no two loops' names
		// are the same.
		return nil, fmt.Errorf("traffic: %s on client %s: concurrent owner %q has a \"/\"", kind, name, owners[i])
	}
	depth, err := checkDepth(kind, name, oc.Depth)
	if err != nil {
		return nil, err
	}
	j, err := judgedBy(c, kind, model, false)
	if err != nil {
		return nil, err
	}
	stream := "traffic/" + n.stream + "/" + lockName
	loop := func(owners []string, stream string) *ownerLoop {
		rng := c.Rand(stream)
		return &ownerLoop{
			c: c, rt: c.Runtime(), lockName: lockName,
			owners: ownerPicker{owners: owners, random: oc.RandomOwners, rng: rng},
			depth:  depth, lease: oc.Lease, hold: h.Hold, think: Thinker(rng, h.Think), rng: rng,
			model: j, start: h.Start, holds: h.Holds,
		}
	}
	if !oc.Concurrent {
		return []*ownerLoop{loop(owners, stream)}, nil
	}
	loops := make([]*ownerLoop, len(owners))
	for i, o := range owners {
		loops[i] = loop([]string{o}, stream+"/"+o)
		loops[i].concurrent = true
	}
	return loops, nil
}

// dur names a configured duration, for checkDurations.
type dur struct {
	name string
	d    time.Duration
}

// checkDurations rejects negative durations, naming the first.
func checkDurations(kind, client string, ds ...dur) error {
	for _, x := range ds {
		if x.d < 0 {
			return fmt.Errorf("traffic: %s on client %s: negative %s %v", kind, client, x.name, x.d)
		}
	}
	return nil
}

// checkOwners validates owner names, defaulting to one owner "main".
func checkOwners(kind, client string, owners []string) ([]string, error) {
	if len(owners) == 0 {
		return []string{"main"}, nil
	}
	seen := map[string]bool{}
	for _, o := range owners {
		if o == "" {
			return nil, fmt.Errorf("traffic: %s on client %s: empty owner name in %q", kind, client, owners)
		}
		if seen[o] {
			return nil, fmt.Errorf("traffic: %s on client %s: owner %q listed twice", kind, client, o)
		}
		seen[o] = true
	}
	return append([]string(nil), owners...), nil
}

// checkDepth validates a reentrancy depth, defaulting 0 to 1.
func checkDepth(kind, client string, depth int) (int, error) {
	switch {
	case depth < 0:
		return 0, fmt.Errorf("traffic: %s on client %s: negative depth %d", kind, client, depth)
	case depth == 0:
		return 1, nil
	}
	return depth, nil
}
