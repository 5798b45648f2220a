package scenario

// The lock algorithms a scenario can run, one descriptor per kind in the
// table algorithms: what the loader reads of each, which workload runs it,
// which key it locks and which model checks it. Adding an algorithm is a
// workload in package traffic and a row here.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/peers"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/traffic"
)

// Algorithm kinds: the names of algorithm.kind in files, which are the
// workload kinds of package traffic (traffic.DefaultBelief knows them).
const (
	AlgSimple          = traffic.KindSimple
	AlgReentrant       = traffic.KindReentrant
	AlgFenced          = traffic.KindFenced
	AlgRWLock          = traffic.KindReadWrite
	AlgRedLockSpec     = traffic.KindRedLockSpec
	AlgRedLockRedisson = traffic.KindRedLockRedisson
	// The peer libraries (package peers), real-only.
	AlgRedsync     = peers.KindRedsync
	AlgRedisLock   = peers.KindRedisLock
	AlgRueidisLock = peers.KindRueidisLock
)

// Algorithm is the workload; the config of Kind is set (its row of the
// table algorithms says which), the others are zero.
type Algorithm struct {
	Kind   string
	Simple traffic.SimpleConfig
	// Reentrant is reentrant's config, and the lock part of fenced's.
	Reentrant traffic.ReentrantConfig
	// ResourceName, Writes and WriteLatency configure fenced's writes.
	ResourceName string
	Writes       int
	WriteLatency time.Duration
	ReadWrite    traffic.ReadWriteConfig
	Spec         traffic.SpecConfig
	Redisson     traffic.RedissonConfig
	// Redsync, RedisLock and RueidisLock are the peer libraries' configs.
	Redsync     peers.RedsyncConfig
	RedisLock   peers.RedisLockConfig
	RueidisLock peers.RueidisLockConfig
	Line        int
}

// algDesc describes one algorithm kind: everything the loader, the runner
// and the checkers need to know of it, so that no code outside the table
// switches on the kind.
type algDesc struct {
	// name is the kind's name (Algorithm.Kind).
	name string
	// fields are the algorithm section's fields under the kind, "kind"
	// first, in the order errors list them.
	fields []string
	// decode reads the kind's own fields of the algorithm section o (at
	// path f) into a; the holding fields every kind has, and the TTL rule,
	// are read and checked once by (*decoder).algorithm.
	decode func(d *decoder, s *Scenario, o *obj, f string, a *Algorithm)
	// settings points into a at the settings every kind has or a client
	// entry may override (see settings).
	settings func(a *Algorithm) settings
	// start starts the kind's workload on c as a (one client's view of the
	// algorithm, Scenario.ForClient) configures it; res is the run's shared
	// resource (newResource's, or nil).
	start func(c traffic.Client, a Algorithm, res *traffic.Resource) error
	// key is the Redis key of a's lock, which truth records are about.
	key func(a Algorithm) string
	// model is the Porcupine model of the kind's operations.
	model checker.LockKind
	// linOptions are the model adjustments a needs (Algorithm.LinOptions);
	// nil: none.
	linOptions func(a Algorithm) []checker.LinOption
	// ops are the op records the workload writes (package traffic), which
	// a trigger may name; keep them in step with the workload.
	ops []string
	// ttlRule, for kinds with a TTL, says what is wrong with one ("" when
	// nothing): the algorithm's and a client entry's alike.
	ttlRule func(ttl time.Duration) string
	// newResource, when set, returns the fenced resource the clients of one
	// run share.
	newResource func(a Algorithm) *traffic.Resource
	// realOnly marks a peer library (package peers): it brings its own
	// Redis client, so only -backend redis can run it.
	realOnly bool
}

// settings are the places in an Algorithm that every kind has (holding) or
// that only some kinds have (nil where the kind has none), so that the
// loader and the per-client overrides handle each once for every kind.
type settings struct {
	holding     *traffic.Holding
	owner       *traffic.OwnerConfig // the owner-based kinds
	ttl         *time.Duration       // simple, redlock-spec
	extendEvery *time.Duration       // redlock-spec
}

// ownerFields are the fields the owner-based kinds share.
var ownerFields = []string{"lock", "group", "owners", "random_owners", "depth", "wait", "lease", "hold", "think", "options", "start", "holds", "belief"}

// baseOps are the op records every workload writes.
var baseOps = []string{history.OpAcquire, history.OpRelease, history.OpExpire}

