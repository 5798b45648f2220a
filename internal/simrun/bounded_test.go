package simrun

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/race"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
)

// TestRunBoundedSameHistory: a run under a history limit it reaches
// exactly (the limit its own weight, history.Weight) records the history
// one Run without a limit does, byte for byte, and with the limit one
// less it stops with the limit's error, for every committed scenario
// (faults scripted and drawn, triggers, failovers): the limit costs no
// determinism, and it is where the weight says. Under the race detector
// it runs one scenario in race.Stride (make corpus runs them all).
func TestRunBoundedSameHistory(t *testing.T) {
	all, err := scenario.LoadFS(scenarios.FS, "scenarios", "*.yaml", 1)
	if err != nil {
		t.Fatal(err)
	}
	restoreRecordLimit(t)
	run := func(s *scenario.Scenario, bounded bool) ([]byte, int, error) {
		w, err := Build(s, s.Seed)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		sched, err := Schedule(s, w)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sched {
			if err := f.Apply(w); err != nil {
				t.Fatal(err)
			}
		}
		if bounded {
			err = runBounded(s, w, s.Seed)
		} else {
			err = w.Run(s.Duration)
		}
		var b bytes.Buffer
		if err := w.History().WriteJSONL(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes(), history.Weight(w.History().Len(), w.History().Entries()), err
	}
	for i, s := range all {
		if race.Skip(i) {
			continue // make corpus runs it without the race detector
		}
		free, weight, err := run(s, false)
		if err != nil {
			t.Fatal(err)
		}
		maxRecords = weight
		bounded, _, err := run(s, true)
		if err != nil {
			t.Errorf("%s: limit %d, its weight: %v", s.Name, weight, err)
		} else if !bytes.Equal(free, bounded) {
			t.Errorf("%s: the history run under its limit differs from the one run without", s.Name)
		}
		maxRecords = weight - 1
		var se *scenario.Error
		if _, _, err := run(s, true); !errors.As(err, &se) || se.Field != "duration" {
			t.Errorf("%s: limit %d, one under its weight: %v", s.Name, weight-1, err)
		}
	}
	if len(all) < 80 {
		t.Fatalf("only %d scenarios", len(all))
	}
}

const limitsYAML = `name: limits
seed: 1
duration: 10m
topology:
  nodes:
    - name: m1
clients:
  - {count: 20, retry: go-redis, timeout: 500ms}
algorithm:
  kind: simple
  ttl: 10s
  hold: 100ms
  think: 100ms
expect: ok
`

// TestRecordLimit: a run that records more than the limit (lowered here to
// 20,000 records) stops with an *Error naming the file, the duration's
// line (3) and field, the limit and the virtual time reached; the same run
// under the limit (one virtual second) is as expected.
func TestRecordLimit(t *testing.T) {
	restoreRecordLimit(t)
	maxRecords = 20_000
	s, err := scenario.Parse("limits.yaml", []byte(limitsYAML))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(s, 0)
	var e *scenario.Error
	if !errors.As(err, &e) || e.File != "limits.yaml" || e.Line != 3 || e.Field != "duration" ||
		!strings.Contains(e.Msg, "above the limit of 20000") || !strings.Contains(e.Msg, "of its 10m0s (20 clients)") {
		t.Fatalf("error %v, want limits.yaml:3 duration above the limit", err)
	}
	short, err := scenario.Parse("limits.yaml", []byte(strings.Replace(limitsYAML, "duration: 10m", "duration: 1s", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := Run(short, 0); err != nil || !r.Match {
		t.Fatalf("the short run: %v, match %v (%s)", err, r.Match, r.Why)
	}
}

// TestFaultEventLimit: rates that draw more fault events than
// MaxFaultEvents over the duration are refused before anything is built,
// naming the rates' line and field; a tenth of the rate is accepted.
func TestFaultEventLimit(t *testing.T) {
	bad := strings.Replace(limitsYAML, "duration: 10m", "duration: 8760h", 1) + "rates:\n  pause: 1\n"
	s, err := scenario.Parse("limits.yaml", []byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	var e *scenario.Error
	if err := s.CheckLimits(); !errors.As(err, &e) || e.Line != 16 || e.Field != "rates" || !strings.Contains(e.Msg, "above the limit of 200000") {
		t.Fatalf("error %v, want limits.yaml:16 rates above the limit", err)
	}
	if _, err := Run(s, 0); !errors.As(err, &e) || e.Field != "rates" {
		t.Fatalf("Run: error %v, want the rates' limit", err)
	}
	ok, err := scenario.Parse("limits.yaml", []byte(strings.Replace(bad, "duration: 8760h", "duration: 100h", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := ok.CheckLimits(); err != nil {
		t.Fatalf("20 clients pausing once a minute for 100 h: %v", err)
	}
}

const queueYAML = `name: queue
seed: 1
duration: 20s
topology:
  nodes:
    - name: m1
clients:
  - {count: 100, retry: go-redis, timeout: 500ms}
algorithm:
  kind: fair
  wait: 5s
  hold: 1s
  think: 100ms
expect: any
`

// TestEntryWeightLimit: a fair lock's queue of 100 waiters is copied
// whole into each of its truth records, so the run's history weighs more
// than its records (history.Weight). With the limit between the two, the
// run stops where its weight passes the limit, before its end, with an
// *Error naming the file, the duration's line (3), the members its
// records hold and their weight; with the limit at the weight (the
// control) it is as expected. With the members left out of the bound the
// run would pass under the lower limit too.
func TestEntryWeightLimit(t *testing.T) {
	s, err := scenario.Parse("queue.yaml", []byte(queueYAML))
	if err != nil {
		t.Fatal(err)
	}
	n, weight := fullWeight(t, s)
	if weight < n+1000 {
		t.Fatalf("%d records weigh %d: want the members to weigh at least 1,000 records", n, weight)
	}
	se := refusedBetween(t, s, n, weight)
	if se.File != "queue.yaml" || se.Line != 3 {
		t.Fatalf("error %v, want queue.yaml:3 duration", se)
	}
	var got, members, weighs int
	var at string
	if _, err := fmt.Sscanf(se.Msg, "the run recorded %d history records holding %d members of hashes, lists and sorted sets", &got, &members); err != nil {
		t.Fatalf("%v: %s", err, se.Msg)
	}
	_, rest, _ := strings.Cut(se.Msg, "which weigh as ")
	if _, err := fmt.Sscanf(rest, "%d records (16 members to a record) by %s of its 20s", &weighs, &at); err != nil {
		t.Fatalf("%v: %s", err, se.Msg)
	}
	if got >= n || weighs != history.Weight(got, members) || weighs <= maxRecords || at == "20s" ||
		!strings.Contains(se.Msg, fmt.Sprintf("above the limit of %d", maxRecords)) {
		t.Fatalf("limit %d: %s: want fewer records than %d, weighing past the limit before 20s", maxRecords, se.Msg, n)
	}
}

// TestRecordsInOneInstant: a client that never lets virtual time move
// (no latency, no hold, no think) records without end at time zero; the
// run stops when its history passes the limit, at that instant, rather
// than holding records until the memory runs out.
func TestRecordsInOneInstant(t *testing.T) {
	restoreRecordLimit(t)
	maxRecords = 5_000
	s, err := scenario.Parse("instant.yaml", []byte(`name: instant
duration: 10s
topology:
  nodes: [{name: m1}]
clients:
  - {name: c1, latency: 0s}
algorithm: {kind: simple, ttl: 1s, hold: 0s, think: 0s}
expect: any
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(s, 0)
	var se *scenario.Error
	if !errors.As(err, &se) || se.Line != 2 || !strings.Contains(se.Msg, "the run recorded 5001 history records by 0s of its 10s") {
		t.Fatalf("error %v, want instant.yaml:2 duration: 5001 records by 0s", err)
	}
}

// TestValueWeightLimit: a lock script that appends 4 KB to a key at each
// acquire makes each truth record of that key copy a longer string, so the
// history weighs more than its records and its collections
// (history.Record.Entries: 64 bytes of a value count as a member). With
// the limit between the records and that weight the run is refused; at
// the weight (the control) it is as expected.
func TestValueWeightLimit(t *testing.T) {
	s := loadScript(t, "grow", "redis.call('append', 'grow', string.rep('x', 4096))\nif redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', 1000) then return 1 end\nreturn 0\n", `name: grow
duration: 3s
topology:
  nodes: [{name: m1}]
clients: [{count: 3}]
algorithm: {kind: script, acquire: acquire.lua, release: release.lua, model: simple, owner_in: value, lease: 1s, hold: 50ms, think: 10ms}
expect: any
`)
	n, weight := fullWeight(t, s)
	if weight < 2*n {
		t.Fatalf("%d records weigh %d: want the appended value to weigh more than the records", n, weight)
	}
	if se := refusedBetween(t, s, n, weight); !strings.Contains(se.Msg, "a string a script appends to") {
		t.Fatalf("%v: want the appended string named", se)
	}
}

// restoreRecordLimit puts maxRecords back as it was when the test ends:
// the test may lower it.
func restoreRecordLimit(t *testing.T) {
	saved := maxRecords
	t.Cleanup(func() { maxRecords = saved })
}

// fullWeight runs s at its seed without a limit and returns its records
// and its history's weight (history.Weight).
func fullWeight(t *testing.T, s *scenario.Scenario) (records, weight int) {
	t.Helper()
	w, err := Build(s, s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Run(s.Duration); err != nil {
		t.Fatal(err)
	}
	n := w.History().Len()
	return n, history.Weight(n, w.History().Entries())
}

// refusedBetween requires of s, whose history holds n records and weighs
// weight: run with a limit of its weight, it is as expected (the
// control); with a limit halfway between its records and its weight, it
// is refused for its duration, an *Error refusedBetween returns.
func refusedBetween(t *testing.T, s *scenario.Scenario, n, weight int) *scenario.Error {
	t.Helper()
	restoreRecordLimit(t)
	maxRecords = weight
	if r, err := Run(s, 0); err != nil || !r.Match {
		t.Fatalf("limit %d, the weight: %v", maxRecords, err)
	}
	maxRecords = (n + weight) / 2
	_, err := Run(s, 0)
	var se *scenario.Error
	if !errors.As(err, &se) || se.Field != "duration" || !strings.Contains(se.Msg, fmt.Sprintf("above the limit of %d", maxRecords)) {
		t.Fatalf("limit %d: error %v, want the duration refused", maxRecords, err)
	}
	return se
}

// releaseLua is a compare-and-delete release for loadScript's locks.
const releaseLua = "if redis.call('get', KEYS[1]) == ARGV[1] then\n  return redis.call('del', KEYS[1])\nend\nreturn 0\n"

// loadScript writes a script lock's files into a new directory (its
// acquire.lua, release.lua: releaseLua, and name.yaml) and loads the
// scenario.
func loadScript(t *testing.T, name, acquire, yaml string) *scenario.Scenario {
	t.Helper()
	dir := t.TempDir()
	for file, text := range map[string]string{"acquire.lua": acquire, "release.lua": releaseLua, name + ".yaml": yaml} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := scenario.Load(filepath.Join(dir, name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
