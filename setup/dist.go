package setup

// Distributions of durations: latencies, lags, extra delays, and the
// lengths of drawn faults.

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Dist is a distribution of durations: latencies, lags, extra delays.
// The zero Dist is always 0. A valid Dist (Validate) holds no duration
// above MaxDuration, so that no sample overflows.
type Dist struct {
	// Kind is "fixed" (always Min), "uniform" (between Min and Max), or
	// "exp" (Min plus an exponential with mean Mean, capped at Max when Max
	// is set). Empty means fixed.
	Kind string
	Min  time.Duration
	Max  time.Duration
	Mean time.Duration
}

// Fixed is always d.
func Fixed(d time.Duration) Dist { return Dist{Kind: "fixed", Min: d} }

// Uniform is uniform in [min, max].
func Uniform(min, max time.Duration) Dist { return Dist{Kind: "uniform", Min: min, Max: max} }

// Exp is min plus an exponential tail of mean mean, capped at max (0: no cap).
func Exp(min, mean, max time.Duration) Dist { return Dist{Kind: "exp", Min: min, Mean: mean, Max: max} }

// MaxDuration bounds every duration a Dist may hold: a year is longer than
// any run, and keeps every sample far from overflowing.
const MaxDuration = 365 * 24 * time.Hour

// Validate reports a malformed distribution.
func (d Dist) Validate() error {
	if d.Min < 0 || d.Max < 0 || d.Mean < 0 {
		return fmt.Errorf("negative duration in %v", d)
	}
	if d.Min > MaxDuration || d.Max > MaxDuration || d.Mean > MaxDuration {
		return fmt.Errorf("duration above %v in %v", MaxDuration, d)
	}
	switch d.Kind {
	case "", "fixed":
	case "uniform":
		if d.Max < d.Min {
			return fmt.Errorf("uniform max %v below min %v", d.Max, d.Min)
		}
	case "exp":
		if d.Max != 0 && d.Max < d.Min {
			return fmt.Errorf("exp max %v below min %v", d.Max, d.Min)
		}
	default:
		return fmt.Errorf("unknown distribution kind %q (want fixed, uniform or exp)", d.Kind)
	}
	return nil
}

// Sample draws one duration. It always draws exactly one number from r for
// a non-fixed kind, so a stream's later draws do not depend on the values.
func (d Dist) Sample(r *rand.Rand) time.Duration {
	switch d.Kind {
	case "uniform":
		return d.Min + time.Duration(r.Int64N(int64(d.Max-d.Min)+1))
	case "exp":
		// ExpFloat64 is below 50 in practice; the cap keeps even the
		// theoretical tail (and Mean up to MaxDuration) inside int64.
		v := d.Min + time.Duration(min(r.ExpFloat64(), 200)*float64(d.Mean))
		if d.Max != 0 && v > d.Max {
			v = d.Max
		}
		return v
	}
	return d.Min
}

func (d Dist) String() string {
	switch d.Kind {
	case "uniform":
		return fmt.Sprintf("uniform(%v,%v)", d.Min, d.Max)
	case "exp":
		return fmt.Sprintf("exp(min=%v,mean=%v,max=%v)", d.Min, d.Mean, d.Max)
	}
	return d.Min.String()
}
