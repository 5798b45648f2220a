package lock_test

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
)

// errBroken is faultConn's transport error: the reply never came.
var errBroken = errors.New("read tcp: connection reset by peer")

// rwUnlocks are the read-write lock's two unlock scripts.
var rwUnlocks = []*lock.Script{scripts.RWReadUnlock, scripts.RWWriteUnlock}

// faultConn is a Conn whose chosen scripts misbehave as a broken or
// retrying connection makes them:
//   - fail: the script is not sent and Eval returns errBroken, as if the
//     connection broke (the outcome is unknown to the lock);
//   - twice: the script is sent twice and the second reply returned, as an
//     unlock whose first reply was lost and that go-redis sent again;
//   - keepLatches: the DEL of an unlock latch, which the lock sends once an
//     unlock's reply has come, is dropped (answered 0), so that a test can
//     look at the latches afterwards.
//
// Every other call goes to Conn unchanged.
type faultConn struct {
	lock.Conn
	fail, twice []*lock.Script
	keepLatches bool
}

func (f faultConn) Eval(ctx context.Context, s *lock.Script, keys []string, args ...any) (any, error) {
	if slices.Contains(f.fail, s) {
		return nil, errBroken
	}
	if slices.Contains(f.twice, s) {
		if _, err := f.Conn.Eval(ctx, s, keys, args...); err != nil {
			return nil, err
		}
	}
	return f.Conn.Eval(ctx, s, keys, args...)
}

func (f faultConn) Do(ctx context.Context, args ...any) (any, error) {
	if f.keepLatches && len(args) == 2 && args[0] == "DEL" {
		if k, _ := args[1].(string); strings.HasPrefix(k, "redisson_unlock_latch:") {
			return int64(0), nil
		}
	}
	return f.Conn.Do(ctx, args...)
}
