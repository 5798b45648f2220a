package locktest

import (
	"testing"
	"time"
)

// TestSetupExprIsGo: a replay hint names a Setup as Go source that can be
// pasted back (its fields that are not zero, durations in time's units),
// not "locktest.Setup{...}".
func TestSetupExprIsGo(t *testing.T) {
	for _, c := range []struct {
		s    Setup
		want string
	}{
		{Setup{}, "locktest.Setup{}"},
		{Setup{Seed: 1 << 63}, "locktest.Setup{Seed: 9223372036854775808}"},
		{Setup{Name: "f0-in-go", Seed: 3, Replicas: 1, Lag: 1500 * time.Millisecond, Lease: 10 * time.Second, Hold: time.Minute,
			Timeout: 2500 * time.Microsecond, Think: 7, Retry: "none", Faults: []string{`{kind: failover, at: 5s, group: "m1"}`}},
			`locktest.Setup{Name: "f0-in-go", Seed: 3, Replicas: 1, Lag: 1500 * time.Millisecond, Timeout: 2500 * time.Microsecond, Retry: "none", ` +
				`Lease: 10 * time.Second, Hold: time.Minute, Think: time.Duration(7), Faults: []string{"{kind: failover, at: 5s, group: \"m1\"}"}}`},
	} {
		if got := c.s.expr(); got != c.want {
			t.Errorf("expr:\n got %s\nwant %s", got, c.want)
		}
	}
}
