package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/traffic"
)

// scriptFile is a valid scenario of the script kind; its Lua files are
// written beside it by writeScript.
const scriptFile = `name: s
duration: 2s
topology:
  nodes: [{name: m1}]
clients:
  - {count: 2}
algorithm:
  kind: script
  acquire: acquire.lua
  release: release.lua
  lease: 1s
expect: ok
`

// writeScript writes src as s.yaml with an acquire.lua and a release.lua
// in a new directory and returns s.yaml's path.
func writeScript(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"s.yaml": src, "acquire.lua": "return 1\n", "release.lua": "return 1\n", "empty.lua": " \n",
		"unclosed.lua": "if redis.call(\n", "twoequals.lua": "local x = = 1\nreturn x\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "s.yaml")
}

// TestUserKindErrors: the loader's errors about the fields of the script
// and custom kinds name the file, the line and the field: an unknown
// model, reply convention or owner_in, a missing, unreadable or empty Lua
// file or one that does not compile, a script lock without a lease (the
// section's, or a client's watchdog), a fenced one marked by value,
// extensions without an extend script or with no lease, and a wait, which
// a user's lock does for itself (the section's or a client's).
func TestUserKindErrors(t *testing.T) {
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"unknown model", "  lease: 1s", "  lease: 1s\n  model: mutex", `s.yaml:12: algorithm.model: unknown value "mutex" (want one of simple, reentrant, fenced)`},
		{"unknown reply", "  lease: 1s", "  lease: 1s\n  reply: nil", `s.yaml:12: algorithm.reply: unknown value "nil" (want one of ok, redisson)`},
		{"unknown owner_in", "  lease: 1s", "  lease: 1s\n  owner_in: hash", `s.yaml:12: algorithm.owner_in: unknown value "hash" (want one of value, field)`},
		{"missing file", "release: release.lua", "release: gone.lua", "s.yaml:10: algorithm.release: stat "},
		{"directory", "release: release.lua", "release: .", "s.yaml:10: algorithm.release: "},
		{"empty file", "release: release.lua", "release: empty.lua", "s.yaml:10: algorithm.release: "},
		{"empty path", "release: release.lua", `release: ""`, "s.yaml:10: algorithm.release: want the path of a Lua file"},
		{"no release", "  release: release.lua\n", "", "s.yaml:8: algorithm.release: required field is missing"},
		{"no lease", "  lease: 1s\n", "", "s.yaml:8: algorithm.lease: required field is missing"},
		{"watchdog lease", "lease: 1s", "lease: watchdog", "s.yaml:11: algorithm.lease: a script lock needs a lease"},
		{"client watchdog lease", "{count: 2}", "{count: 2, lease: watchdog}", "s.yaml:6: clients[0].lease: a script lock needs a lease"},
		// A script lock has no watchdog: a bad lease does not offer one.
		{"lease no duration", "lease: 1s", "lease: 2 s", "s.yaml:11: algorithm.lease: bad lease \"2 s\" (want a Go duration such as 10s or 1500ms)"},
		{"client lease no duration", "{count: 2}", "{count: 2, lease: 2 s}", "s.yaml:6: clients[0].lease: bad lease \"2 s\" (want a Go duration such as 10s or 1500ms)"},
		{"fenced by value", "  lease: 1s", "  lease: 1s\n  model: fenced\n  owner_in: value", "s.yaml:13: algorithm.owner_in: a fenced lock's acquire records its token"},
		{"extend_every without extend", "  lease: 1s", "  lease: 1s\n  extend_every: 300ms", "s.yaml:12: algorithm.extend_every: extensions need an extend script"},
		{"wait", "  lease: 1s", "  lease: 1s\n  wait: 1s", "s.yaml:12: algorithm.wait: not a field of algorithm script"},
		{"client wait", "{count: 2}", "{count: 2, wait: 1s}", "s.yaml:6: clients[0].wait: not a field of a client under algorithm script"},
		{"custom extend_every with the watchdog", "  kind: script\n  acquire: acquire.lua\n  release: release.lua\n  lease: 1s",
			"  kind: custom\n  lease: watchdog\n  extend_every: 1s", "s.yaml:10: algorithm.extend_every: an extension renews a lease"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(scriptFile, c.old) {
				t.Fatalf("test bug: %q not in the file", c.old)
			}
			p := writeScript(t, strings.Replace(scriptFile, c.old, c.new, 1))
			_, err := Load(p)
			if err == nil || !strings.HasPrefix(err.Error(), filepath.Dir(p)+string(filepath.Separator)+c.want) {
				t.Errorf("error\n  %v\nwant prefix\n  %s", err, c.want)
			}
		})
	}
	// A zero lease is refused without offering the watchdog it has not.
	if _, err := Load(writeScript(t, strings.Replace(scriptFile, "lease: 1s", "lease: 0s", 1))); err == nil || !strings.HasSuffix(err.Error(), "algorithm.lease: must be positive") {
		t.Errorf("lease 0s: %v", err)
	}
	// A Lua file that does not compile is refused, naming its line (or
	// its end) and what the parser found: every call of it would fail,
	// and the run would judge a lock that never ran.
	for file, want := range map[string]string{
		"unclosed.lua":  "unclosed.lua: at its end: syntax error (the script does not compile)",
		"twoequals.lua": `twoequals.lua:1: syntax error near "=" (the script does not compile)`,
	} {
		p := writeScript(t, strings.Replace(scriptFile, "release: release.lua", "release: "+file, 1))
		_, err := Load(p)
		if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(filepath.Dir(p), "s.yaml:10: algorithm.release: ")) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: error\n  %v\nwant s.yaml:10: algorithm.release: ... %s", file, err, want)
		}
	}
	// The control: the file as it is loads, with its scripts.
	s, err := Load(writeScript(t, scriptFile))
	if err != nil {
		t.Fatal(err)
	}
	k := s.Algorithm.Workload.(*Script)
	if k.Acquire == nil || k.Acquire.Src != "return 1\n" || k.Acquire.Name != "script_acquire" || k.Release.Name != "script_release" ||
		k.Extend != nil || k.Reply != traffic.ReplyOK || k.OwnerIn != traffic.OwnerInValue || k.OwnerConfig.Lease != time.Second {
		t.Errorf("loaded %+v", k.ScriptConfig)
	}
}

