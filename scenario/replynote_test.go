package scenario_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
)

// Redisson's reentrant lock scripts in the convention reply: redisson
// reads (scenarios/README.md's example): nil when the acquire takes the
// lock, the holder's TTL when not.
const (
	redissonStyleAcquire = `if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return nil
end
return redis.call('pttl', KEYS[1])
`
	redissonStyleRelease = `if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
return 1
`
)

// TestReplyNoteNamesTheOtherConvention: a script lock whose acquire
// answers, by the scenario's reply convention, a refusal in runs that
// wrote the caller's own mark gets a note naming the other convention (a
// user who copies Redisson's scripts and leaves out reply: redisson gets
// dozens of findings about a lock that works, and nothing else said why);
// the same scripts under their own convention get none, and are safe;
// nor does a run where one take among many was misread because a late
// first attempt ran after its retry's refusal had come back.
// Both directions: Redisson's scripts under reply: ok, SimpleLock's
// (which answer 1 when they take the lock) under reply: redisson.
func TestReplyNoteNamesTheOtherConvention(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"acquire.lua": redissonStyleAcquire, "release.lua": redissonStyleRelease}
	for _, f := range []string{"simplelock-acquire.lua", "simplelock-release.lua"} {
		b, err := scenarios.FS.ReadFile("script/" + f)
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(b)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, algorithm string
		note            string // a substring of the note; "" for none
		// late, if set, delays c1's 3rd acquire past its 500 ms timeout:
		// go-redis's retry is refused, and the late first attempt then
		// takes the lock after the refusal came back (a finding of its
		// own, not a convention: no note).
		late bool
	}{
		{"redisson-scripts-read-as-ok", "{kind: script, acquire: acquire.lua, release: release.lua, model: reentrant, lease: 5s, depth: 2}", "set reply: redisson", false},
		{"redisson-scripts-as-redisson", "{kind: script, acquire: acquire.lua, release: release.lua, model: reentrant, lease: 5s, depth: 2, reply: redisson}", "", false},
		{"simple-scripts-read-as-redisson", "{kind: script, acquire: simplelock-acquire.lua, release: simplelock-release.lua, model: simple, owner_in: value, lease: 10s, reply: redisson}", "set reply: ok", false},
		{"simple-scripts-as-ok", "{kind: script, acquire: simplelock-acquire.lua, release: simplelock-release.lua, model: simple, owner_in: value, lease: 10s}", "", false},
		{"simple-scripts-late-first-attempt", "{kind: script, acquire: simplelock-acquire.lua, release: simplelock-release.lua, model: simple, owner_in: value, lease: 10s, hold: 400ms, think: 300ms}", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			clients, faults := "  - {count: 3}\n", ""
			if c.late {
				clients = "  - {name: c1, retry: go-redis, timeout: 500ms}\n  - {name: c2, retry: go-redis, timeout: 500ms}\n"
				faults = "faults:\n  - {kind: delay, direction: requests, delay: 700ms, on: {client: c1, op: acquire, nth: 3}}\n"
			}
			yaml := "name: " + c.name + "\nseed: 1\nduration: 10s\ntopology:\n  nodes:\n    - name: m1\nclients:\n" + clients + "algorithm: " + c.algorithm + "\n" + faults + "expect: any\n"
			s, err := scenario.ParseFS(os.DirFS(dir), ".", c.name+".yaml", []byte(yaml), 1)
			if err != nil {
				t.Fatal(err)
			}
			r, err := simrun.Run(s, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range r.Verdict.Notes {
				if strings.HasPrefix(n, "reply: ") {
					got = append(got, n)
				}
			}
			switch {
			case c.note == "" && len(got) > 0:
				t.Errorf("a note on scripts that follow their convention: %q", got)
			case c.late && !slices.Contains(r.Verdict.Kinds(), checker.Linearizability):
				t.Errorf("the late first attempt is no finding: %s", r.Verdict)
			case c.note == "" && !c.late && len(r.Verdict.Violations) > 0:
				t.Errorf("the scripts under their own convention: %s", r.Verdict)
			case c.note != "" && (len(got) != 1 || !strings.Contains(got[0], c.note) || !strings.Contains(got[0], "the first: c")):
				t.Errorf("notes %q: want one naming %q and the first run", got, c.note)
			}
		})
	}
}
