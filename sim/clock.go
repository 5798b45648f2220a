package sim

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/locksim/locksim/setup"
)

// Clock maps world time to one machine's local time. It runs at a rate of
// 1 + DriftPPM/1e6 and can jump. Drift is stored as integer parts per
// million, and the mapping uses 128-bit integer arithmetic, so a clock reads
// the same on every platform (floating point could be fused differently).
//
// A machine has two readings: Local (wall clock, jumps included), which Redis
// uses for key expiry, and Mono (monotonic, drift only), which a client's
// Now, sleeps and timers follow (Go measures elapsed time monotonically).
type Clock struct {
	ppm         int64         // drift, parts per million
	anchorWorld time.Duration // world time of the last re-anchoring
	anchorMono  time.Duration // monotonic reading at anchorWorld
	jumps       time.Duration // sum of all jumps so far
}

// NewClock returns a clock with the given drift. It reads zero at world zero.
func NewClock(ppm int64) (Clock, error) {
	if err := checkPPM(ppm); err != nil {
		return Clock{}, err
	}
	return Clock{ppm: ppm}, nil
}

// checkPPM refuses a drift beyond setup.MaxDriftPPM: with the clock's
// rate at least half the true one, WorldSpan of a span below maxSpan is
// at most twice it, far from overflowing.
func checkPPM(ppm int64) error {
	if ppm < -setup.MaxDriftPPM || ppm > setup.MaxDriftPPM {
		return fmt.Errorf("sim: clock drift %d ppm out of range [%d, %d]", ppm, -setup.MaxDriftPPM, setup.MaxDriftPPM)
	}
	return nil
}

// mulDiv returns a*num/den for a >= 0, num > 0, den > 0, rounding down,
// without overflow for any a a run can reach.
func mulDiv(a, num, den int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(num))
	q, _ := bits.Div64(hi, lo, uint64(den))
	return int64(q)
}

// Mono is the monotonic reading at world time t (t >= the last anchor).
func (c *Clock) Mono(t time.Duration) time.Duration {
	return c.anchorMono + time.Duration(mulDiv(int64(t-c.anchorWorld), 1_000_000+c.ppm, 1_000_000))
}

// Local is the wall-clock reading at world time t: monotonic plus jumps.
func (c *Clock) Local(t time.Duration) time.Duration { return c.Mono(t) + c.jumps }

// WorldSpan is how much world time passes while this clock's monotonic
// reading advances by d (rounded up, so a timer never fires early). A
// span of 2^60 ns (36 years) or more, which no run reaches (a year at
// most) but a key's TTL may ask for (a script's SET ... PX of a century),
// is spanForever: converted, at half the true rate it would overflow.
func (c *Clock) WorldSpan(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	if d >= maxSpan {
		return spanForever
	}
	den := 1_000_000 + c.ppm
	q := mulDiv(int64(d), 1_000_000, den)
	if mulDiv(q, den, 1_000_000) < int64(d) {
		q++
	}
	return time.Duration(q)
}

// maxSpan and spanForever: WorldSpan's longest span it converts, and what
// it answers for a longer one: above any converted span (at most 2^61 at
// half the true rate), and far from overflowing when added to any time
// of a run.
const (
	maxSpan     = time.Duration(1) << 60
	spanForever = time.Duration(1) << 62
)

// SetDrift changes the rate from world time t on.
func (c *Clock) SetDrift(t time.Duration, ppm int64) error {
	if err := checkPPM(ppm); err != nil {
		return err
	}
	c.anchorMono = c.Mono(t)
	c.anchorWorld = t
	c.ppm = ppm
	return nil
}

// Jump moves the wall-clock reading by d (forward or backward) at once.
func (c *Clock) Jump(d time.Duration) { c.jumps += d }

// DriftPPM is the current drift.
func (c *Clock) DriftPPM() int64 { return c.ppm }