// TestScriptFilesInFS: loaded from a file system (the embedded scenarios),
// the Lua comes from it, beside the scenario file, named as LoadFS names
// files; a path that leaves it is an error naming the field.
func TestScriptFilesInFS(t *testing.T) {
	fsys := fstest.MapFS{
		"dir/s.yaml":      {Data: []byte(scriptFile)},
		"dir/acquire.lua": {Data: []byte("return 'OK'\n")},
		"dir/release.lua": {Data: []byte("return 1\n")},
		"dir/up.yaml":     {Data: []byte(strings.Replace(scriptFile, "release.lua", "../../release.lua", 1))},
	}
	all, err := LoadFS(fsys, "base", "dir/s.yaml", 1)
	if err != nil || len(all) != 1 || all[0].Algorithm.Workload.(*Script).Acquire.Src != "return 'OK'\n" {
		t.Fatalf("LoadFS: %v", err)
	}
	_, err = LoadFS(fsys, "base", "dir/up.yaml", 1)
	if want := "base/dir/up.yaml:10: algorithm.release: ../../release.lua: not a path inside base"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestWithUserLock: a user's lock takes the place of a file's algorithm
// with the file's settings: a custom file's own; a simple file's ttl (and
// a client's) as the lease; a reentrant file's owners and depth, without
// its wait. A lock on several groups, no lock maker and an unknown model
// are errors. The scenario itself is not changed.
func TestWithUserLock(t *testing.T) {
	mk := func(lock.Conn, lock.Runtime, string, time.Duration) (traffic.UserLock, error) { return nil, nil }
	s, err := Load(writeScript(t, strings.Replace(scriptFile, "  kind: script\n  acquire: acquire.lua\n  release: release.lua\n", "  kind: custom\n  model: reentrant\n  key: k9\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StartWorkload(named{}, nil); err == nil || !strings.Contains(err.Error(), "s.yaml:8: algorithm.kind: custom: the lock is given in Go") {
		t.Errorf("a custom file alone: %v", err)
	}
	u, err := s.WithUserLock(mk, "")
	if err != nil {
		t.Fatal(err)
	}
	c := u.Algorithm.Workload.(*Custom)
	if c.New == nil || c.UserConfig.Model != "reentrant" || c.Key != "k9" || c.OwnerConfig.Lease != time.Second || u.Source != nil || s.Source == nil {
		t.Errorf("custom: %+v", c.UserConfig)
	}
	if s.Algorithm.Workload.(*Custom).New != nil {
		t.Errorf("WithUserLock changed the scenario's own config")
	}

	simple := strings.Replace(good, "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, retry: go-redis, timeout: 500ms, ttl: 3s}", 1)
	s, err = Parse("good.yaml", []byte(simple))
	if err != nil {
		t.Fatal(err)
	}
	u, err = s.WithUserLock(mk, "fenced")
	if err != nil {
		t.Fatal(err)
	}
	c = u.Algorithm.Workload.(*Custom)
	cl := u.ForClient("c1").Workload.(*Custom)
	if u.Algorithm.Kind != traffic.KindCustom || c.UserConfig.Model != "fenced" || c.Group != "m1" || c.Key != "lk" || c.OwnerConfig.Lease != time.Second ||
		cl.OwnerConfig.Lease != 3*time.Second || c.Holding != s.Algorithm.Workload.(*Simple).Holding {
		t.Errorf("from simple: %+v; c1's %+v", c.UserConfig, cl.UserConfig)
	}
	if s.Clients[0].Settings.TTL == nil {
		t.Errorf("WithUserLock changed the scenario's clients")
	}

	reentrant := strings.Replace(good, "  kind: simple\n  ttl: 1s", "  kind: reentrant\n  owners: [a, b]\n  depth: 2\n  wait: 1s\n  lease: 2s", 1)
	s, err = Parse("good.yaml", []byte(reentrant))
	if err != nil {
		t.Fatal(err)
	}
	if u, err = s.WithUserLock(mk, "reentrant"); err != nil {
		t.Fatal(err)
	}
	if c = u.Algorithm.Workload.(*Custom); c.Depth != 2 || len(c.Owners) != 2 || c.Wait != 0 || c.OwnerConfig.Lease != 2*time.Second {
		t.Errorf("from reentrant: %+v", c.UserConfig)
	}

	// The other kinds on one group, each with its group in its settings
	// (fair, spin and non-reentrant had none, and were refused as kept on
	// several groups).
	for _, kind := range []string{"fair", "spin", "non-reentrant", "fenced", "rwlock"} {
		one := strings.Replace(good, "  kind: simple\n  ttl: 1s", "  kind: "+kind+"\n  group: m1\n  lease: 2s", 1)
		if s, err = Parse("good.yaml", []byte(one)); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if u, err = s.WithUserLock(mk, ""); err != nil {
			t.Errorf("from %s: %v", kind, err)
			continue
		}
		if c = u.Algorithm.Workload.(*Custom); c.Group != "m1" || c.OwnerConfig.Lease != 2*time.Second {
			t.Errorf("from %s: %+v", kind, c.UserConfig)
		}
	}

	spec := strings.Replace(good, "  kind: simple\n  ttl: 1s", "  kind: redlock-spec\n  ttl: 1s", 1)
	if s, err = Parse("good.yaml", []byte(spec)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WithUserLock(mk, ""); err == nil || !strings.Contains(err.Error(), "algorithm.kind: redlock-spec: the lock is kept on several groups") {
		t.Errorf("redlock-spec: %v", err)
	}
	if _, err := s.WithUserLock(nil, ""); err == nil {
		t.Errorf("no lock maker: no error")
	}
	s, _ = Parse("good.yaml", []byte(good))
	if _, err := s.WithUserLock(mk, "mutex"); err == nil || !strings.Contains(err.Error(), `unknown model "mutex"`) {
		t.Errorf("unknown model: %v", err)
	}
}

// named is a client that has only a name: StartWorkload refuses a custom
// kind without its lock before it asks the client for anything else.
type named struct{ traffic.Client }

func (named) Name() string { return "c1" }
