package scenario

// The lock algorithms a scenario can run. Each kind is a type implementing
// Workload, in a file of its own (kind_<name>.go): its fields and decoder,
// its settings, model, key, ops and workload. The table algorithms has one
// row per kind, a constructor of its empty config. Nothing outside a
// kind's file switches on the kind: the loader, the per-client settings,
// the runner and the checkers ask the Workload.

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/peers"
	"github.com/locksim/locksim/traffic"
)

// Workload is the configuration of one lock algorithm kind: what the loader
// reads of the algorithm section, and what the runner and the checkers need
// of it. Each kind's type embeds its workload's config (package traffic or
// peers) and is a pointer to a struct; a row of the table algorithms
// constructs it empty, the loader fills it in (decode, then the holding
// fields through settings), and With copies it for one client. Kind,
// Fields, DefaultBelief, Model and Ops answer alike on an empty config.
type Workload interface {
	// Kind is the kind's name: algorithm.kind in files, and the kind's name
	// in every message, the JSON and the reports. It is the workload's own
	// (traffic.KindSimple, peers.KindRedsync, ...), so that one spelling
	// serves the file, the loader's errors and the workload's.
	Kind() string
	// Fields are the kind's fields of the algorithm section, beyond kind,
	// in the order errors list them.
	Fields() []string
	// DefaultBelief is the belief model the kind's holders use when
	// neither the file nor a client entry sets one: its workload config's.
	DefaultBelief() traffic.Belief
	// Model is the Porcupine model of the kind's operations.
	Model() checker.LockKind
	// LinOptions are the model adjustments this config needs (nil: none).
	LinOptions() []checker.LinOption
	// LockKey is the Redis key of the lock, which truth records are about.
	LockKey() string
	// Ops are the op records the workload writes (package traffic), which
	// a trigger may name; keep them in step with the workload.
	Ops() []string
	// StartWorkload starts the workload on c, as this config (one client's:
	// Scenario.ForClient) says; res is the run's shared resource
	// (resourceSharer's, or nil).
	StartWorkload(c traffic.Client, res *traffic.Resource) error
	// decode reads the kind's own fields of the algorithm section o (at
	// path f) into the config; the holding fields every kind has, and the
	// TTL rule, are read and checked once by (*decoder).algorithm.
	decode(d *decoder, s *Scenario, o *obj, f string)
	// settings points into the config at the settings every kind has or a
	// client entry may override; which of them the kind has are also its
	// per-client fields (clientFields).
	settings() settings
}

// resourceSharer is a Workload whose clients of one run share a resource
// (fenced's writes): newResource returns a new one, for one run.
type resourceSharer interface {
	newResource() *traffic.Resource
}

// realOnly is a Workload of a peer library (package peers): it brings its
// own Redis client, so only real servers (-backend redis) can run it, and
// StartWorkload refuses a client that is not a peers.Backend.
type realOnly interface {
	realOnly()
}

// goLock is a Workload whose lock is given in Go (custom, through
// WithUserLock): missingLock says why it cannot start when it has none (a
// file alone), nil when it has one.
type goLock interface {
	missingLock() error
}

// settings are the places in a config that every kind has (holding) or
// that only some kinds have (nil where the kind has none), so that the
// loader and the per-client overrides handle each once for every kind.
type settings struct {
	holding *traffic.Holding
	owner   *traffic.OwnerConfig // the owner-based kinds
	// ttl is the kind's TTL, if it has one, and ttlRule says what is wrong
	// with one ("" when nothing): the algorithm's and a client entry's
	// alike.
	ttl     *time.Duration
	ttlRule func(ttl time.Duration) string
	// leaseRule says what is wrong with a client entry's lease ("" when
	// nothing; 0 is watchdog), for a kind that refuses some (script);
	// nil: none.
	leaseRule   func(lease time.Duration) string
	extendEvery *time.Duration // redlock-spec, custom, script
	readRatio   *float64       // rwlock: the probability of the read half
	// group is the lock's one group, for a kind on a single group (nil for
	// RedLock's several): a user's lock (WithUserLock) runs there.
	group *string
	// lockWaits marks an owner-based kind whose lock waits (or not) as it
	// does itself (custom, script): it has no wait, nor its clients.
	lockWaits bool
	// forever is the kind's wait: forever (fair's Forever), nil for a kind
	// without it. It is the algorithm section's and not a client entry's:
	// set, every client's acquire is Redisson's lock(), which has no wait
	// of its own, so a client's wait is refused (badClientWait) rather
	// than the run failing, or a wait: 0s being ignored.
	forever *bool
}