// algorithms is the table of algorithm kinds, in the order errors list
// them.
var algorithms = []*algDesc{
	{
		name: AlgSimple,
		fields: []string{"kind", "group", "key", "ttl", "hold", "think", "unsafe_del", "plain_setnx", "release_latch",
			"start", "holds", "belief"},
		decode: decodeSimple,
		settings: func(a *Algorithm) settings {
			return settings{holding: &a.Simple.Holding, ttl: &a.Simple.TTL}
		},
		start:   func(c traffic.Client, a Algorithm, _ *traffic.Resource) error { return traffic.SimpleLock(c, a.Simple) },
		key:     func(a Algorithm) string { return a.Simple.Key },
		model:   checker.LockSimple,
		ops:     baseOps,
		ttlRule: wholeMilliseconds,
	},
	{
		name:     AlgReentrant,
		fields:   append([]string{"kind", "locks"}, ownerFields...),
		decode:   decodeReentrant,
		settings: reentrantSettings,
		start: func(c traffic.Client, a Algorithm, _ *traffic.Resource) error {
			return traffic.Reentrant(c, a.Reentrant)
		},
		key:   func(a Algorithm) string { return a.Reentrant.Lock },
		model: checker.LockReentrant,
		linOptions: func(a Algorithm) []checker.LinOption {
			return syncedMayFail(a.Reentrant.Options)
		},
		ops: baseOps,
	},
	{
		name:   AlgFenced,
		fields: append([]string{"kind", "resource", "writes", "write_latency"}, ownerFields...),
		decode: func(d *decoder, s *Scenario, o *obj, f string, a *Algorithm) {
			decodeReentrant(d, s, o, f, a)
			a.Reentrant.Fenced = true
			a.ResourceName = o.str("resource", "db")
			a.Writes = int(o.int("writes", 1, 1, 1000))
			a.WriteLatency = o.dur("write_latency", 10*time.Millisecond)
		},
		settings: reentrantSettings,
		start: func(c traffic.Client, a Algorithm, res *traffic.Resource) error {
			return traffic.FencedWrites(c, traffic.FencedWritesConfig{ReentrantConfig: a.Reentrant,
				Resource: res, Writes: a.Writes, WriteLatency: a.WriteLatency})
		},
		key:   func(a Algorithm) string { return a.Reentrant.Lock },
		model: checker.LockReentrant,
		linOptions: func(a Algorithm) []checker.LinOption {
			return syncedMayFail(a.Reentrant.Options)
		},
		ops: []string{history.OpAcquire, history.OpRelease, history.OpWrite, history.OpExpire},
		// One fenced resource per run, shared by every client.
		newResource: func(a Algorithm) *traffic.Resource { return traffic.NewResource(a.ResourceName) },
	},
	{
		name:   AlgRWLock,
		fields: append([]string{"kind", "read_ratio"}, ownerFields...),
		decode: func(d *decoder, s *Scenario, o *obj, f string, a *Algorithm) {
			g := d.group(s, o, f)
			lk, opts, oc := d.owner(s, o, g)
			a.ReadWrite = traffic.ReadWriteConfig{Group: g, Lock: lk, Options: opts, ReadRatio: o.prob("read_ratio", 0.5), OwnerConfig: oc}
		},
		settings: func(a *Algorithm) settings {
			return settings{holding: &a.ReadWrite.Holding, owner: &a.ReadWrite.OwnerConfig}
		},
		start: func(c traffic.Client, a Algorithm, _ *traffic.Resource) error {
			return traffic.ReadWrite(c, a.ReadWrite)
		},
		key:   func(a Algorithm) string { return a.ReadWrite.Lock },
		model: checker.LockReadWrite,
		linOptions: func(a Algorithm) []checker.LinOption {
			return syncedMayFail(a.ReadWrite.Options)
		},
		ops: []string{history.OpAcquire, history.OpRelease, history.OpAcquireRead, history.OpReleaseRead, history.OpExpire},
	},
	{
		name: AlgRedLockSpec,
		fields: []string{"kind", "groups", "key", "ttl", "drift_factor", "retry", "tries", "retry_delay_min", "retry_delay_max",
			"hold", "think", "plain_setnx", "start", "holds", "belief", "extend_every"},
		decode: decodeSpec,
		settings: func(a *Algorithm) settings {
			return settings{holding: &a.Spec.Holding, ttl: &a.Spec.Options.TTL, extendEvery: &a.Spec.ExtendEvery}
		},
		start: func(c traffic.Client, a Algorithm, _ *traffic.Resource) error { return traffic.SpecRedLock(c, a.Spec) },
		key:   func(a Algorithm) string { return a.Spec.Key },
		model: checker.LockSimple,
		// The spec's keys may be set at the call, before the majority forms
		// (checker.LeaseFromCall).
		linOptions: func(Algorithm) []checker.LinOption {
			return []checker.LinOption{checker.AcquireMayFail, checker.LeaseFromCall}
		},
		ops:     baseOps,
		ttlRule: wholeMilliseconds,
	},
	{
		name:   AlgRedLockRedisson,
		fields: append([]string{"kind", "groups", "multi_lock"}, ownerFields...),
		decode: func(d *decoder, s *Scenario, o *obj, f string, a *Algorithm) {
			gs := d.groups(s, o, f)
			lk, opts, oc := d.owner(s, o, "")
			a.Redisson = traffic.RedissonConfig{Groups: gs, Lock: lk, ClientOptions: opts,
				Options: redlock.RedissonOptions{MultiLock: o.bool("multi_lock", false)}, OwnerConfig: oc}
		},
		settings: func(a *Algorithm) settings {
			return settings{holding: &a.Redisson.Holding, owner: &a.Redisson.OwnerConfig}
		},
		start: func(c traffic.Client, a Algorithm, _ *traffic.Resource) error {
			return traffic.RedissonRedLock(c, a.Redisson)
		},
		key:        func(a Algorithm) string { return a.Redisson.Lock },
		model:      checker.LockReentrant,
		linOptions: func(Algorithm) []checker.LinOption { return []checker.LinOption{checker.AcquireMayFail} },
		ops:        baseOps,
	},
	peerRows[0], peerRows[1], peerRows[2],
}

