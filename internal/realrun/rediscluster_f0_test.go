package realrun

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
)

// clusterClient is a go-redis ClusterClient on rc, closed when the test
// ends.
func clusterClient(t *testing.T, rc *redistest.RedisCluster) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: rc.Addrs(), DisableIdentity: true})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// clusterAcquire is client's acquire of lock "lk" through a ClusterClient:
// kind "simple" is SimpleLock's (its result the token), "reentrant" the
// reentrant lock's for owner o1 (synced: WAIT 1 300 after the script, in
// one pipeline on the slot's master), "fenced" FencedLock's for owner o1
// (its result the fencing token). release gives the hold back (reentrant
// and fenced only).
func clusterAcquire(t *testing.T, client string, uc redis.UniversalClient, kind string, synced bool) (acquire, release func(context.Context) (string, error)) {
	t.Helper()
	conn, rt := lock.NewRedisConn(uc), lock.WallRuntime{}
	if kind == "simple" {
		sl, err := lock.NewSimpleLock(conn, rt, "lk", lock.SimpleOptions{TTL: 20 * time.Second})
		must(t, err)
		return func(ctx context.Context) (string, error) {
			l, err := sl.TryLock(ctx)
			if err != nil {
				return "", err
			}
			return l.Token, nil
		}, nil
	}
	opts := lock.Options{ID: client}
	if synced {
		opts.SyncReplicas, opts.SyncTimeout = 1, 300*time.Millisecond
	}
	c, err := lock.New(conn, rt, opts)
	must(t, err)
	if kind == "fenced" {
		f := c.FencedLock("lk")
		return func(ctx context.Context) (string, error) {
				tok, err := f.TryLockFor(ctx, "o1", 0, 20*time.Second)
				return strconv.FormatInt(tok, 10), err
			}, func(ctx context.Context) (string, error) {
				return "", f.Unlock(ctx, "o1")
			}
	}
	l := c.Lock("lk")
	return func(ctx context.Context) (string, error) {
			// An explicit lease: no watchdog outlives the test.
			return "", l.TryLockFor(ctx, "o1", 0, 20*time.Second)
		}, func(ctx context.Context) (string, error) {
			return "", l.Unlock(ctx, "o1")
		}
}

