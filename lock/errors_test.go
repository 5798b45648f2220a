package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/redis/go-redis/v9"
)

// TestSyncedGiveBackFailure: a synced acquire that no replica acknowledged
// gives the hold back; when the give-back itself fails, the hold may
// remain, so the outcome is unknown (IsUnknown), not ErrNotSynced, and the
// give-back's error is wrapped. Before, the give-back's error was
// swallowed and the caller told ErrNotSynced: "nothing held". On miniredis
// and redis-server (neither has a replica: WAIT answers 0).
func TestSyncedGiveBackFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		// A short RetryDelay: the 4 retries of each acquire at the default
		// 1-2 s were 13 s of waiting per backend.
		opts := lock.Options{ID: "c", SyncReplicas: 1, SyncTimeout: 20 * time.Millisecond, RetryDelay: 10 * time.Millisecond}
		ok, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, opts)
		must(t, err)
		broken, err := lock.New(faultConn{Conn: lock.NewRedisConn(rc), fail: []*lock.Script{scripts.ReentrantUnlock}}, lock.WallRuntime{}, opts)
		must(t, err)

		err = ok.Lock("a").TryLock(ctx, "o")
		if !errors.Is(err, lock.ErrNotSynced) || lock.IsUnknown(err) {
			t.Errorf("give-back that worked: %v; want ErrNotSynced, a known outcome", err)
		}
		if held, _ := ok.Lock("a").IsLocked(ctx); held {
			t.Errorf("give-back that worked left the lock held")
		}

		err = broken.Lock("b").TryLock(ctx, "o")
		if errors.Is(err, lock.ErrNotSynced) || !lock.IsUnknown(err) || !errors.Is(err, errBroken) {
			t.Errorf("give-back that failed: %v (unknown %v); want an unknown outcome wrapping %v, not ErrNotSynced",
				err, lock.IsUnknown(err), errBroken)
		}
		if held, _ := broken.Lock("b").IsHeldBy(ctx, "o"); !held {
			t.Errorf("the failed give-back left no hold: the test's conn did not fail it")
		}
		if n := broken.Renewals(); n != 0 {
			t.Errorf("%d watchdogs run after the failed synced acquire", n)
		}
	})
}
