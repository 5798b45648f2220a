package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
)

// TestReplicatedDeploymentOnRedisServer: the replicated deployment on a
// real master with a real replica: INFO's connected_slaves sizes the WAIT
// (the lock is taken and released synced); with the replica stopped
// (SIGSTOP: still connected for the master, silent to WAIT) a Lock's
// acquire is given back after its retries and fails with ErrNotSynced
// holding nothing, while a FencedLock's acquire leaves its hold.
func TestReplicatedDeploymentOnRedisServer(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	ctx := context.Background()
	master, replicas := redistest.StartReplicated(t, 1, redistest.PersistNone)
	if err := master.WaitReplicas(1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	rc := newClient(t, master.Addr)
	c, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{
		Deployment: lock.Replicated, SyncTimeout: 100 * time.Millisecond, RetryDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	l := c.Lock("lk")
	if err := l.LockWithLease(ctx, "a", 10*time.Second); err != nil {
		t.Fatalf("synced acquire with a live replica: %v", err)
	}
	if err := l.Unlock(ctx, "a"); err != nil {
		t.Fatalf("synced unlock with a live replica: %v", err)
	}
	if err := replicas[0].Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = replicas[0].Resume() }()
	err = l.TryLock(ctx, "a")
	if !errors.Is(err, lock.ErrNotSynced) || lock.IsUnknown(err) {
		t.Fatalf("acquire with the replica stopped: %v; want ErrNotSynced", err)
	}
	if n, err := rc.Exists(ctx, "lk").Result(); err != nil || n != 0 {
		t.Fatalf("the unsynced acquire left the lock: EXISTS = %d, %v", n, err)
	}
	f := c.FencedLock("fk")
	if _, err := f.TryLock(ctx, "a"); !errors.Is(err, lock.ErrNotSynced) {
		t.Fatalf("fenced acquire with the replica stopped: %v; want ErrNotSynced", err)
	}
	if n, err := f.HoldCount(ctx, "a"); err != nil || n != 1 {
		t.Fatalf("the fenced acquire's hold: %d, %v; want 1 (kept, as Redisson's token calls keep it)", n, err)
	}
}
