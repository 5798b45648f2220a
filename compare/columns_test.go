package compare_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/locksim/locksim/compare"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/setup"
)

// TestFairAndSpinColumns: the FairLock and SpinLock columns run each lock
// as the RedissonLock single-server column runs RLock (Redisson's
// transport and 3 s timeout, the watchdog with the matrix's lease as its
// timeout, tryLock's 2 s wait, the single-server config) and leave every
// option of their own at Redisson 4.7.0's default: fairLockWaitTimeout
// (0 here: lock applies its 5 min), the 4.7.0 handling of a try without a
// reply (timeout_leaves_entry false), reentrant, and the default back-off.
// A column that set any of them would fail here.
func TestFairAndSpinColumns(t *testing.T) {
	byName := func(name string) compare.Algorithm {
		t.Helper()
		as := pick(compare.Algorithms, func(a compare.Algorithm) string { return a.Name }, name)
		if len(as) != 1 {
			t.Fatalf("no column %s", name)
		}
		return as[0]
	}
	none := pick(compare.Modes, func(m compare.Mode) string { return m.Name }, "none")[0]
	parse := func(a compare.Algorithm) *scenario.Scenario {
		t.Helper()
		if !a.Watchdog || !a.Redisson || a.RedLock {
			t.Errorf("%s: watchdog %v, Redisson transport %v, RedLock %v; want RedissonLock single-server's", a.Name, a.Watchdog, a.Redisson, a.RedLock)
		}
		s, err := scenario.Parse("cell.yaml", []byte(compare.ScenarioYAML(none, none.Ref, a)))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.Clients {
			if !reflect.DeepEqual(c.Config.Retry, setup.RedissonRetry) || c.Config.Timeout != compare.RedissonTimeout {
				t.Errorf("%s: client %+v, want Redisson's transport with its 3 s timeout", a.Name, c.Config)
			}
		}
		return s
	}
	fair, ok := parse(byName("fair-single")).Algorithm.Workload.(*scenario.Fair)
	if !ok {
		t.Fatalf("fair-single runs %T, want the fair kind", fair)
	}
	checkRedissonDefaults(t, "fair-single", fair.Options, fair.Wait, fair.Lease)
	if fair.NonReentrant || fair.Options.FairLockWaitTimeout != 0 || fair.Options.FairLockTimeoutLeavesEntry {
		t.Errorf("fair-single: non-reentrant %v, fair wait timeout %v, timeout leaves entry %v; want Redisson 4.7.0's defaults",
			fair.NonReentrant, fair.Options.FairLockWaitTimeout, fair.Options.FairLockTimeoutLeavesEntry)
	}
	spin, ok := parse(byName("spin-single")).Algorithm.Workload.(*scenario.Spin)
	if !ok {
		t.Fatalf("spin-single runs %T, want the spin kind", spin)
	}
	checkRedissonDefaults(t, "spin-single", spin.Options, spin.Wait, spin.Lease)
	if spin.BackOff != (lock.BackOff{}) {
		t.Errorf("spin-single: back-off %+v, want Redisson's default (the zero BackOff)", spin.BackOff)
	}
	// The control: RLock's single-server column, which the two copy.
	rl, ok := parse(byName("redisson-single")).Algorithm.Workload.(*scenario.Reentrant)
	if !ok {
		t.Fatalf("redisson-single runs %T", rl)
	}
	checkRedissonDefaults(t, "redisson-single", rl.Options, rl.Wait, rl.Lease)
}

// checkRedissonDefaults checks a Redisson column's lock client: the
// single-server config, the watchdog (lease 0) with the matrix's lease as
// its timeout, and a 2 s wait.
func checkRedissonDefaults(t *testing.T, name string, opts lock.Options, wait, lease time.Duration) {
	t.Helper()
	if opts.Deployment != lock.SingleServer || opts.WatchdogTimeout != compare.Lease || lease != 0 || wait != 2*time.Second {
		t.Errorf("%s: deployment %v, watchdog timeout %v, lease %v, wait %v; want single-server, the watchdog at %v, wait 2s",
			name, opts.Deployment, opts.WatchdogTimeout, lease, wait, compare.Lease)
	}
}