// algorithmNamed is the descriptor of kind, nil when there is none.
func algorithmNamed(kind string) *algDesc {
	i := slices.IndexFunc(algorithms, func(a *algDesc) bool { return a.name == kind })
	if i < 0 {
		return nil
	}
	return algorithms[i]
}

// algorithmNames are the kinds, in table order.
func algorithmNames() []string {
	out := make([]string, len(algorithms))
	for i, a := range algorithms {
		out[i] = a.name
	}
	return out
}

// anyAlgorithmField lists every field of any kind, once each, in table
// order: what the algorithm section may hold before its kind is known.
func anyAlgorithmField() []string {
	var out []string
	for _, a := range algorithms {
		for _, f := range a.fields {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

func reentrantSettings(a *Algorithm) settings {
	return settings{holding: &a.Reentrant.Holding, owner: &a.Reentrant.OwnerConfig}
}

// syncedMayFail: a synced acquire (lock.Options.Deployment Replicated, or
// SyncReplicas) can refuse while nobody holds the lock (no replica
// acknowledged), which the strict models would call illegal although the
// lock promised nothing by refusing.
func syncedMayFail(opts lock.Options) []checker.LinOption {
	if (opts.Deployment == lock.Replicated || opts.SyncReplicas > 0) && !opts.IgnoreUnsynced {
		return []checker.LinOption{checker.AcquireMayFail}
	}
	return nil
}

// wholeMilliseconds is the TTL rule of SimpleLock and the spec's RedLock:
// SET PX takes whole milliseconds (lock.SimpleOptions.TTL), and 0 would be
// no lease at all. A TTL of 1500us is refused here, at its line, rather
// than rounded: rounded, the key would live 1 ms while the lease counted
// 1.5 ms.
func wholeMilliseconds(ttl time.Duration) string {
	if ttl < time.Millisecond || ttl%time.Millisecond != 0 {
		return "must be a positive whole number of milliseconds"
	}
	return ""
}

// desc is the descriptor of a's kind, nil for an unknown kind.
func (a Algorithm) desc() *algDesc { return algorithmNamed(a.Kind) }

// LockKind is the Porcupine model of the algorithm's operations.
func (a Algorithm) LockKind() checker.LockKind {
	if k := a.desc(); k != nil {
		return k.model
	}
	return checker.LockReentrant
}

// LinOptions are the model adjustments the algorithm needs: RedLock and a
// synced acquire can refuse while nobody holds the lock (a split vote, a
// slow member, no replica acknowledgement), which the strict models call
// illegal although the lock promised nothing by refusing; the spec's
// RedLock also counts its lease from the call (checker.LeaseFromCall), as
// its keys may be set there, before the majority forms.
func (a Algorithm) LinOptions() []checker.LinOption {
	if k := a.desc(); k != nil && k.linOptions != nil {
		return k.linOptions(a)
	}
	return nil
}

// Belief is the belief model the algorithm's holders use when no client
// overrides it: the file's, or the kind's default (traffic.DefaultBelief).
func (a Algorithm) Belief() traffic.Belief {
	var b traffic.Belief
	if k := a.desc(); k != nil {
		b = k.settings(&a).holding.Belief
	}
	if b == traffic.BeliefDefault {
		b = traffic.DefaultBelief(a.Kind)
	}
	return b
}

// owners lists the algorithm's owners, and false when its ops name none
// (a kind without owners).
func (a Algorithm) owners() ([]string, bool) {
	k := a.desc()
	if k == nil {
		return nil, false
	}
	oc := k.settings(&a).owner
	if oc == nil {
		return nil, false
	}
	if len(oc.Owners) == 0 {
		return []string{"main"}, true // traffic's default owner
	}
	return oc.Owners, true
}

// algorithm reads the algorithm section n (at path f): its kind first,
// then the kind's fields (its row's decode), then the holding fields every
// kind has, and the kind's TTL rule.
func (d *decoder) algorithm(s *Scenario, n *yaml.Node, f string) {
	pre := d.mapping(f, n, anyAlgorithmField()...)
	if !pre.required("kind") {
		return
	}
	a := &s.Algorithm
	a.Kind = pre.oneOf("kind", "", algorithmNames()...)
	a.Line = resolve(n).Line
	if d.err != nil {
		return
	}
	k := a.desc()
	o := d.mapping(f, n, k.fields...)
	if d.err != nil {
		// Name the kind: the field may be valid for another one.
		d.err.Msg = fmt.Sprintf("not a field of algorithm %s (its fields: %s)", k.name, strings.Join(k.fields[1:], ", "))
		return
	}
	k.decode(d, s, o, f, a)
	st := k.settings(a)
	*st.holding = d.holding(o, traffic.Holding{Hold: time.Second, Think: 100 * time.Millisecond})
	if st.ttl != nil {
		d.checkTTL(k, o, join(f, "ttl"), *st.ttl)
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

// checkTTL applies kind k's TTL rule to a TTL read at field f of o.
func (d *decoder) checkTTL(k *algDesc, o *obj, f string, ttl time.Duration) {
	if d.err != nil || k.ttlRule == nil {
		return
	}
	if msg := k.ttlRule(ttl); msg != "" {
		d.failf(o.at("ttl"), f, "%s", msg)
	}
}

// group reads a single-group kind's group: a master's name, by default the
// first master.
func (d *decoder) group(s *Scenario, o *obj, f string) string {
	masters := s.masters()
	g := o.str("group", masters[0])
	if _, ok := s.group(g); !ok && d.err == nil {
		d.failf(o.at("group"), join(f, "group"), "unknown group %q (the masters are %s)", g, strings.Join(masters, ", "))
	}
	return g
}

// groups reads a RedLock kind's groups: distinct masters, by default all.
func (d *decoder) groups(s *Scenario, o *obj, f string) []string {
	masters := s.masters()
	if !o.has("groups") {
		return masters
	}
	gs := o.strs("groups")
	items, gf := o.list("groups")
	for i, g := range gs {
		if _, ok := s.group(g); !ok {
			d.failf(items[i], index(gf, i), "unknown group %q (the masters are %s)", g, strings.Join(masters, ", "))
		}
		if slices.Index(gs, g) != i {
			d.failf(o.at("groups"), index(gf, i), "group %q listed twice", g)
		}
	}
	if len(gs) == 0 {
		d.failf(o.at("groups"), gf, "at least one group is needed")
	}
	return gs
}

func decodeSimple(d *decoder, s *Scenario, o *obj, f string, a *Algorithm) {
	a.Simple = traffic.SimpleConfig{
		Group: d.group(s, o, f), Key: o.str("key", "lk"), TTL: o.dur("ttl", 10*time.Second),
		UnsafeDelRelease: o.bool("unsafe_del", false),
		PlainSetNX:       o.bool("plain_setnx", false),
		NoReleaseLatch:   !o.bool("release_latch", true),
	}
}

func decodeReentrant(d *decoder, s *Scenario, o *obj, f string, a *Algorithm) {
	g := d.group(s, o, f)
	lk, opts, oc := d.owner(s, o, g)
	a.Reentrant = traffic.ReentrantConfig{Group: g, Lock: lk, Options: opts, OwnerConfig: oc}
	if o.has("locks") {
		a.Reentrant.Locks = d.locks(o, f)
		if len(a.Reentrant.Locks) > 0 {
			a.Reentrant.Lock = a.Reentrant.Locks[0]
		}
	}
}

// locks reads reentrant's locks: distinct names, at least one and at most
// maxLocks, instead of lock (every client holds each of them, on one lock
// client).
func (d *decoder) locks(o *obj, f string) []string {
	if o.has("lock") {
		d.failf(o.at("locks"), join(f, "locks"), "give lock or locks, not both")
		return nil
	}
	ls := o.strs("locks")
	items, lf := o.list("locks")
	for i, l := range ls {
		if slices.Index(ls, l) != i {
			d.failf(items[i], index(lf, i), "lock %q listed twice", l)
		}
	}
	if len(ls) == 0 && d.err == nil {
		d.failf(o.at("locks"), lf, "at least one lock is needed")
	}
	if len(ls) > maxLocks && d.err == nil {
		d.failf(o.at("locks"), lf, "%d locks: at most %d (each client runs a loop per lock)", len(ls), maxLocks)
	}
	return ls
}

// maxLocks bounds reentrant's locks, as CheckLimits bounds the clients: a
// client runs a process per lock.
const maxLocks = 100

func decodeSpec(d *decoder, s *Scenario, o *obj, f string, a *Algorithm) {
	a.Spec = traffic.SpecConfig{
		Groups: d.groups(s, o, f), Key: o.str("key", "lk"),
		Options: redlock.SpecOptions{
			TTL: o.dur("ttl", 10*time.Second), DriftFactor: o.float("drift_factor", 0, 0, math.Nextafter(1, 0)),
			Tries:         int(o.int("tries", 0, 0, 1000)),
			RetryDelayMin: o.dur("retry_delay_min", 0), RetryDelayMax: o.dur("retry_delay_max", 0),
			PlainSetNX: o.bool("plain_setnx", false),
		},
		Retry:       o.bool("retry", false),
		ExtendEvery: o.dur("extend_every", 0),
	}
	if sp := a.Spec.Options; d.err == nil && sp.RetryDelayMax < sp.RetryDelayMin {
		d.failf(o.at("retry_delay_max"), join(f, "retry_delay_max"), "below retry_delay_min")
	}
}

// deployments are options.config's values: the Redisson configuration a
// lock client models (lock.Deployment).
var deployments = []string{lock.SingleServer.String(), lock.Replicated.String()}

// owner reads the fields the owner-based kinds share beyond the group(s):
// the lock's name, the lock client's options and the OwnerConfig. group is
// the lock's group ("" for RedLock's several): options.config defaults to
// replicated when it has replicas, as Redisson's default configuration for
// such a deployment (master-slave, Sentinel) takes the synced step, and to
// single-server otherwise.
func (d *decoder) owner(s *Scenario, o *obj, group string) (string, lock.Options, traffic.OwnerConfig) {
	lk := o.str("lock", "lk")
	oc := traffic.OwnerConfig{
		RandomOwners: o.bool("random_owners", false),
		Depth:        int(o.int("depth", 1, 1, 100)),
		Wait:         o.dur("wait", 0),
	}
	if o.has("owners") {
		oc.Owners = o.strs("owners")
		_, of := o.get("owners")
		for i, w := range oc.Owners {
			if slices.Index(oc.Owners, w) != i {
				d.failf(o.at("owners"), index(of, i), "owner %q listed twice", w)
			}
		}
	}
	oc.Lease = d.lease(o)
	on, of := o.get("options")
	opts := d.mapping(of, on, "config", "check_synced", "latch", "latch_cleanup", "latch_ttl", "idempotent", "sync_replicas", "sync_timeout",
		"watchdog_timeout", "watchdog_batch_size")
	def := lock.SingleServer
	if n, ok := s.group(group); ok && len(n.Replicas) > 0 {
		def = lock.Replicated
	}
	dep := lock.SingleServer
	if opts.oneOf("config", def.String(), deployments...) == lock.Replicated.String() {
		dep = lock.Replicated
	}
	return lk, lock.Options{
		Deployment:         dep,
		IgnoreUnsynced:     !opts.bool("check_synced", true),
		DisableUnlockLatch: !opts.bool("latch", true),
		KeepUnlockLatch:    !opts.bool("latch_cleanup", true),
		LatchTTL:           opts.msDur("latch_ttl", 0),
		IdempotentAcquire:  opts.bool("idempotent", false),
		SyncReplicas:       int(opts.int("sync_replicas", 0, 0, 100)),
		SyncTimeout:        opts.msDur("sync_timeout", 0),
		WatchdogTimeout:    opts.msDur("watchdog_timeout", 0),
		WatchdogBatchSize:  int(opts.int("watchdog_batch_size", 100, 1, 100_000)),
	}, oc
}