// algorithms is the table of algorithm kinds, one row per kind: the
// constructor of its empty config. The order is the order errors list the
// kinds, and the fields of all kinds, in.
var algorithms = []func() Workload{
	func() Workload { return new(Simple) },
	func() Workload { return new(Reentrant) },
	func() Workload { return new(Fenced) },
	func() Workload { return new(Fair) },
	func() Workload { return new(RWLock) },
	func() Workload { return new(Spin) },
	func() Workload { return new(NonReentrant) },
	func() Workload { return new(RedLockSpec) },
	func() Workload { return new(RedLockRedisson) },
	// A user's lock: given in Go (WithUserLock), or as Lua scripts.
	func() Workload { return new(Custom) },
	func() Workload { return new(Script) },
	// The peer libraries (package peers), real-only.
	func() Workload { return new(Redsync) },
	func() Workload { return new(RedisLock) },
	func() Workload { return new(RueidisLock) },
}

// newWorkload is an empty config of kind, nil when there is none.
func newWorkload(kind string) Workload {
	for _, row := range algorithms {
		if w := row(); w.Kind() == kind {
			return w
		}
	}
	return nil
}

// algorithmNames are the kinds, in table order.
func algorithmNames() []string {
	out := make([]string, len(algorithms))
	for i, row := range algorithms {
		out[i] = row().Kind()
	}
	return out
}

// Algorithm is the workload every client runs: its kind's config, as the
// algorithm section says.
type Algorithm struct {
	// Kind is the kind's name, as the file spells it (Workload.Kind).
	Kind string
	// Workload is the kind's config (*Simple, *Reentrant, ...); nil in an
	// Algorithm the loader did not fill.
	Workload Workload
	// Line is the algorithm section's line in the file.
	Line int
}

// LockKind is the Porcupine model of the algorithm's operations
// (Workload.Model; the reentrant model without a Workload).
func (a Algorithm) LockKind() checker.LockKind {
	if a.Workload == nil {
		return checker.LockReentrant
	}
	return a.Workload.Model()
}

// LinOptions are the model adjustments the algorithm needs
// (Workload.LinOptions): RedLock and a synced acquire can refuse while
// nobody holds the lock (a split vote, a slow member, no replica
// acknowledgement), which the strict models call illegal although the lock
// promised nothing by refusing; the spec's RedLock also counts its lease
// from the call (checker.LeaseFromCall), as its keys may be set there,
// before the majority forms.
func (a Algorithm) LinOptions() []checker.LinOption {
	if a.Workload == nil {
		return nil
	}
	return a.Workload.LinOptions()
}

// queued is a Workload whose lock keeps a queue of waiters that promises
// first come, first served (the fair kind): its queues are judged for
// fairness (checker.FairnessViolations).
type queued interface {
	Queues() []checker.FairQueue
}

// Queues are the fair lock queues the algorithm's runs are judged on
// (none for a kind without one).
func (a Algorithm) Queues() []checker.FairQueue {
	if q, ok := a.Workload.(queued); ok {
		return q.Queues()
	}
	return nil
}

// Belief is the belief model the algorithm's holders use when no client
// overrides it: the file's, or the kind's default (DefaultBelief).
func (a Algorithm) Belief() traffic.Belief {
	if a.Workload != nil {
		if b := a.Workload.settings().holding.Belief; b != traffic.BeliefDefault {
			return b
		}
	}
	return a.DefaultBelief()
}

// DefaultBelief is the kind's default belief model
// (Workload.DefaultBelief); careful without a Workload.
func (a Algorithm) DefaultBelief() traffic.Belief {
	if a.Workload == nil {
		return traffic.BeliefCareful
	}
	return a.Workload.DefaultBelief()
}

// owners lists the algorithm's owners, and false when its ops name none
// (a kind without owners).
func (a Algorithm) owners() ([]string, bool) {
	if a.Workload == nil {
		return nil, false
	}
	oc := a.Workload.settings().owner
	if oc == nil {
		return nil, false
	}
	if len(oc.Owners) == 0 {
		return []string{"main"}, true // traffic's default owner
	}
	return oc.Owners, true
}

// clone returns a copy of w, so that one client's settings (With) do not
// reach the section's or another client's. The copy is shallow: slices
// (owners, groups) stay shared, as With changes only scalar fields.
func clone(w Workload) Workload {
	v := reflect.ValueOf(w).Elem()
	c := reflect.New(v.Type())
	c.Elem().Set(v)
	return c.Interface().(Workload)
}

// NewResource returns the fenced resource the clients of one run share (a
// resourceSharer's: fenced's), or nil.
func (s *Scenario) NewResource() *traffic.Resource {
	if r, ok := s.Algorithm.Workload.(resourceSharer); ok {
		return r.newResource()
	}
	return nil
}

