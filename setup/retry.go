package setup

// What a client library does when a request times out.

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryPolicy is what a client library does when a request times out: it
// sends the same command again, up to MaxRetries more times, after a backoff.
// Because the first attempt may have been applied with its reply lost, a
// retry can run a command twice on the server. The zero value is NoRetry.
type RetryPolicy struct {
	// MaxRetries is the number of re-sends after the first attempt; 0 means
	// no retries.
	MaxRetries int
	// MinBackoff and MaxBackoff bound the pause before retry i (from 1): a
	// uniform draw in [MinBackoff, min(MaxBackoff, MinBackoff<<(i-1))]
	// (go-redis's exponential backoff), or with EqualJitter Redisson's
	// EqualJitterDelay(MinBackoff, MaxBackoff).
	MinBackoff, MaxBackoff time.Duration
	// EqualJitter draws the pause before retry i as Redisson's
	// EqualJitterDelay.calcDelay(i-1) does (3.48.0+): e = min(MinBackoff <<
	// (i-1), MaxBackoff), then e/2 plus a uniform draw in [0, e/2]. With
	// Redisson's 1 s and 2 s: 0.5–1 s before the first retry, 1–2 s after.
	EqualJitter bool
	// HonourNoResend leaves a request the lock code marked with
	// resend.Forbid unsent again after a timeout, as Redisson's noRetry
	// does for a single-server configuration's lock scripts (3.37.0+).
	HonourNoResend bool
	// WaitExtendsTimeout gives a script sent with its WAIT (EvalWait) the
	// client's timeout plus the WAIT's own, as Redisson's batch response
	// timeout is timeout + slavesSyncTimeout.
	WaitExtendsTimeout bool
}

// Retry policies of the client libraries locksim models.
var (
	// NoRetry gives up after one attempt.
	NoRetry = RetryPolicy{}
	// GoRedisRetry is go-redis v9's default: MaxRetries 3, backoff 8-512 ms.
	GoRedisRetry = RetryPolicy{MaxRetries: 3, MinBackoff: 8 * time.Millisecond, MaxBackoff: 512 * time.Millisecond}
	// RedissonRetry is Redisson's transport as of 4.7.0 (since 3.48.0):
	// retryAttempts 4, retryDelay EqualJitterDelay(1 s, 2 s), lock scripts
	// marked noRetry not resent, a batch with WAIT waiting timeout +
	// slavesSyncTimeout.
	RedissonRetry = RetryPolicy{MaxRetries: 4, MinBackoff: time.Second, MaxBackoff: 2 * time.Second,
		EqualJitter: true, HonourNoResend: true, WaitExtendsTimeout: true}
	// Redisson336Retry is Redisson's transport before 3.37.0: retryAttempts
	// 3, retryInterval 1.5 s, every request resent after a timeout, the
	// lock scripts too.
	Redisson336Retry = RetryPolicy{MaxRetries: 3, MinBackoff: 1500 * time.Millisecond, MaxBackoff: 1500 * time.Millisecond}
)

// Validate reports a policy Backoff cannot draw from: a negative field, or
// MaxBackoff below MinBackoff.
func (p RetryPolicy) Validate() error {
	if p.MaxRetries < 0 || p.MinBackoff < 0 || p.MaxBackoff < 0 {
		return fmt.Errorf("negative value in retry policy %+v", p)
	}
	if p.MaxBackoff < p.MinBackoff {
		return fmt.Errorf("retry max backoff %v below min backoff %v", p.MaxBackoff, p.MinBackoff)
	}
	return nil
}

// Backoff is the pause before retry (from 1), drawn from r: exactly one
// draw unless MaxBackoff is 0, so that a stream's later draws do not depend
// on the values. p must be valid (Validate).
func (p RetryPolicy) Backoff(retry int, r *rand.Rand) time.Duration {
	if p.MaxBackoff == 0 {
		return 0
	}
	hi := p.MinBackoff << min(retry-1, 30)
	if hi > p.MaxBackoff || hi < p.MinBackoff {
		hi = p.MaxBackoff
	}
	if p.EqualJitter {
		half := hi / 2
		return half + time.Duration(r.Int64N(int64(half)+1))
	}
	return p.MinBackoff + time.Duration(r.Int64N(int64(hi-p.MinBackoff)+1))
}

// Attempts is how many times a request may be sent: once when the lock
// code forbade resending it (noResend: resend.Forbidden of its context)
// and the policy honours that, else 1 + MaxRetries.
func (p RetryPolicy) Attempts(noResend bool) int {
	if p.HonourNoResend && noResend {
		return 1
	}
	return p.MaxRetries + 1
}
