package scenario

// The custom kind: a lock of the user's own given in Go (traffic.User),
// which a scenario gets from WithUserLock; a file alone names its settings
// and cannot run it.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/traffic"
)

// Custom is the custom kind's config. Its New is nil when loaded from a
// file: WithUserLock sets it.
type Custom struct{ traffic.UserConfig }

// userFields are the fields of the kinds of a user's lock (custom, script):
// where the lock is, the model it claims, its lease, and the owner and
// holding settings (no wait: the lock waits as it does itself).
var userFields = []string{"group", "key", "model", "lease", "owners", "random_owners", "depth", "extend_every",
	"hold", "think", "start", "holds", "belief"}

// userOps are the op records of a user's lock's workload.
var userOps = []string{history.OpAcquire, history.OpRelease, history.OpExtend, history.OpExpire}

// Kind is traffic.KindCustom.
func (*Custom) Kind() string { return traffic.KindCustom }

// Fields are a user's lock's.
func (*Custom) Fields() []string { return userFields }

func (k *Custom) decode(d *decoder, s *Scenario, o *obj, f string) {
	k.UserConfig = d.user(s, o, f, true)
}

// user reads the fields of a user's lock (custom's, and script's beyond
// its scripts): the lease is required, a positive whole number of
// milliseconds or "watchdog" (the lock keeps the key until its release),
// as the checkers need to know when a hold may have expired; it is the
// owner settings' (OwnerConfig.Lease), which a client entry may override.
func (d *decoder) user(s *Scenario, o *obj, f string, watchdog bool) traffic.UserConfig {
	uc := traffic.UserConfig{Group: d.group(s, o, f), Key: o.str("key", "lk"),
		Model: o.oneOf("model", "simple", traffic.UserModels...)}
	if !o.required("lease") {
		return uc
	}
	uc.OwnerConfig = d.ownerConfig(s, o, nil, watchdog)
	uc.ExtendEvery = o.dur("extend_every", 0)
	if d.err == nil && uc.ExtendEvery > 0 && uc.OwnerConfig.Lease == 0 {
		d.failf(o.at("extend_every"), join(f, "extend_every"), "an extension renews a lease: with lease watchdog there is none")
	}
	return uc
}

func (k *Custom) settings() settings {
	return settings{holding: &k.Holding, owner: &k.OwnerConfig, extendEvery: &k.ExtendEvery, group: &k.Group, lockWaits: true}
}

// missingLock refuses a custom kind without its lock: a file names the
// settings, the lock itself comes from Go.
func (k *Custom) missingLock() error {
	if k.New != nil {
		return nil
	}
	return errors.New("custom: the lock is given in Go (scenario.WithUserLock, or the locktest package); a file alone cannot run it (kind script takes Lua files)")
}

// Model is the model the lock claims (userModel).
func (k *Custom) Model() checker.LockKind { return userModel(k.UserConfig.Model) }

// userModel is the checker's model of a user's lock claiming model: the
// simple lock's (also for an empty config), or the reentrant lock's for a
// reentrant or fenced one (as Redisson's fenced lock's is).
func userModel(model string) checker.LockKind {
	if model == "reentrant" || model == "fenced" {
		return checker.LockReentrant
	}
	return checker.LockSimple
}

// LinOptions are none: a user's lock that refuses promises the lock was
// held.
func (*Custom) LinOptions() []checker.LinOption { return nil }

// LockKey is the key.
func (k *Custom) LockKey() string { return k.Key }

// Ops are acquire, release, extend and expire.
func (*Custom) Ops() []string { return userOps }

// StartWorkload starts traffic.User.
func (k *Custom) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return traffic.User(c, k.UserConfig)
}

// WithUserLock returns a copy of s whose clients run the user's lock that
// newLock makes, claiming model (traffic.UserModels; "" is a custom or
// script file's own model, else "simple"), in place of the file's
// algorithm, and with everything else of the file: topology, clients,
// faults, expectation. The algorithm becomes the custom kind with the
// file's settings: its group and lock key, its holding (hold, think,
// start, holds, belief), its owners and depth, its lease (a ttl, or an
// owner kind's lease; "watchdog" stays a hold kept until its release) and
// extension interval, and the clients' own settings (a client's ttl
// becomes its lease); newLock builds each client's lock with that client's
// lease (traffic.User gives it), the one the checkers count its holds'
// expiry from. A wait is dropped: the user's lock waits as it does
// itself; so is an rwlock's read_ratio: the user's lock has one half. A kind on several groups (RedLock) is an error: a user's lock
// runs on one. The copy has no Source: a process that would parse the
// file again (a real run's client workers) would run the file's lock, not
// the user's, and refuses instead.
func (s *Scenario) WithUserLock(newLock traffic.NewUserLock, model string) (*Scenario, error) {
	a := s.Algorithm
	if newLock == nil {
		return nil, errors.New("scenario: WithUserLock: nil lock maker")
	}
	if a.Workload == nil {
		return nil, s.ErrAt(a.Line, "algorithm", errors.New("no algorithm to replace"))
	}
	uc, err := userConfig(a.Workload)
	if err != nil {
		return nil, s.ErrAt(a.Line, "algorithm.kind", err)
	}
	if model != "" {
		uc.Model = model
	}
	if !slices.Contains(traffic.UserModels, uc.Model) {
		return nil, fmt.Errorf("scenario: WithUserLock: unknown model %q (want one of simple, reentrant, fenced)", uc.Model)
	}
	uc.New = newLock
	c := *s
	c.Algorithm = Algorithm{Kind: traffic.KindCustom, Workload: &Custom{uc}, Line: a.Line}
	c.Clients = slices.Clone(s.Clients)
	for i := range c.Clients {
		cs := &c.Clients[i].Settings
		if cs.Lease == nil {
			cs.Lease = cs.TTL
		}
		cs.TTL, cs.Wait, cs.ReadRatio = nil, nil, nil
	}
	c.Source = nil
	return &c, nil
}

// userKind is a Workload of a user's lock (custom, script), whose
// configuration is a traffic.UserConfig.
type userKind interface {
	userConfig() traffic.UserConfig
}

func (k *Custom) userConfig() traffic.UserConfig { return k.UserConfig }

// userConfig is the configuration of a user's lock that takes the place
// of w: a user's lock kind's own (userKind), or w's settings.
func userConfig(w Workload) (traffic.UserConfig, error) {
	if u, ok := w.(userKind); ok {
		return u.userConfig(), nil
	}
	st := w.settings()
	if st.group == nil {
		return traffic.UserConfig{}, fmt.Errorf("%s: the lock is kept on several groups; a user's lock runs on one", w.Kind())
	}
	uc := traffic.UserConfig{Group: *st.group, Key: w.LockKey(), Model: "simple", Holding: *st.holding}
	if st.owner != nil {
		uc.OwnerConfig = *st.owner
		uc.Wait = 0
	}
	if st.ttl != nil {
		uc.OwnerConfig.Lease = *st.ttl
	}
	if st.extendEvery != nil {
		uc.ExtendEvery = *st.extendEvery
	}
	return uc, nil
}
