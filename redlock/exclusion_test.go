package redlock_test

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// workload is how one client drives one of the locks: acquire returns a
// token naming the holding, release ends it.
type workload struct {
	acquire func() (token string, err error)
	release func() error
}

// loop runs w on c forever: acquire, hold for hold, release, think for a
// uniform draw in [think/2, 3think/2], recording op records "acquire" and
// "release" on lock "lk" as the checker expects.
func loop(c *sim.Client, w workload, hold, think time.Duration) {
	rt := c.Runtime()
	rng := c.Rand("think")
	c.Go("loop", func() {
		for {
			op := c.BeginOp("lk", "acquire")
			token, err := w.acquire()
			switch {
			case err == nil:
				op.End(history.OutcomeOK, token)
				_ = rt.Sleep(bg, hold)
				rel := c.BeginOp("lk", "release")
				if err := w.release(); err != nil {
					rel.End(history.OutcomeError, err.Error())
				} else {
					rel.End(history.OutcomeOK, "")
				}
			case errors.Is(err, lock.ErrNotAcquired) || errors.Is(err, lock.ErrWaitTimeout):
				op.End(history.OutcomeFail, "")
			default:
				op.End(history.OutcomeUnknown, err.Error())
			}
			_ = rt.Sleep(bg, think/2+time.Duration(rng.Int64N(int64(think)+1)))
		}
	})
}

// contention builds five healthy masters and three clients looping on one
// lock through algo ("spec", "redlock" or "multilock"), and runs it for dur.
func contention(t *testing.T, seed uint64, algo string, dur time.Duration) *rig {
	t.Helper()
	r := newRig(t, seed, 5)
	for _, name := range []string{"c1", "c2", "c3"} {
		c, err := r.AddClient(setup.ClientConfig{Name: name, Timeout: 100 * ms})
		must(t, err)
		var w workload
		switch algo {
		case "spec":
			s := r.spec(c, redlock.SpecOptions{TTL: 2 * time.Second})
			var lease *redlock.Lease
			w = workload{
				acquire: func() (string, error) {
					var err error
					lease, err = s.TryLock(bg)
					if err != nil {
						return "", err
					}
					return lease.Token, nil
				},
				release: func() error { _, err := s.Unlock(bg, lease); return err },
			}
		default:
			rl, _ := r.redisson(c, redlock.RedissonOptions{MultiLock: algo == "multilock"})
			n := 0
			w = workload{
				acquire: func() (string, error) {
					n++
					return name + "#" + strconv.Itoa(n), rl.TryLock(bg, "o", 200*ms, 0)
				},
				release: func() error { return rl.Unlock(bg, "o") },
			}
		}
		loop(c, w, 300*ms, 100*ms)
	}
	r.run(dur)
	return r
}

// TestMutualExclusionWithoutFaults: three clients contend for a minute on
// five healthy masters, through each algorithm; no two ever believe they hold
// the lock at once, and all of them get it, many times.
func TestMutualExclusionWithoutFaults(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, algo := range []string{"spec", "redlock", "multilock"} {
		t.Run(algo, func(t *testing.T) {
			r := contention(t, 7, algo, time.Minute)
			defer r.Close()
			hs := checker.Holdings(r.History().Records(), r.Now())
			if ov := checker.Overlaps(hs); len(ov) != 0 {
				t.Fatalf("%d overlaps without faults; first: %v", len(ov), ov[0])
			}
			holders := map[string]int{}
			for _, h := range hs {
				holders[h.Client]++
			}
			t.Logf("%d holdings: %v", len(hs), holders)
			if len(hs) < 60 || len(holders) != 3 {
				t.Fatalf("%d holdings by %v; the clients did not take turns", len(hs), holders)
			}
			for _, rec := range r.History().Records() {
				// Only the operations in flight when the run stopped are open.
				if rec.Kind == history.KindOp && rec.Outcome == history.OutcomeUnknown && rec.At() < r.Now()-5*time.Second {
					t.Fatalf("an operation failed with an unknown outcome without faults: %+v", rec)
				}
			}
		})
	}
}

// TestDeterministic: one seed, one history, byte for byte, for both
// algorithms (the retry delays, tokens and fork-joins included).
func TestDeterministic(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, algo := range []string{"spec", "redlock"} {
		var out [2]bytes.Buffer
		for i := range out {
			r := contention(t, 11, algo, 10*time.Second)
			must(t, r.History().WriteJSONL(&out[i]))
			r.Close()
		}
		if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
			t.Errorf("%s: two runs of seed 11 differ", algo)
		}
		if out[0].Len() < 10000 {
			t.Errorf("%s: history of %d bytes; the workload did not run", algo, out[0].Len())
		}
	}
}
