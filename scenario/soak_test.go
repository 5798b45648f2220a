package scenario_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// soakRSSBound is the peak resident memory (VmHWM) a long run may reach,
// run and checked in a process of its own: about the heaviest run the
// limits accept (1,000 clients for 70 virtual seconds, 1.4 million
// records, just under MaxRecords) and a long one (3 clients for 3 virtual
// hours, 1.3 million). docs/limits.md states the measured figures.
const soakRSSBound = 5 << 29 // 2.5 GiB

// soakRuns are the soak's long runs: name, clients, virtual duration.
var soakRuns = []struct {
	name string
	n    int
	d    time.Duration
}{{"long", 3, 3 * time.Hour}, {"wide", 1000, 70 * time.Second}}

// TestSoakMemory (make soak: LOCKSIM_SOAK=1) runs each of soakRuns in a
// child process (this test binary, TestSoakMemoryChild) that runs and
// checks it as simulate run does and reports its peak RSS (VmHWM, from
// /proc/self/status); each must be as expected (ok) and stay under
// soakRSSBound.
func TestSoakMemory(t *testing.T) {
	if os.Getenv("LOCKSIM_SOAK") == "" {
		t.Skip("soak only (LOCKSIM_SOAK=1, make soak)")
	}
	for _, r := range soakRuns {
		start := time.Now()
		c := runSoakChild(t, "^TestSoakMemoryChild$", "LOCKSIM_SOAK_CHILD="+r.name)
		t.Logf("%s: %d clients, %v virtual: peak RSS %d MiB, verdict %s, %v", r.name, r.n, r.d, c.hwm>>10, c.verdict, time.Since(start).Round(time.Second))
		if !strings.HasPrefix(c.verdict, "ok") {
			t.Errorf("%s: verdict %s", r.name, c.verdict)
		}
		if c.hwm<<10 > soakRSSBound {
			t.Errorf("%s: peak RSS %d MiB above the bound of %d MiB", r.name, c.hwm>>10, soakRSSBound>>20)
		}
	}
}

// soakChild is what a soak child process reported: its peak RSS (VmHWM,
// kB), its verdict line and its verdict's notes.
type soakChild struct {
	hwm     int64
	verdict string
	notes   []string
}

// runSoakChild runs this test binary's test run (a -test.run pattern)
// in a child process with env added, and reads its report (reportSoak);
// a child that fails, or reports nothing, fails t.
func runSoakChild(t *testing.T, run, env string) soakChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", env, err, out)
	}
	c := soakChild{hwm: -1}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "soak: VmHWM kB "); ok {
			c.hwm, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(line, "soak: verdict "); ok {
			c.verdict = v
		}
		if v, ok := strings.CutPrefix(line, "soak: note "); ok {
			c.notes = append(c.notes, v)
		}
	}
	if c.hwm < 0 || c.verdict == "" {
		t.Fatalf("%s: no report from the child:\n%s", env, out)
	}
	return c
}

// runYAML parses src (as file) and runs it at its seed; an error fails t.
func runYAML(t *testing.T, file, src string) simrun.Result {
	t.Helper()
	s, err := scenario.Parse(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	res, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// reportSoak is a soak child's report: the run's records, verdict and
// notes, and the process's peak RSS (VmHWM, from /proc/self/status).
func reportSoak(t *testing.T, res simrun.Result) {
	fmt.Printf("soak: records %d entries %d\n", res.History.Len(), res.History.Entries())
	fmt.Printf("soak: verdict %s match=%v\n", res.Verdict.Status, res.Match)
	for _, n := range res.Verdict.Notes {
		fmt.Printf("soak: note %s\n", n)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Printf("soak: VmHWM kB %s\n", strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
}

// TestSoakMemoryChild is TestSoakMemory's child: it runs the soak run
// LOCKSIM_SOAK_CHILD names and prints its verdict and peak RSS.
func TestSoakMemoryChild(t *testing.T) {
	name := os.Getenv("LOCKSIM_SOAK_CHILD")
	if name == "" {
		t.Skip("child of TestSoakMemory")
	}
	for _, r := range soakRuns {
		if r.name != name {
			continue
		}
		reportSoak(t, runYAML(t, "soak.yaml", soakYAML(r.n, r.d)))
		return
	}
	t.Fatalf("no soak run %q", name)
}

// soakYAML is n clients on a simple lock for d, retrying every 100 ms.
func soakYAML(n int, d time.Duration) string {
	return fmt.Sprintf(`name: soak
seed: 1
duration: %v
topology:
  nodes:
    - name: m1
      replicas:
        - {name: r1, lag: 10ms}
clients:
  - {count: %d, retry: go-redis, timeout: 500ms}
algorithm:
  kind: simple
  ttl: 10s
  hold: 100ms
  think: 100ms
expect: ok
`, d, n)
}