// StartWorkload starts the algorithm's workload on c, with the settings of
// c's client entry (ForClient), writing to res (from NewResource, shared by
// the run's clients). Each backend calls it for each of its clients, with
// its own traffic.Client (internal/simrun a simulated one, internal/realrun
// one on real servers). A real-only kind on a client that is not a
// peers.Backend (the simulation's), and a kind whose lock is given in Go
// without one (goLock), are refused at the algorithm's kind.
func (s *Scenario) StartWorkload(c traffic.Client, res *traffic.Resource) error {
	a := s.ForClient(c.Name())
	if a.Workload == nil {
		return s.ErrAt(a.Line, "algorithm", fmt.Errorf("unknown algorithm kind %q", a.Kind))
	}
	_, only := a.Workload.(realOnly)
	if _, real := c.(peers.Backend); only && !real {
		return s.ErrAt(a.Line, "algorithm.kind", fmt.Errorf("%s: %w", a.Kind, peers.ErrNeedsReal))
	}
	if g, ok := a.Workload.(goLock); ok {
		if err := g.missingLock(); err != nil {
			return s.ErrAt(a.Line, "algorithm.kind", err)
		}
	}
	if err := a.Workload.StartWorkload(c, res); err != nil {
		return s.ErrAt(a.Line, "algorithm", err)
	}
	return nil
}

// LockKey is the Redis key of the algorithm's lock (the key its truth
// records are about).
func (s *Scenario) LockKey() string {
	if s.Algorithm.Workload == nil {
		return ""
	}
	return s.Algorithm.Workload.LockKey()
}

// extraKeyer is a Workload whose lock keeps state under keys besides
// LockKey (the fair lock's queue and timeouts). The simulation records
// every key a node holds; a backend that reads chosen keys (the real
// servers') reads these too, so that both record the same truth.
type extraKeyer interface {
	// ExtraKeys are the lock's other keys, in the order they are read.
	ExtraKeys() []string
}

// TruthKeys are the keys a backend that reads chosen keys records the
// truth of: LockKey, then the workload's ExtraKeys if it has any.
func (s *Scenario) TruthKeys() []string {
	keys := []string{s.LockKey()}
	if x, ok := s.Algorithm.Workload.(extraKeyer); ok {
		keys = append(keys, x.ExtraKeys()...)
	}
	return keys
}

// peekWorkload is the Workload of the kind that top's algorithm section
// names, read ahead and without an error of its own (the algorithm's part
// reports its errors): the client entries, read before the algorithm, are
// checked against its per-client fields. nil when the section or its kind
// is missing or unknown.
func (d *decoder) peekWorkload(top *obj) Workload {
	n := resolve(top.vals["algorithm"])
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k != nil && k.Value == "kind" && v != nil && v.Kind == yaml.ScalarNode && slices.Contains(algorithmNames(), v.Value) {
			return newWorkload(v.Value)
		}
	}
	return nil
}

// algorithm reads the algorithm section n (at path f): its kind first,
// then the kind's fields (its Workload's decode), then the holding fields
// every kind has, and the kind's TTL rule.
func (d *decoder) algorithm(s *Scenario, n *yaml.Node, f string) {
	pre := d.anyMapping(f, n)
	if !pre.required("kind") {
		return
	}
	a := &s.Algorithm
	a.Kind = pre.oneOf("kind", "", algorithmNames()...)
	a.Line = resolve(n).Line
	if d.err != nil {
		return
	}
	w := newWorkload(a.Kind)
	a.Workload = w
	// An unknown field names the kind's fields only: it may be valid for
	// another kind, and all kinds' fields are dozens.
	o := d.mappingMsg(f, n, append([]string{"kind"}, w.Fields()...),
		fmt.Sprintf("not a field of algorithm %s (its fields: %s)", a.Kind, strings.Join(w.Fields(), ", ")))
	w.decode(d, s, o, f)
	st := w.settings()
	*st.holding = d.holding(o, traffic.Holding{Hold: time.Second, Think: 100 * time.Millisecond})
	if st.ttl != nil {
		d.checkTTL(st, o, join(f, "ttl"), *st.ttl)
	}
}

// holding reads the holding fields of o (the algorithm section), with
// def's durations as the defaults.
func (d *decoder) holding(o *obj, def traffic.Holding) traffic.Holding {
	return traffic.Holding{
		Hold: o.dur("hold", def.Hold), Think: o.dur("think", def.Think), Start: o.dur("start", 0),
		Holds:  int(o.int("holds", 0, 0, 1_000_000)),
		Belief: traffic.Belief(o.oneOf("belief", "", beliefs...)),
	}
}

// checkLease applies the lease rule of a kind with settings st to a
// client entry's lease read at field f of o.
func (d *decoder) checkLease(st settings, o *obj, f string, lease time.Duration) {
	if d.err != nil || st.leaseRule == nil {
		return
	}
	if msg := st.leaseRule(lease); msg != "" {
		d.failf(o.at("lease"), f, "%s", msg)
	}
}

// checkTTL applies the TTL rule of a kind with settings st to a TTL read
// at field f of o.
func (d *decoder) checkTTL(st settings, o *obj, f string, ttl time.Duration) {
	if d.err != nil || st.ttlRule == nil {
		return
	}
	if msg := st.ttlRule(ttl); msg != "" {
		d.failf(o.at("ttl"), f, "%s", msg)
	}
}
