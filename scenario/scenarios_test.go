package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/setup"
)

// committed loads every committed scenario file (package scenarios's FS).
func committed(t *testing.T) []*Scenario {
	t.Helper()
	all, err := LoadFS(scenarios.FS, "scenarios", "*.yaml", 1)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

const good = `name: t
seed: 3
duration: 2s
topology:
  nodes:
    - name: m1
      replicas:
        - {name: r1, lag: {kind: uniform, min: 1ms, max: 5ms}}
clients:
  - {count: 2, retry: go-redis, timeout: 500ms}
algorithm:
  kind: simple
  ttl: 1s
faults:
  - {at: 1s, kind: failover, group: m1}
rates:
  drop_reply: 0.01
expect: ok
`

// TestLuaField: a node's lua field selects its script runner, fast (the
// default) when left out.
func TestLuaField(t *testing.T) {
	for _, c := range []struct {
		field string
		want  setup.LuaMode
	}{{"", setup.LuaFast}, {"lua: fast", setup.LuaFast}, {"lua: interpreted", setup.LuaInterpreted}, {"lua: miniredis", setup.LuaMiniredis}} {
		src := strings.Replace(good, "    - name: m1", "    - name: m1\n      "+c.field, 1)
		s, err := Parse("lua.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", c.field, err)
		}
		if got := s.Nodes[0].Config.Lua; got != c.want {
			t.Errorf("%q: node m1 runs %v, want %v", c.field, got, c.want)
		}
	}
}

// TestFailoverRateNeedsReplica: a failover rate is drawn per replicated
// group, so a topology without one would draw nothing and a verdict of ok
// would read as a lock that survives failovers; the file is refused at the
// rate's line. The control: the same rate with a replica loads.
func TestFailoverRateNeedsReplica(t *testing.T) {
	src := strings.Replace(good, "faults:\n  - {at: 1s, kind: failover, group: m1}\n", "", 1)
	src = strings.Replace(src, "  drop_reply: 0.01", "  failover: 4", 1)
	if _, err := Parse("ok.yaml", []byte(src)); err != nil {
		t.Fatalf("a failover rate on a replicated group: %v", err)
	}
	bare := strings.Replace(src, "      replicas:\n        - {name: r1, lag: {kind: uniform, min: 1ms, max: 5ms}}\n", "", 1)
	_, err := Parse("bad.yaml", []byte(bare))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:13: rates.failover: no group has a replica") {
		t.Fatalf("a failover rate without a replica: got %v", err)
	}
}

