package traffic

import (
	"context"
	"fmt"
	"time"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
)

// RedissonConfig is a workload of one client on Redisson's RedLock (or
// MultiLock) over several independent groups (redlock.Redisson).
type RedissonConfig struct {
	// Groups are the independent masters (group names), one member lock
	// each, in the order Redisson tries them.
	Groups []string
	// Lock is the members' lock name (their Redis key on every group).
	Lock string
	// ClientOptions configure each member's lock.Client, as
	// ReentrantConfig.Options (ID defaults to the client's name).
	ClientOptions lock.Options
	// Options configure the RedLock (MultiLock for all members); OnEvent,
	// if set, is called after the workload's own bookkeeping.
	Options redlock.RedissonOptions
	// OwnerConfig and Holding are as in ReentrantConfig, with Wait and
	// Lease those of Redisson.TryLock. With the watchdog (Lease 0), under
	// the careful model the belief ends ("expire", "lost") when the members'
	// watchdogs have reported so many of the holding's members lost that
	// fewer than the quorum remain. Belief's default is DefaultBelief's.
	OwnerConfig
	Holding
}

// KindRedLockRedisson is the workload's kind on Redisson's RedLock: its
// name in scenario files (algorithm.kind) and in errors.
const KindRedLockRedisson = "redlock-redisson"

// redissonNames are RedissonRedLock's names; its stream keeps its first
// name.
var redissonNames = names{kind: KindRedLockRedisson, stream: "redisson-redlock"}

// DefaultBelief is trusting, as for every Redisson lock
// (ReentrantConfig.DefaultBelief): Redisson's RedLock's tryLock checks no
// elapsed time and returns only true or false.
func (RedissonConfig) DefaultBelief() Belief { return BeliefTrusting }

// RedissonRedLock starts a process on c that loops as Reentrant does, on a
// Redisson RedLock over Groups; op records are those of Reentrant.
func RedissonRedLock(c Client, cfg RedissonConfig) error {
	const kind = KindRedLockRedisson
	lp, err := newLoop(c, redissonNames, cfg.DefaultBelief(), cfg.Lock, cfg.OwnerConfig, cfg.Holding)
	if err != nil {
		return err
	}
	name, rt := c.Name(), lp.rt
	conns, err := groupConns(c, kind, cfg.Groups)
	if err != nil {
		return err
	}
	mt := &memberTrack{lp: lp, held: make([]bool, len(conns))}
	members := make([]redlock.Member, len(conns))
	for i, conn := range conns {
		lc, err := lock.New(conn, rt, lostOptions(cfg.ClientOptions, name, func(_, owner string) { mt.lost(i, owner) }))
		if err != nil {
			return fmt.Errorf("traffic: %s on client %s: member %d: %w", kind, name, i, err)
		}
		members[i] = redlock.Member{Lock: lc.Lock(cfg.Lock), Conn: conn}
		lp.watchdog = lc.WatchdogTimeout() // the same options on every member
	}
	opts := cfg.Options
	user := opts.OnEvent
	opts.OnEvent = func(ev redlock.Event) {
		mt.event(ev)
		if user != nil {
			user(ev)
		}
	}
	r, err := redlock.NewRedisson(rt, members, opts)
	if err != nil {
		return fmt.Errorf("traffic: %s on client %s: %w", kind, name, err)
	}
	mt.quorum = r.Quorum()
	lp.l = redissonHeld{r: r, wait: cfg.Wait, lease: cfg.Lease}
	// The first acquire of a holding decides which members it holds; the
	// reentrant ones re-enter those.
	lp.onAcquire = func(depth int) {
		mt.tracking = depth == 0
		if mt.tracking {
			clear(mt.held)
			mt.reported = false
		}
	}
	c.Go(kind+":"+cfg.Lock, lp.run)
	return nil
}

// memberTrack follows which members the current holding holds, from the
// acquisition's events and the watchdogs' loss reports.
type memberTrack struct {
	lp       *ownerLoop
	held     []bool
	quorum   int
	tracking bool // during the first acquire of a holding
	reported bool // the holding's loss is recorded
}

func (m *memberTrack) event(ev redlock.Event) {
	if !m.tracking {
		return
	}
	switch ev.Kind {
	case redlock.EventAcquired:
		m.held[ev.Member] = true
	case redlock.EventError:
		m.held[ev.Member] = false // unlocked at once, in case it was applied
	case redlock.EventRestart, redlock.EventGiveUp:
		clear(m.held)
	}
}

// lost is member i's watchdog reporting owner's hold gone: under the
// careful model the holding's belief ends when fewer than the quorum of its
// members remain (the other models' holders do not learn of it). The
// loss is recorded once per holding, even when it arrives after the release
// call (the renewal was in flight), as Reentrant records every loss report.
func (m *memberTrack) lost(i int, owner string) {
	b := m.lp.active
	if b == nil || b.owner != owner || !m.held[i] || !m.lp.model.observesLoss() {
		return
	}
	m.held[i] = false
	n := 0
	for _, h := range m.held {
		if h {
			n++
		}
	}
	if n < m.quorum && !m.reported {
		m.reported = true
		b.lost()
	}
}

type redissonHeld struct {
	r           *redlock.Redisson
	wait, lease time.Duration
}

func (h redissonHeld) acquire(ctx context.Context, owner string, _ bool) (Grant, error) {
	return Grant{}, h.r.TryLock(ctx, owner, h.wait, h.lease)
}

func (h redissonHeld) release(ctx context.Context, owner string, _ bool) error {
	return h.r.Unlock(ctx, owner)
}
