package traffic_test

import (
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

var rwOps = []string{"acquire", "release", "acquire-read", "release-read", "expire"}

// rwHoldings splits a read-write lock's beliefs into write holdings (lock
// lk) and read holdings (lock lk+"#read"), by renaming the read records for
// checker.Holdings, which reads exclusive holds only. An "expire" ends
// whichever of the holder's holdings is open.
func rwHoldings(recs []history.Record, lk string, end time.Duration) (writes, reads []checker.Holding) {
	var rs []history.Record
	for _, r := range recs {
		if r.Kind != history.KindOp || r.Lock != lk {
			continue
		}
		switch r.Op {
		case "acquire-read", "release-read":
			r.Op = r.Op[:len(r.Op)-len("-read")]
			r.Lock = lk + "#read"
		case "expire":
			rd := r
			rd.Lock = lk + "#read"
			rs = append(rs, rd)
		}
		rs = append(rs, r)
	}
	for _, h := range checker.Holdings(rs, end) {
		if h.Lock == lk {
			writes = append(writes, h)
		} else {
			reads = append(reads, h)
		}
	}
	return writes, reads
}

func intersect(a, b checker.Holding) bool { return max(a.From, b.From) < min(a.To, b.To) }

// TestReadWriteNoFaults: readers share, writers exclude everyone, every
// client holds, records follow the conventions.
func TestReadWriteNoFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  traffic.ReadWriteConfig
	}{
		{"watchdog", traffic.ReadWriteConfig{ReadRatio: 0.7,
			OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: 300 * ms}}},
		{"lease", traffic.ReadWriteConfig{ReadRatio: 0.5,
			OwnerConfig: traffic.OwnerConfig{Owners: []string{"a"}, RandomOwners: true, Wait: 300 * ms, Lease: 2 * sec}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 9, "m1")
			cfg := tc.cfg
			cfg.Group, cfg.Lock, cfg.Hold, cfg.Think = "m1", "rw", 200*ms, 100*ms
			e.clientsWith(3, func(c *sim.Client) error { return traffic.ReadWrite(c, cfg) })
			e.run(minute)
			recs := e.records()
			checkConventions(t, recs, conventions{lock: "rw", owners: cfg.Owners, ops: rwOps, noExpire: true, noUnknown: true, end: minute})
			checkBalanced(t, recs, "acquire", "release")
			checkBalanced(t, recs, "acquire-read", "release-read")
			writes, reads := rwHoldings(recs, "rw", minute)
			shared := 0
			for i, w := range writes {
				for _, x := range writes[i+1:] {
					if x.Client != w.Client && intersect(w, x) {
						t.Errorf("writers overlap: %+v and %+v", w, x)
					}
				}
				for _, r := range reads {
					if r.Client != w.Client && intersect(w, r) {
						t.Errorf("writer and reader overlap: %+v and %+v", w, r)
					}
				}
			}
			for i, r := range reads {
				for _, x := range reads[i+1:] {
					if x.Client != r.Client && intersect(r, x) {
						shared++
					}
				}
			}
			if shared == 0 {
				t.Error("readers never shared the lock")
			}
			for _, c := range e.clients {
				if count(recs, "acquire", c.Name(), history.OutcomeOK) == 0 || count(recs, "acquire-read", c.Name(), history.OutcomeOK) == 0 {
					t.Errorf("client %s did not hold both halves", c.Name())
				}
			}
			if n := count(recs, "release", "", history.OutcomeFail) + count(recs, "release-read", "", history.OutcomeFail); n > 0 {
				t.Errorf("%d releases refused without faults", n)
			}
			if t.Failed() {
				t.Log(e.dump())
			}
		})
	}
}

// TestReadWritePause: a holder paused past its lease records "expire"
// when it wakes, and a writer gets in while it still believed it held.
func TestReadWritePause(t *testing.T) {
	e := newEnv(t, 4, "m1")
	cfg := traffic.ReadWriteConfig{Group: "m1", Lock: "rw", ReadRatio: 0.3,
		OwnerConfig: traffic.OwnerConfig{Owners: []string{"a"}, Wait: sec, Lease: 2 * sec},
		Holding:     traffic.Holding{Hold: 500 * ms, Think: 100 * ms}}
	e.clientsWith(2, func(c *sim.Client) error { return traffic.ReadWrite(c, cfg) })
	// Pause whoever holds either half at 3 s.
	e.run(3 * sec)
	var paused string
	writes, reads := rwHoldings(e.records(), "rw", forever)
	for _, h := range append(writes, reads...) {
		if h.To == forever {
			paused = h.Client[:len("c1")]
		}
	}
	if paused == "" {
		t.Fatal("nobody holds the lock at 3s")
	}
	c, err := e.w.Client(paused)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Pause(6 * sec); err != nil {
		t.Fatal(err)
	}
	e.run(30 * sec)
	recs := e.records()
	checkConventions(t, recs, conventions{lock: "rw", owners: cfg.Owners, ops: rwOps})
	if n := count(recs, "expire", paused, history.OutcomeOK); n != 1 {
		t.Errorf("%d expire records for %s, want 1", n, paused)
	}
	writes, reads = rwHoldings(recs, "rw", 30*sec)
	conflict := false
	for _, w := range writes {
		for _, x := range append(writes, reads...) {
			if x.Client != w.Client && intersect(w, x) {
				conflict = true
			}
		}
	}
	if !conflict {
		t.Errorf("no writer overlapped the paused holder %s", paused)
	}
	if t.Failed() {
		t.Log(e.dump())
	}
}
