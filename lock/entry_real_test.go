package lock_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
)

// TestWaitersShareASubscriptionOnRedis: on a real redis-server, twenty
// goroutines of one Client waiting for one lock hold one pub/sub
// connection between them (PUBSUB NUMSUB of the lock's channel is 1, not
// 20), a waiter whose context is cancelled leaves the others' subscription
// as it was, and each release wakes one waiter: the twenty take the lock
// in turn with about one acquire script each, not one per waiter per
// release (about 230 for twenty).
func TestWaitersShareASubscriptionOnRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	rc := newClient(t, redistest.Start(t).Addr)
	ctx := context.Background()
	rt := lock.WallRuntime{}
	holder, err := lock.New(lock.NewRedisConn(rc), rt, lock.Options{})
	must(t, err)
	defer func() { must(t, holder.Close()) }()
	c, err := lock.New(lock.NewRedisConn(rc), rt, lock.Options{})
	must(t, err)
	defer func() { must(t, c.Close()) }()
	must(t, holder.Lock("job").Lock(ctx, "h"))

	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n+1)
	cctx, cancel := context.WithCancel(ctx)
	wg.Go(func() { errs[n] = c.Lock("job").Lock(cctx, "cancelled") })
	time.Sleep(200 * time.Millisecond) // the cancelled one blocks first: it reads the subscription
	for i := range n {
		wg.Go(func() {
			owner := fmt.Sprintf("w%d", i)
			if errs[i] = c.Lock("job").Lock(ctx, owner); errs[i] == nil {
				time.Sleep(5 * time.Millisecond)
				errs[i] = c.Lock("job").Unlock(ctx, owner)
			}
		})
	}
	channel := "redisson_lock__channel:{job}"
	numsub := func() int64 {
		v, err := rc.PubSubNumSub(ctx, channel).Result()
		must(t, err)
		return v[channel]
	}
	deadline := time.Now().Add(5 * time.Second)
	for numsub() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // every waiter tried once and blocked
	if got := numsub(); got != 1 {
		t.Errorf("%d pub/sub connections on the lock's channel with %d waiters of one client; want 1", got, n+1)
	}
	cancel()
	time.Sleep(100 * time.Millisecond)
	if got := numsub(); got != 1 {
		t.Errorf("after a waiter's cancel, %d pub/sub connections on the channel; want the shared one, 1", got)
	}
	before := evalshaCalls(t, rc)
	must(t, holder.Lock("job").Unlock(ctx, "h"))
	wg.Wait()
	for i, err := range errs[:n] {
		if err != nil {
			t.Errorf("waiter %d: %v", i, err)
		}
	}
	if tries := evalshaCalls(t, rc) - before; tries > 3*n {
		t.Errorf("%d scripts run for %d waiters' acquires and releases; want about 2 each (one release wakes one waiter)", tries, n)
	}
	if got := numsub(); got != 0 {
		t.Errorf("%d subscriptions left once every waiter returned; want 0", got)
	}
}

// evalshaCalls is the server's count of EVALSHA and EVAL calls so far
// (INFO commandstats).
func evalshaCalls(t *testing.T, rc *redis.Client) int {
	t.Helper()
	info, err := rc.Info(context.Background(), "commandstats").Result()
	must(t, err)
	n := 0
	for _, line := range strings.Split(info, "\n") {
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), cmd); ok {
				calls, _, _ := strings.Cut(rest, ",")
				v, err := strconv.Atoi(calls)
				must(t, err)
				n += v
			}
		}
	}
	return n
}
