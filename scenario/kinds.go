package scenario

// What several algorithm kinds share: their common field lists and op
// records, the readers of the fields they have in common (a group, groups,
// the owner-based kinds' lock and options), their TTL rule and their model
// adjustment. Each kind's own type and decoder are in kind_<name>.go.

import (
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/traffic"
)

// ownerFields are the fields the owner-based kinds share.
var ownerFields = []string{"lock", "group", "owners", "random_owners", "concurrent", "depth", "wait", "lease", "hold", "think", "options", "start", "holds", "belief"}

// peerHolding are the holding fields every peer kind has.
var peerHolding = []string{"hold", "think", "start", "holds", "belief"}

// baseOps are the op records every workload writes.
var baseOps = []string{history.OpAcquire, history.OpRelease, history.OpExpire}

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

// group reads a single-group kind's group: a master's name, by default the
// first master.
func (d *decoder) group(s *Scenario, o *obj, f string) string {
	masters := s.masters()
	g := o.str("group", masters[0])
	if _, ok := s.group(g); !ok && d.err == nil {
		d.failf(o.at("group"), join(f, "group"), "unknown group %q (the masters are %s)", g, nameList(masters))
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
			d.failf(items[i], index(gf, i), "unknown group %q (the masters are %s)", g, nameList(masters))
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

// ownerConfig reads the OwnerConfig's fields of o, s's algorithm section:
// random_owners, depth, wait (ownerWait; 0 for a kind without the field),
// owners and lease. forever is as ownerWait's; watchdog says whether the
// kind's lease may be watchdog (lease's).
func (d *decoder) ownerConfig(s *Scenario, o *obj, forever *bool, watchdog bool) traffic.OwnerConfig {
	oc := traffic.OwnerConfig{
		RandomOwners: o.bool("random_owners", false),
		Depth:        int(o.int("depth", 1, 1, 100)),
	}
	oc.Wait = d.ownerWait(s, o, forever)
	if o.has("owners") {
		oc.Owners = o.strs("owners")
		_, of := o.get("owners")
		for i, w := range oc.Owners {
			switch {
			case len(w) > history.MaxNameBytes:
				// A history that check refuses: findings quote the name.
				d.failf(o.at("owners"), index(of, i), "owner of %d bytes: a name is at most %d (history.MaxNameBytes)", len(w), history.MaxNameBytes)
			case slices.Index(oc.Owners, w) != i:
				d.failf(o.at("owners"), index(of, i), "owner %q listed twice", w)
			}
		}
	}
	if o.has("concurrent") {
		oc.Concurrent = o.bool("concurrent", false)
		slash := slices.IndexFunc(oc.Owners, func(w string) bool { return strings.Contains(w, "/") })
		switch {
		case oc.Concurrent && oc.RandomOwners:
			d.failf(o.at("concurrent"), join(o.path, "concurrent"), "not with random_owners: concurrent owners each hold in a loop of their own, so no holding picks an owner")
		case oc.Concurrent && slash >= 0:
			_, of := o.get("owners")
			d.failf(o.at("owners"), index(of, slash), "concurrent owner %q has a \"/\": each concurrent owner's loop draws from a stream named by its lock and owner, joined by \"/\"", oc.Owners[slash])
		case oc.Concurrent && len(oc.Owners) > maxLocks:
			d.failf(o.at("concurrent"), join(o.path, "concurrent"), "%d concurrent owners: at most %d (each runs a loop of its own)", len(oc.Owners), maxLocks)
		}
	}
	oc.Lease = d.lease(o, watchdog)
	return oc
}

// deployments are options.config's values: the Redisson configuration a
// lock client models (lock.Deployment).
var deployments = []string{lock.SingleServer.String(), lock.Replicated.String()}

// waitForever is the wait of Redisson's lock(), which waits as long as it
// takes: the fair kind's (traffic.FairConfig.Forever), and the algorithm
// section's only.
const waitForever = "forever"

// foreverOnly says where wait: forever is valid, in the errors that
// refuse it elsewhere: the word is Redisson's API's, which a user may try
// on any lock or client, and a bare "bad duration" would not say where it
// belongs.
const foreverOnly = waitForever + " is the fair kind's algorithm section's wait only (Redisson's lock() on a fair lock, which waits as long as it takes)"

// ownerWait reads the wait of o, s's algorithm section, of an owner-based
// kind: a duration, TryLockFor's wait. forever is where a kind that
// has Redisson's lock() (the fair kind's Forever) takes wait: forever,
// which sets it, keeps the line for the errors of a client's wait
// (decoder.foreverLine) and leaves the wait 0; nil for the other kinds, to
// which forever is an error saying where it belongs (foreverOnly).
func (d *decoder) ownerWait(s *Scenario, o *obj, forever *bool) time.Duration {
	if o.str("wait", "") != waitForever {
		return o.dur("wait", 0)
	}
	if forever == nil {
		d.failf(o.at("wait"), join(o.path, "wait"), "%s; algorithm %s's wait is a Go duration such as 250ms or 5s (0s: try once)", foreverOnly, s.Algorithm.Kind)
		return 0
	}
	*forever = true
	d.foreverLine = o.at("wait").Line
	return 0
}

// owner reads the fields the owner-based kinds share beyond the group(s):
// the lock's name, the lock client's options and the OwnerConfig (forever
// as ownerConfig's). group is the lock's group ("" for RedLock's several):
// options.config defaults to replicated when it has replicas, as
// Redisson's default configuration for such a deployment (master-slave,
// Sentinel) takes the synced step, and to single-server otherwise.
func (d *decoder) owner(s *Scenario, o *obj, group string, forever *bool) (string, lock.Options, traffic.OwnerConfig) {
	lk := o.str("lock", "lk")
	oc := d.ownerConfig(s, o, forever, true)
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