// TestBadFiles: every error names the file, the line and the field.
func TestBadFiles(t *testing.T) {
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"unknown top field", "seed: 3", "sed: 3", "bad.yaml:2: sed: unknown field"},
		{"unknown algorithm field", "  ttl: 1s", "  ttl: 1s\n  lease: 2s", "bad.yaml:14: algorithm.lease: not a field of algorithm simple"},
		{"unknown fault field", "group: m1}", "group: m1, node: m1}", "bad.yaml:15: faults[0].node: not a field of a failover fault"},
		{"bad duration", "duration: 2s", "duration: 2 seconds", "bad.yaml:3: duration: bad duration \"2 seconds\""},
		{"duration without unit", "ttl: 1s", "ttl: 1000", "bad.yaml:13: algorithm.ttl: bad duration \"1000\""},
		{"negative duration", "timeout: 500ms", "timeout: -5ms", "bad.yaml:10: clients[0].timeout: negative duration"},
		{"bad lag", "max: 5ms", "max: 5xs", "bad.yaml:8: topology.nodes[0].replicas[0].lag.max: bad duration"},
		{"unknown group", "group: m1}", "group: m2}", "bad.yaml:15: faults[0].group: unknown group \"m2\""},
		{"failover down not positive", "group: m1}", "group: m1, down: 0s}", "bad.yaml:15: faults[0].down: must be positive"},
		{"unknown node", "{at: 1s, kind: failover, group: m1}", "{at: 1s, kind: crash, node: m9}", "bad.yaml:15: faults[0].node: unknown node \"m9\""},
		{"unknown client", "{at: 1s, kind: failover, group: m1}", "{at: 1s, kind: pause, client: c7, for: 1s}", "bad.yaml:15: faults[0].client: unknown client \"c7\""},
		{"probability above 1", "drop_reply: 0.01", "drop_reply: 1.5", "bad.yaml:17: rates.drop_reply: probability 1.5 outside [0, 1]"},
		{"delay probability inside delay", "drop_reply: 0.01", "delay: {p: 0.02}", "bad.yaml:17: rates.delay.p: unknown field: the probability that a message is delayed is rates.delay_p"},
		{"bad failover_down", "drop_reply: 0.01", "drop_reply: 0.01\n  failover_down: soon", "bad.yaml:18: rates.failover_down: bad duration \"soon\""},
		{"fault probability above 1", "{at: 1s, kind: failover, group: m1}", "{kind: drop-replies, p: 2}", "bad.yaml:15: faults[0].p: probability 2 outside [0, 1]"},
		{"unknown fault kind", "kind: failover", "kind: meteor", "bad.yaml:15: faults[0].kind: unknown value \"meteor\""},
		{"unknown retry", "retry: go-redis", "retry: jedis", "bad.yaml:10: clients[0].retry: unknown value \"jedis\""},
		{"unknown engine", "  nodes:", "  engine: raft\n  nodes:", "bad.yaml:5: topology.engine: unknown value \"raft\" (want one of manual, sentinel)"},
		{"unknown lua", "    - name: m1", "    - name: m1\n      lua: luajit", "bad.yaml:7: topology.nodes[0].lua: unknown value \"luajit\" (want one of fast, interpreted, miniredis)"},
		{"unknown persistence", "    - name: m1", "    - name: m1\n      persistence: sometimes", "bad.yaml:7: topology.nodes[0].persistence: unknown value \"sometimes\""},
		{"missing duration", "duration: 2s\n", "", "bad.yaml:1: duration: required field is missing"},
		{"bad expect", "expect: ok", "expect: fine", "bad.yaml:18: expect: want ok, any, or a mapping"},
		{"unknown violation kind", "expect: ok", "expect: {violated: [deadlock]}", "bad.yaml:18: expect.violated[0]: unknown violation kind \"deadlock\""},
		{"outcome before the return", "{at: 1s, kind: failover, group: m1}", "{kind: pause, client: c1, for: 1s, on: {client: c1, op: acquire, outcome: ok, event: call}}", "bad.yaml:15: faults[0].on.event: an op selected by outcome (ok) is known at its return: want event return, not call"},
		{"unknown outcome", "{at: 1s, kind: failover, group: m1}", "{kind: pause, client: c1, for: 1s, on: {client: c1, op: acquire, outcome: won, event: return}}", "bad.yaml:15: faults[0].on.outcome: unknown value \"won\" (want one of ok, fail, error, unknown)"},
		{"outcome on a link fault", "{at: 1s, kind: failover, group: m1}", "{kind: drop-replies, node: m1, on: {client: c1, op: acquire, outcome: ok}}", "bad.yaml:15: faults[0].on.outcome: not a field of the trigger of a drop-replies fault"},
		{"failover without replica", "        - {name: r1, lag: {kind: uniform, min: 1ms, max: 5ms}}\n", "", "bad.yaml:14: faults[0].group: group \"m1\" has no replica"},
		{"duplicate name", "- {count: 2,", "- {name: r1,", "bad.yaml:10: clients[0].name: name \"r1\" already used by a node"},
		{"replica named like its master", "{name: r1,", "{name: m1,", "bad.yaml:8: topology.nodes[0].replicas[0].name: name \"m1\" already used"},
		{"name with a path", "name: t", "name: ../x", "bad.yaml:1: name: \"../x\": want ASCII letters"},
		{"required section left empty", "clients:\n  - {count: 2, retry: go-redis, timeout: 500ms}\n", "clients:\n", "bad.yaml:9: clients: required field is empty"},
		{"required duration left empty", "duration: 2s", "duration:", "bad.yaml:3: duration: required field is empty"},
		{"client name with an escape sequence", "- {count: 2,", `- {name: "c\e[2J",`, `bad.yaml:10: clients[0].name: name "c\x1b[2J" holds the control or formatting character U+001B`},
		{"client names with a bidi override", "- {count: 2,", `- {name: "c\u202e", count: 2,`, `bad.yaml:10: clients[0].name: name "c\u202e1" holds the control or formatting character U+202E`},
		{"node name with a carriage return", "    - name: m1", `    - name: "m\r1"`, `bad.yaml:6: topology.nodes[0].name: name "m\r1" holds the control or formatting character U+000D`},
		{"replica name with a bell", "{name: r1,", `{name: "r\a1",`, `bad.yaml:8: topology.nodes[0].replicas[0].name: name "r\a1" holds the control`},
		{"duplicate field", "seed: 3", "seed: 3\nseed: 4", "bad.yaml:3: seed: field given twice"},
		{"syntax error", "  kind: simple", "  kind: [simple", "bad.yaml:12: yaml: the [ that opens here is not closed, or an item in it lacks its comma (did not find expected ',' or ']')"},
		{"flow mapping not closed", "- {count: 2, retry: go-redis, timeout: 500ms}", "- {count: 2, retry: go-redis, timeout: 500ms", "bad.yaml:10: yaml: the { that opens here is not closed"},
		{"flow mapping without a comma", "- {count: 2, retry: go-redis, timeout: 500ms}", "- {count: 2 retry: go-redis, timeout: 500ms}", "bad.yaml:10: yaml: the { that opens here is not closed, or an entry in it lacks its comma"},
		{"indented wrong", "  ttl: 1s", "  ttl: 1s\n hold: 1s", "bad.yaml:14: yaml: a mapping here has a line that is not one of its keys: look at this line and those below it for one indented wrong"},
		{"indented wrong in a list", "    - name: m1\n", "    - name: m1\n     lua: fast\n", "bad.yaml:6: yaml: a list here has a line that is not one of its items"},
		{"tab syntax error", "  ttl: 1s", "\tttl: 1s", "bad.yaml:13: yaml: a tab in the indentation"},
		{"seed not a number", "seed: 3", "seed: three", "bad.yaml:2: seed: want a non-negative integer"},
		{"partition unknown member", "{at: 1s, kind: failover, group: m1}", "{kind: partition, a: [m1], b: [zz]}", "bad.yaml:15: faults[0].b[0]: unknown node or client \"zz\""},
		{"until before from", "{at: 1s, kind: failover, group: m1}", "{kind: delay, from: 2s, until: 1s, delay: 1s}", "bad.yaml:15: faults[0].until: 1s is not after from 2s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.old) {
				t.Fatalf("test bug: %q not in the good file", c.old)
			}
			src := strings.Replace(good, c.old, c.new, 1)
			_, err := Parse("bad.yaml", []byte(src))
			if err == nil {
				t.Fatalf("no error for\n%s", src)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error\n  %v\nwant prefix\n  %s", err, c.want)
			}
			if e.Line == 0 {
				t.Errorf("error %v has no line", err)
			}
		})
	}
}

