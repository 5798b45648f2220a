package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/setup"
)

// refusedSets are SETs whose options Redis refuses together (NX with XX,
// KEEPTTL with a TTL) and miniredis takes.
var refusedSets = [][]string{
	{"SET", "k", "v2", "NX", "XX"},
	{"SET", "k", "v2", "xx", "GET", "nx"},
	{"SET", "k", "v2", "KEEPTTL", "PX", "100"},
	{"SET", "k", "v2", "EX", "5", "keepttl"},
	{"SET", "k", "v2", "KEEPTTL", "PXAT", "99999999999999"},
}

// TestSetOptionsRedisRefuses: a SET that combines NX with XX, or KEEPTTL
// with a TTL, answers a syntax error and changes nothing, as Redis does,
// from a client and from a script, where miniredis took it (and a lock
// that sent one passed the simulation). Inside MULTI, where Redis answers
// the error only at EXEC, the simulation refuses it and aborts the EXEC.
// The controls: the same options alone are taken.
func TestSetOptionsRedisRefuses(t *testing.T) {
	w := New(1)
	defer w.Close()
	m, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	must(t, err)
	steps := []execStep{{m, []string{"SET", "k", "v1", "PX", "60000"}, "OK"}}
	for _, args := range refusedSets {
		steps = append(steps, execStep{m, args, "ERR syntax error"}, execStep{m, []string{"GET", "k"}, "v1"})
	}
	steps = append(steps,
		execStep{m, []string{"EVAL", "return redis.call('SET', KEYS[1], 'v2', 'NX', 'XX')", "1", "k"}, "syntax error"},
		execStep{m, []string{"GET", "k"}, "v1"},
		execStep{m, []string{"MULTI"}, "OK"},
		execStep{m, []string{"SET", "k", "v2", "NX", "XX"}, "inside MULTI is not simulated"},
		execStep{m, []string{"SET", "k", "v3"}, "QUEUED"},
		execStep{m, []string{"EXEC"}, "EXECABORT"},
		execStep{m, []string{"GET", "k"}, "v1"},
		// The controls.
		execStep{m, []string{"SET", "k", "v2", "XX", "GET", "PX", "60000"}, "v1"},
		execStep{m, []string{"SET", "k", "v3", "NX"}, "<nil>"},
		execStep{m, []string{"SET", "k", "v4", "KEEPTTL"}, "OK"},
		execStep{m, []string{"PTTL", "k"}, "59970"}, // the TTL set three steps (30 ms) before, kept
		execStep{m, []string{"GET", "k"}, "v4"},
	)
	runExecSteps(t, w, 10*time.Millisecond, steps)
}

// TestSetOptionsRefusedAsRedis holds refusedSets to a redis-server: each
// is refused with a syntax error there too.
func TestSetOptionsRefusedAsRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	rc := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, DisableIdentity: true})
	defer rc.Close()
	ctx := context.Background()
	must(t, rc.Set(ctx, "k", "v1", time.Minute).Err())
	for _, args := range refusedSets {
		a := make([]any, len(args))
		for i, s := range args {
			a[i] = s
		}
		if err := rc.Do(ctx, a...).Err(); err == nil || !strings.Contains(err.Error(), "syntax error") {
			t.Errorf("redis-server answered %q with %v, want a syntax error", args, err)
		}
	}
}
