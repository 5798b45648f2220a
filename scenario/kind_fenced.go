package scenario

// The fenced kind: Redisson's fenced lock with writes to a fenced resource
// that the run's clients share (traffic.FencedWrites).

import (
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/traffic"
)

// Fenced is the fenced kind's config. Its Resource is nil: each run's is
// newResource's, shared by the run's clients.
type Fenced struct {
	traffic.FencedWritesConfig
	// ResourceName is the fenced resource's name.
	ResourceName string
}

// Kind is traffic.KindFenced.
func (*Fenced) Kind() string { return traffic.KindFenced }

// Fields are the owner-based kinds' and the writes'.
func (*Fenced) Fields() []string {
	return append([]string{"resource", "writes", "write_latency"}, ownerFields...)
}

func (k *Fenced) decode(d *decoder, s *Scenario, o *obj, f string) {
	rc := d.reentrant(s, o, f)
	rc.Fenced = true
	k.ResourceName = o.str("resource", "db")
	k.FencedWritesConfig = traffic.FencedWritesConfig{ReentrantConfig: rc,
		Writes: int(o.int("writes", 1, 1, 1000)), WriteLatency: o.dur("write_latency", 10*time.Millisecond)}
}

func (k *Fenced) settings() settings {
	return settings{holding: &k.Holding, owner: &k.OwnerConfig, group: &k.Group}
}

// newResource is the run's one fenced resource, shared by every client.
func (k *Fenced) newResource() *traffic.Resource { return traffic.NewResource(k.ResourceName) }

// Model is the reentrant lock's.
func (*Fenced) Model() checker.LockKind { return checker.LockReentrant }

// LinOptions: a synced acquire may refuse a free lock (syncedMayFail).
func (k *Fenced) LinOptions() []checker.LinOption { return syncedMayFail(k.Options) }

// LockKey is the lock's name.
func (k *Fenced) LockKey() string { return k.Lock }

// Ops are the lock's and the writes.
func (*Fenced) Ops() []string {
	return []string{history.OpAcquire, history.OpRelease, history.OpWrite, history.OpExpire}
}

// StartWorkload starts traffic.FencedWrites, writing to res.
func (k *Fenced) StartWorkload(c traffic.Client, res *traffic.Resource) error {
	cfg := k.FencedWritesConfig
	cfg.Resource = res
	return traffic.FencedWrites(c, cfg)
}