// TestSyntaxErrorWithoutLine: a YAML error the parser gives without a
// line reads "FILE:LINE: yaml: MESSAGE" (the line found in the file:
// TestYAMLErrorsWithoutALine), not "FILE: yaml: yaml: MESSAGE".
func TestSyntaxErrorWithoutLine(t *testing.T) {
	for _, c := range [][2]string{
		{"name: t\x01\n", "bad.yaml:1: yaml: control characters are not allowed"},
		{"a: *x\n", "bad.yaml:1: yaml: unknown anchor 'x' referenced"},
	} {
		src, want := c[0], c[1]
		_, err := Parse("bad.yaml", []byte(src))
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", src, err, want)
		}
	}
}

func TestLoadNamesFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.yaml")
	if err := os.WriteFile(p, []byte(strings.Replace(good, "group: m1}", "group: m2}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	if want := fmt.Sprintf("%s:15: faults[0].group: unknown group \"m2\"", p); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
	if _, err := LoadDir(dir); err == nil {
		t.Fatal("LoadDir accepted a bad file")
	}
	if _, err := Parse("empty.yaml", nil); err == nil || !strings.HasPrefix(err.Error(), "empty.yaml:1:") {
		t.Fatalf("empty file: %v", err)
	}
}

// FuzzParse: the loader never panics (a panic it recovers from is an
// internal error, a failure here), and every error is an *Error naming the
// file.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	for _, p := range []string{"f0-failover-lagging-replica.yaml", "k2-fencing-pause.yaml", "baseline-redlock-redisson.yaml"} {
		if b, err := fs.ReadFile(scenarios.FS, p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("a: &x [*x]"))
	f.Add([]byte("expect: {violated: 3}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse("fuzz.yaml", data)
		if err := checkParsed(err); err != nil {
			t.Fatal(err)
		}
	})
}