// waitCaughtUp waits until replica r has received everything master m
// had written (its replication offset reached m's).
func waitCaughtUp(m, r *redistest.Server) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		mi, err1 := m.Info("replication")
		ri, err2 := r.Info("replication")
		if err1 == nil && err2 == nil {
			mo, _ := strconv.ParseInt(mi["master_repl_offset"], 10, 64)
			ro, _ := strconv.ParseInt(ri["slave_repl_offset"], 10, 64)
			if ro >= mo && mo > 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("replica did not catch up with its master")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestF0RedisClusterFailover is F0 on a real Redis Cluster (3 masters, 3
// replicas; cluster-node-timeout 1 s): c1 takes lock "lk" through a
// ClusterClient on m1, the master of the lock's slot; m1 fails over to its
// replica r1, which never got c1's write; c2, through a ClusterClient of
// its own, takes the lock from r1 while c1 still holds it. The checker,
// fed the real-time history, reports both holders (mutual exclusion) and
// c1 holding a lock the slot's master no longer has (silent loss), for
// the reentrant lock and SimpleLock.
//
// How r1 is made to miss the write, deterministically: r1 is frozen
// (SIGSTOP), and m1 closes r1's replication connection (CLIENT KILL TYPE
// replica), so that m1 has no replica link at all when c1's write arrives
// and keeps it in its backlog only. (SIGSTOP alone would not do: the
// kernel buffers m1's stream for the frozen replica, which applies it when
// thawed.) Then either
//
//   - kill: m1 is killed (SIGKILL) and r1 thawed; r1 cannot reconnect, the
//     other masters flag m1 as failed after cluster-node-timeout, and r1
//     wins the election: the Cluster's own automatic failover; or
//   - force: m1 is frozen too before r1 is thawed (so that r1 cannot
//     resync the write from m1's backlog: its reconnection hangs), and
//     CLUSTER FAILOVER FORCE on r1 makes it the master without m1's
//     consent. m1, thawed, learns of the newer epoch, becomes r1's replica
//     and resyncs from it: c1's write is gone from both.
//
// With FencedLock (after c0 held and released it, so that r1 has the token
// counter at 1), c2 gets c1's token, 2, again: token regression too.
//
// The control: a synced acquire (WAIT 1 300 in the acquire's pipeline) is
// refused, since no replica acknowledges, and the same failover then
// breaks nothing.
func TestF0RedisClusterFailover(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		force  bool
		kind   string
		synced bool
		kinds  []checker.Kind
	}{
		{"kill-reentrant", false, "reentrant", false, []checker.Kind{checker.MutualExclusion, checker.SilentLoss}},
		{"force-simple", true, "simple", false, []checker.Kind{checker.MutualExclusion, checker.SilentLoss}},
		{"kill-fenced", false, "fenced", false, []checker.Kind{checker.MutualExclusion, checker.SilentLoss, checker.TokenRegression}},
		{"kill-reentrant-synced", false, "reentrant", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rcl := redistest.StartRedisCluster(t, redistest.RedisClusterConfig{})
			slot, err := rcl.KeySlot("lk")
			must(t, err)
			m, err := rcl.MasterOf(slot)
			must(t, err)
			rs, err := rcl.ReplicasOf(m)
			must(t, err)
			r := rs[0]
			must(t, r.WaitLinkUp(10*time.Second))

			rec := NewRecorder()
			cl := NewCluster(rec)
			cl.AddMaster("m1", m)
			cl.AddReplica("r1", "m1", r)
			cl.Watch("lk")
			args := []string{"o1"}
			if tc.kind == "simple" {
				args = nil
			}
			c1, _ := clusterAcquire(t, "c1", clusterClient(t, rcl), tc.kind, tc.synced)
			if tc.kind == "fenced" {
				// c0 holds and releases the lock first: token 1, which r1
				// does get, so that the token counter exists on both.
				c0, c0rel := clusterAcquire(t, "c0", clusterClient(t, rcl), tc.kind, false)
				if _, err := cl.Do(ctx, "c0", "lk", history.OpAcquire, args, c0); err != nil {
					t.Fatal(err)
				}
				if _, err := cl.Do(ctx, "c0", "lk", history.OpRelease, args, c0rel); err != nil {
					t.Fatal(err)
				}
				must(t, waitCaughtUp(m, r))
			}

			must(t, cl.Pause("r1"))
			if _, err := m.Do("CLIENT", "KILL", "TYPE", "replica"); err != nil {
				t.Fatal(err)
			}
			must(t, waitNoReplica(m))
			rec.Fault("cut-replication", "r1", "", "CLIENT KILL TYPE replica on m1: its replica link closed while r1 is frozen")
			_, err1 := cl.Do(ctx, "c1", "lk", history.OpAcquire, args, c1)
			if tc.synced {
				if !errors.Is(err1, lock.ErrNotSynced) {
					t.Fatalf("synced acquire with no replica link: %v, want ErrNotSynced", err1)
				}
			} else if err1 != nil {
				t.Fatalf("c1's acquire on m1: %v", err1)
			}

			how := "automatic failover after cluster-node-timeout"
			if tc.force {
				must(t, cl.Pause("m1"))
				must(t, cl.Resume("r1"))
				must(t, rcl.FailoverForce(r, slot, 20*time.Second))
				how = "CLUSTER FAILOVER FORCE on r1"
			} else {
				must(t, cl.Kill("m1"))
				must(t, cl.Resume("r1"))
				must(t, rcl.WaitMaster(slot, r, 30*time.Second))
			}
			off := "?"
			if info, err := r.Info("replication"); err == nil {
				off = info["master_repl_offset"]
			}
			rec.Failover("m1", "r1", how+" (r1's offset "+off+")")
			_ = cl.Snapshot(ctx)
			if tc.force {
				// m1, thawed, becomes r1's replica and drops what r1 never had.
				must(t, cl.Resume("m1"))
				must(t, m.WaitLinkUp(20*time.Second))
				// Its own view of the Cluster may still lack the slot (it
				// answers CLUSTERDOWN) until gossip catches it up.
				must(t, rcl.WaitOK(20*time.Second))
				rsp, err := m.DoAll([]string{"READONLY"}, []string{"EXISTS", "lk"})
				must(t, err)
				if rsp[1] != "0" {
					t.Fatalf("the old master still has c1's lock after resyncing from r1: EXISTS = %v", rsp[1])
				}
			}

			// c2 is a client that joins after the failover (a fresh slot map).
			c2, _ := clusterAcquire(t, "c2", clusterClient(t, rcl), tc.kind, false)
			if _, err := cl.Do(ctx, "c2", "lk", history.OpAcquire, args, c2); err != nil {
				t.Fatalf("c2's acquire on the promoted replica: %v", err)
			}
			time.Sleep(50 * time.Millisecond) // both go on working
			v := rec.Check()
			expectKinds(t, rec, v, tc.kinds...)
			for _, x := range v.Violations {
				if x.Kind == checker.MutualExclusion && !(strings.HasPrefix(x.Holders[0], "c1") && strings.HasPrefix(x.Holders[1], "c2") ||
					strings.HasPrefix(x.Holders[0], "c2") && strings.HasPrefix(x.Holders[1], "c1")) {
					t.Fatalf("mutual exclusion between %v, want c1 and c2", x.Holders)
				}
			}
		})
	}
}

// waitNoReplica waits until m counts no connected replica.
func waitNoReplica(m *redistest.Server) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := m.Info("replication")
		if err == nil && info["connected_slaves"] == "0" {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("master still counts a replica after CLIENT KILL TYPE replica")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
