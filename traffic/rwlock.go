package traffic

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/locksim/locksim/lock"
)

// ReadWriteConfig is a workload of one client on a read-write lock
// (lock.ReadWriteLock, RedissonReadWriteLock).
type ReadWriteConfig struct {
	// Group is the Redis group (master name) the lock lives on.
	Group string
	// Lock is the lock's name (its Redis key).
	Lock string
	// Options configure the client's lock.Client, as in ReentrantConfig.
	Options lock.Options
	// ReadRatio is the probability, drawn per holding from the client's PRNG,
	// that the holding takes the read half; otherwise the write half. 0
	// never takes the read half and 1 always does, whatever the draws: a
	// writer and a reader (a scenario's client entry sets its own).
	ReadRatio float64
	// OwnerConfig and Holding are as in ReentrantConfig; a holding takes
	// one half Depth times. Belief's default is DefaultBelief's.
	OwnerConfig
	Holding
}

// KindReadWrite is the read-write workload's kind: its name in scenario
// files (algorithm.kind) and in errors.
const KindReadWrite = "rwlock"

// readWriteNames are ReadWrite's names; its stream keeps its first name.
var readWriteNames = names{kind: KindReadWrite, stream: "read-write"}

// DefaultBelief is trusting, as for every Redisson lock
// (ReentrantConfig.DefaultBelief): the read and write locks' tryLock return
// only true or false.
func (ReadWriteConfig) DefaultBelief() Belief { return BeliefTrusting }

// ReadWrite starts a process on c that, after Start, loops (forever, or
// until Holds holdings are done): pick an owner and a
// half (read with probability ReadRatio), acquire it Depth times with
// TryLockFor(Wait, Lease), hold, release as many times, think. Reads are
// recorded as "acquire-read" and "release-read", writes as "acquire" and
// "release"; "expire" as in Reentrant.
func ReadWrite(c Client, cfg ReadWriteConfig) error {
	const kind = KindReadWrite
	if c == nil {
		return fmt.Errorf("traffic: %s: nil client", kind)
	}
	if err := checkRatio(kind, c.Name(), cfg.ReadRatio); err != nil {
		return err
	}
	loops, lc, err := ownerLoops(c, readWriteNames, cfg.DefaultBelief(), ReentrantConfig{
		Group: cfg.Group, Lock: cfg.Lock, Options: cfg.Options, OwnerConfig: cfg.OwnerConfig, Holding: cfg.Holding,
	})
	if err != nil {
		return err
	}
	for _, lp := range loops {
		lp.l = rwHeld{rw: lc.ReadWriteLock(cfg.Lock), wait: cfg.Wait, lease: cfg.Lease}
		lp.readRatio = cfg.ReadRatio
	}
	startLoops(c, kind, loops)
	return nil
}

type rwHeld struct {
	rw          *lock.ReadWriteLock
	wait, lease time.Duration
}

func (h rwHeld) half(read bool) *lock.RWHalf {
	if read {
		return h.rw.ReadLock()
	}
	return h.rw.WriteLock()
}

func (h rwHeld) acquire(ctx context.Context, owner string, read bool) (Grant, error) {
	return Grant{}, h.half(read).TryLockFor(ctx, owner, h.wait, h.lease)
}

func (h rwHeld) release(ctx context.Context, owner string, read bool) error {
	return h.half(read).Unlock(ctx, owner)
}

// checkRatio rejects a read ratio outside [0, 1].
func checkRatio(kind, client string, r float64) error {
	if math.IsNaN(r) || r < 0 || r > 1 {
		return fmt.Errorf("traffic: %s on client %s: read ratio %v outside [0, 1]", kind, client, r)
	}
	return nil
}