// TestFairAndSpinColumnsReport: a report with the FairLock and SpinLock
// columns says in its method how they run; one without them (the
// control) does not mention them. Their cells' scenario files are written
// beside the report and replay with the same counts.
func TestFairAndSpinColumnsReport(t *testing.T) {
	write := func(names ...string) []byte {
		t.Helper()
		opts := compare.Options{Seeds: 2, TableOnly: true,
			Modes:      pick(compare.Modes, func(m compare.Mode) string { return m.Name }, "none"),
			Algorithms: pick(compare.Algorithms, func(a compare.Algorithm) string { return a.Name }, names...)}
		dir := filepath.Join(t.TempDir(), "reports")
		opts.ScenarioDir = filepath.Join(dir, "scenarios")
		res, err := compare.Run(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Table[0] {
			if c.Runs != 2 || c.Unsafe != 0 {
				t.Errorf("no faults, %s: %d unsafe of %d runs", c.Algorithm.Name, c.Unsafe, c.Runs)
			}
		}
		if err := res.Write(t.Context(), dir, "simulate compare (test)"); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			f := filepath.Join(opts.ScenarioDir, "none--"+n+".yaml")
			s, err := scenario.Load(f)
			if err != nil {
				t.Fatalf("the report's scenario file of %s: %v", n, err)
			}
			if s.Algorithm.Kind != map[string]string{"fair-single": "fair", "spin-single": "spin", "simple": "simple"}[n] {
				t.Errorf("%s: kind %s", f, s.Algorithm.Kind)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	with := write("fair-single", "spin-single")
	for _, want := range []string{"| FairLock, single-server config | SpinLock, single-server config |",
		"FairLock (`RedissonFairLock`) serves its waiters first come, first served", "`fairLockWaitTimeout`, 5 min",
		"SpinLock (`RedissonSpinLock`) subscribes to nothing", "both with RLock's watchdog and transport, in the single-server config."} {
		if !bytes.Contains(with, []byte(want)) {
			t.Errorf("the report with both columns lacks %q", want)
		}
	}
	if one := write("spin-single"); bytes.Contains(one, []byte("RedissonFairLock")) || bytes.Contains(one, []byte("both with")) ||
		!bytes.Contains(one, []byte("(1 ms, doubling with jitter, up to 128 ms); with RLock's watchdog")) {
		t.Errorf("the report with the SpinLock column alone misdescribes the columns")
	}
	if without := write("simple"); bytes.Contains(without, []byte("RedissonFairLock")) || bytes.Contains(without, []byte("RedissonSpinLock")) {
		t.Errorf("a report without the columns describes them")
	}
}

// TestFairnessSection: a report with the FairLock column under clock jumps
// has a fairness section whose row names the fairness findings and their
// shortest counterexample, and those findings are not counted as
// availability findings; a report without a fair column (the control)
// has no fairness section.
func TestFairnessSection(t *testing.T) {
	write := func(names ...string) ([]byte, *compare.Results) {
		t.Helper()
		opts := compare.Options{Seeds: 6, TableOnly: true,
			Modes:      pick(compare.Modes, func(m compare.Mode) string { return m.Name }, "clock-jump"),
			Algorithms: pick(compare.Algorithms, func(a compare.Algorithm) string { return a.Name }, names...)}
		dir := filepath.Join(t.TempDir(), "reports")
		opts.ScenarioDir = filepath.Join(dir, "scenarios")
		res, err := compare.Run(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Write(t.Context(), dir, "simulate compare (test)"); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		return b, res
	}
	with, res := write("fair-single")
	c := res.Table[0][0]
	if c.Unfair() == 0 || c.ShortestFairness == nil || len(c.FairnessList()) == 0 {
		t.Fatalf("fair-single under clock jumps: %d unfair runs, counterexample %v, kinds %v; want findings", c.Unfair(), c.ShortestFairness, c.FairnessList())
	}
	for _, k := range c.KindList(false) {
		if bytes.Contains([]byte(k), []byte("evicted")) || bytes.Contains([]byte(k), []byte("out-of-order")) || bytes.Contains([]byte(k), []byte("stuck")) {
			t.Errorf("availability kinds %v count a fairness kind", c.KindList(false))
		}
	}
	for _, want := range []string{"## Fairness: the fair lock's order of service", "| FairLock, single-server config | ",
		"-fairness.png", "shortest fairness counterexample"} {
		if !bytes.Contains(with, []byte(want)) {
			t.Errorf("the report with the fair column lacks %q", want)
		}
	}
	if without, _ := write("redisson-single"); bytes.Contains(without, []byte("## Fairness")) {
		t.Errorf("a report without a fair column has a fairness section")
	}
}
