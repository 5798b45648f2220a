package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// errorLines is err's lines: one error each.
func errorLines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

// TestEveryErrorReported: a file with errors in independent parts reports
// every one, one a line in line order, each naming the file, the line and
// the field; errors.As finds the first as an *Error; an unknown field does
// not stop the part it is in (the mapping is read on), so that two in one
// mapping are both reported, but it fails the part: the algorithm, which
// reads the topology, is left unread.
func TestEveryErrorReported(t *testing.T) {
	src := `name: t
seed: -1
duration: 2s
topology:
  nodes:
    - name: m1
      replicas:
        - {name: r1, lag: 1ms, speed: 2, lagg: 3ms}
clients:
  - {count: 2, retry: sometimes}
algorithm:
  kind: simple
  ttl: 1s
  leese: 3s
  holdz: 1
faults:
  - {at: 1s, kind: crash, node: m1}
expect: {violated: [overlap]}
budget: {memory: 1}
`
	_, err := Parse("m.yaml", []byte(src))
	want := []string{
		`m.yaml:2: seed: want a non-negative integer, got "-1"`,
		`m.yaml:8: topology.nodes[0].replicas[0].speed: unknown field (want one of name, persistence, drift_ppm, lua, lag)`,
		`m.yaml:8: topology.nodes[0].replicas[0].lagg: unknown field (want one of name, persistence, drift_ppm, lua, lag)`,
		`m.yaml:10: clients[0].retry: unknown value "sometimes" (want one of none, go-redis, redisson, redisson-3.36)`,
		`m.yaml:19: budget.memory: `,
	}
	got := errorLines(err)
	if len(got) != len(want) {
		t.Fatalf("%d errors, want %d:\n%v", len(got), len(want), err)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d:\n  %s\nwant prefix\n  %s", i, got[i], want[i])
		}
	}
	var es Errors
	var e *Error
	if !errors.As(err, &es) || len(es) != len(want) || !errors.As(err, &e) || e.Line != 2 || e.Field != "seed" {
		t.Errorf("errors.As: Errors %v, first %+v", es, e)
	}
	// The clients failed: the faults and the expectation, which read them,
	// are left unread; the topology failed: so is the algorithm.
	if strings.Contains(err.Error(), "overlap") || strings.Contains(err.Error(), "faults[") || strings.Contains(err.Error(), "algorithm.") {
		t.Errorf("a part that reads a bad one was read:\n%v", err)
	}
}

// TestErrorsOfDependentParts: a part that reads what a bad part builds is
// not read, so that no error is the consequence of another; a part with an
// unknown field is a bad one, as the field is left out of what it builds.
// With a bad node, or one whose misspelled replicas leave it without its
// replica, a fault naming that replica is no "unknown node"; with an
// unknown field in the algorithm, the faults (which read it) are left
// unread and the expectation (which reads the clients) is read; with one in
// the budget, which nothing reads, or in the root mapping, whose sections
// are each read from their own key, the faults and the expectation are
// read and their errors reported beside it.
func TestErrorsOfDependentParts(t *testing.T) {
	withR1 := strings.Replace(good, "group: m1}", "group: m1}\n  - {at: 1s, kind: crash, node: r1}", 1)
	for _, c := range []struct{ old, new, want string }{
		{"    - name: m1\n", "    - name: m1\n      persistence: sometimes\n", `d.yaml:7: topology.nodes[0].persistence: unknown value "sometimes"`},
		{"      replicas:\n", "      replicaz:\n", `d.yaml:7: topology.nodes[0].replicaz: unknown field: did you mean replicas? (want one of name, persistence, drift_ppm, lua, replicas)`},
	} {
		if !strings.Contains(withR1, c.old) {
			t.Fatalf("test bug: %q not in the file", c.old)
		}
		_, err := Parse("d.yaml", []byte(strings.Replace(withR1, c.old, c.new, 1)))
		if lines := errorLines(err); len(lines) != 1 || !strings.HasPrefix(lines[0], c.want) {
			t.Errorf("a bad node (%s): errors\n%v\nwant the node's alone: %s", c.new, err, c.want)
		}
	}
	// Without the node's error, the fault does read: the test's file is good
	// but for it.
	if _, err := Parse("d.yaml", []byte(withR1)); err != nil {
		t.Fatalf("the file without the node's error: %v", err)
	}
	for _, c := range []struct {
		old, new string
		want     []string
	}{
		{"  ttl: 1s", "  ttl: 1s\n  ttl_ms: 5", []string{"d.yaml:14: algorithm.ttl_ms: not a field of algorithm simple",
			`d.yaml:20: expect.violated[0]: unknown violation kind "overlap"`}},
		{"expect: ok", "expect: ok\nbudget: {stepz: 5}", []string{`d.yaml:16: faults[1].client: unknown client "c9" (the clients are c1, c2)`,
			`d.yaml:19: expect.violated[0]: unknown violation kind "overlap"`, "d.yaml:20: budget.stepz: unknown field"}},
		// The root's unknown field fails no section.
		{"expect: ok", "expect: ok\nbudgett: {steps: 5000}", []string{`d.yaml:16: faults[1].client: unknown client "c9" (the clients are c1, c2)`,
			`d.yaml:19: expect.violated[0]: unknown violation kind "overlap"`, "d.yaml:20: budgett: unknown field: did you mean budget? (want one of name, description, "}},
	} {
		bad := strings.Replace(good, c.old, c.new, 1)
		bad = strings.Replace(bad, "group: m1}", "group: m1}\n  - {at: 1s, kind: pause, client: c9, for: 1s}", 1)
		bad = strings.Replace(bad, "expect: ok", "expect: {violated: [overlap]}", 1)
		_, err := Parse("d.yaml", []byte(bad))
		lines := errorLines(err)
		if len(lines) != len(c.want) {
			t.Errorf("%s: errors\n%v\nwant %d", c.new, err, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%s: error %d: %s, want %s", c.new, i, lines[i], w)
			}
		}
	}
}

// TestErrorsLimit: past MaxErrors errors, a file's errors are the first
// MaxErrors and a line saying that more may follow; reading stops there.
// When the unknown fields of the last part read pass MaxErrors, nothing is
// left unread, and the line says how many more there are.
func TestErrorsLimit(t *testing.T) {
	var extra strings.Builder
	for i := range MaxErrors + 5 {
		fmt.Fprintf(&extra, "\n  bad_%d: 1", i)
	}
	_, err := Parse("l.yaml", []byte(strings.Replace(good, "  ttl: 1s", "  ttl: 1s"+extra.String(), 1)))
	lines := errorLines(err)
	if len(lines) != MaxErrors+1 || !strings.HasPrefix(lines[0], "l.yaml:14: algorithm.bad_0: not a field") ||
		!strings.HasPrefix(lines[MaxErrors-1], fmt.Sprintf("l.yaml:%d: algorithm.bad_%d: ", 14+MaxErrors-1, MaxErrors-1)) ||
		lines[MaxErrors] != "l.yaml: more errors may follow: the first 10 are shown, and reading stopped there" {
		t.Errorf("%d lines:\n%v", len(lines), err)
	}
	var budget strings.Builder
	for i := range MaxErrors + 5 {
		fmt.Fprintf(&budget, ", bad_%d: 1", i)
	}
	_, err = Parse("l.yaml", []byte(good+"budget: {steps: 5000"+budget.String()+"}\n"))
	lines = errorLines(err)
	if len(lines) != MaxErrors+1 || !strings.HasPrefix(lines[0], "l.yaml:19: budget.bad_0: unknown field") ||
		lines[MaxErrors] != "l.yaml: 5 more errors: the first 10 are shown" {
		t.Errorf("the last part's unknown fields, %d lines:\n%v", len(lines), err)
	}
	// Scaled, every error but the note says the durations were.
	_, err = ParseScaled("l.yaml", []byte(strings.Replace(good, "seed: 3", "seed: x", 1)+"budget: {steps: y}\n"), 0.5)
	if lines := errorLines(err); len(lines) != 2 || !strings.HasSuffix(lines[0], "(every duration scaled by 0.5)") || !strings.HasSuffix(lines[1], "(every duration scaled by 0.5)") {
		t.Errorf("scaled:\n%v", err)
	}
	_, err = ParseScaled("l.yaml", []byte(strings.Replace(good, "  ttl: 1s", "  ttl: 1s"+extra.String(), 1)), 0.5)
	lines = errorLines(err)
	for i, l := range lines[:min(len(lines), MaxErrors)] {
		if !strings.Contains(l, ": not a field of algorithm simple (its fields: ") || !strings.HasSuffix(l, ") (every duration scaled by 0.5)") {
			t.Errorf("scaled, error %d: %s", i, l)
		}
	}
	if len(lines) != MaxErrors+1 || lines[MaxErrors] != "l.yaml: more errors may follow: the first 10 are shown, and reading stopped there" {
		t.Errorf("scaled, %d lines:\n%v", len(lines), err)
	}
}

// TestErrorsListWhatExists: an unknown node, client, node-or-client or
// group names those the file has (the first dozen of many); a lease that is no
// duration says the forms a lease takes, watchdog among them; an unknown
// field of a fault names its kind's fields.
func TestErrorsListWhatExists(t *testing.T) {
	many := strings.Replace(good, "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 20, retry: go-redis, timeout: 500ms}", 1)
	for _, c := range []struct{ src, old, new, want string }{
		{good, "group: m1}", "group: m1}\n  - {at: 1s, kind: crash, node: r9}", `e.yaml:16: faults[1].node: unknown node "r9" (the nodes are m1, r1)`},
		{good, "group: m1}", "group: m1}\n  - {at: 1s, kind: client-crash, client: c3}", `e.yaml:16: faults[1].client: unknown client "c3" (the clients are c1, c2)`},
		{many, "group: m1}", "group: m1}\n  - {at: 1s, kind: client-crash, client: c30}", `e.yaml:16: faults[1].client: unknown client "c30" (the clients are c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12 and 8 more)`},
		{good, "group: m1}", "group: m1}\n  - {kind: partition, a: [m1], b: [x]}", `e.yaml:16: faults[1].b[0]: unknown node or client "x" (the nodes are m1, r1; the clients are c1, c2)`},
		{good, "group: m1}", "group: m1}\n  - {at: 1s, kind: crash, node: m1, client: c1}", `e.yaml:16: faults[1].client: not a field of a crash fault (its fields: at, on, node, down, stay)`},
		{good, "group: m1}", "group: m1}\n  - {kind: drop-replies, on: {client: c7, op: acquire}}", `e.yaml:16: faults[1].on.client: unknown client "c7" (the clients are c1, c2)`},
		{good, "kind: simple\n  ttl: 1s", "kind: reentrant\n  lease: forever", `e.yaml:13: algorithm.lease: bad lease "forever" (want a Go duration such as 10s or 1500ms, or watchdog`},
		{good, "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, lease: forever}", `e.yaml:10: clients[0].lease: not a field of a client under algorithm simple`},
	} {
		if !strings.Contains(c.src, c.old) {
			t.Fatalf("test bug: %q not in the file", c.old)
		}
		_, err := Parse("e.yaml", []byte(strings.Replace(c.src, c.old, c.new, 1)))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("error\n  %v\nwant prefix\n  %s", err, c.want)
		}
	}
	_, err := Parse("e.yaml", []byte(strings.Replace(strings.Replace(good, "kind: simple\n  ttl: 1s", "kind: reentrant", 1),
		"{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, lease: 5 seconds}", 1)))
	if err == nil || !strings.Contains(err.Error(), `e.yaml:10: clients[0].lease: bad lease "5 seconds" (want a Go duration such as 10s or 1500ms, or watchdog`) {
		t.Errorf("a client's lease: %v", err)
	}
	// Fourteen masters: an unknown group, the algorithm's or a failover's,
	// names the first dozen.
	var masters strings.Builder
	for i := 2; i <= 14; i++ {
		fmt.Fprintf(&masters, "\n    - {name: m%d}", i)
	}
	const first = "lag: {kind: uniform, min: 1ms, max: 5ms}}"
	many = strings.Replace(good, first, first+masters.String(), 1)
	const list = "(the masters are m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12 and 2 more)"
	for _, c := range []struct{ old, new, want string }{
		{"  ttl: 1s", "  ttl: 1s\n  group: m99", `algorithm.group: unknown group "m99" ` + list},
		{"kind: simple\n  ttl: 1s", "kind: redlock-spec\n  ttl: 1s\n  groups: [m1, m99]", `algorithm.groups[1]: unknown group "m99" ` + list},
		{"{at: 1s, kind: failover, group: m1}", "{at: 1s, kind: failover, group: m99}", `faults[0].group: unknown group "m99" ` + list},
	} {
		if !strings.Contains(many, c.old) {
			t.Fatalf("test bug: %q not in the file", c.old)
		}
		_, err := Parse("e.yaml", []byte(strings.Replace(many, c.old, c.new, 1)))
		if lines := errorLines(err); len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("error\n  %v\nwant one containing\n  %s", err, c.want)
		}
	}
}

// TestUnknownFieldSuggestsTheNearest: a misspelled field's error names the
// field it most likely meant (a letter left out, two swapped, another
// case), and a required field it misspells is not also reported missing
// (that error came first, by line, and hid the cause). The controls: a
// field near none, or near two alike, gets no suggestion, and a required
// field that is simply absent is still reported missing.
func TestUnknownFieldSuggestsTheNearest(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"  ttl: 1s", "  ttl: 1s\n  hodl: 1s", "algorithm.hodl: not a field of algorithm simple: did you mean hold? ("},
		{"  ttl: 1s", "  ttl: 1s\n  Think: 1s", "algorithm.Think: not a field of algorithm simple: did you mean think? ("},
		{"  ttl: 1s", "  ttl: 1s\n  quux: 1s", "algorithm.quux: not a field of algorithm simple ("},
		{"duration: ", "duratoin: ", "duratoin: unknown field: did you mean duration? ("},
	} {
		if !strings.Contains(good, c.old) {
			t.Fatalf("test bug: %q not in the file", c.old)
		}
		_, err := Parse("d.yaml", []byte(strings.Replace(good, c.old, c.new, 1)))
		lines := errorLines(err)
		if len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%s: errors\n%v\nwant one, with %q", c.new, err, c.want)
		}
	}
	// A misspelled section that another part needs (the expectation reads
	// the clients) fails its part without a second error: it panicked,
	// the part read on as if it had one (the fuzzer's find).
	if _, err := Parse("d.yaml", []byte(strings.Replace(good, "expect: ", "xect: ", 1))); err == nil || !strings.Contains(err.Error(), "xect: unknown field: did you mean expect?") ||
		strings.Contains(err.Error(), "internal error") || strings.Contains(err.Error(), "expect: required field is missing") {
		t.Errorf("a misspelled expect: %v", err)
	}
	if _, err := Parse("d.yaml", []byte(strings.Replace(good, "duration: ", "# duration: ", 1))); err == nil || !strings.Contains(err.Error(), "duration: required field is missing") {
		t.Errorf("an absent duration: %v", err)
	}
	// A field given already is not suggested for a misspelling beside it;
	// a root seeds is a sweep's, not a misspelled seed; a misspelled count
	// does not also make name missing.
	for _, c := range []struct{ old, new, want, not string }{
		{"  ttl: 1s", "  ttl: 1s\n  hold: 1s\n  hodl: 1s", "algorithm.hodl: not a field of algorithm simple (", "did you mean"},
		{"duration: ", "seeds: 5\nduration: ", "seeds: unknown field: a sweep's seeds are expect.seeds", "did you mean"},
		{"{count: 2, retry", "{cuont: 2, retry", "clients[0].cuont: not a field of a client under algorithm simple: did you mean count?", "name: required"},
	} {
		_, err := Parse("d.yaml", []byte(strings.Replace(good, c.old, c.new, 1)))
		if lines := errorLines(err); len(lines) != 1 || !strings.Contains(lines[0], c.want) || strings.Contains(lines[0], c.not) {
			t.Errorf("%s: errors\n%v\nwant one, with %q and without %q", c.new, err, c.want, c.not)
		}
	}
}

// TestErrAtKeepsItsCause: an error a backend places at a line of the file
// names the line and field, and errors.Is still finds its cause (a client
// that timed out connecting as it started), so that a caller can tell a
// hazard of real time from a bad file; the loader's own errors have none.
func TestErrAtKeepsItsCause(t *testing.T) {
	s, err := Load("../scenarios/baseline-simple.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cause := fmt.Errorf("peers: on client c2: %w", context.DeadlineExceeded)
	got := s.ErrAt(12, "algorithm", cause)
	var e *Error
	if !errors.As(got, &e) || e.Line != 12 || e.Field != "algorithm" || got.Error() != "../scenarios/baseline-simple.yaml:12: algorithm: "+cause.Error() {
		t.Errorf("ErrAt: %v", got)
	}
	if !errors.Is(got, context.DeadlineExceeded) {
		t.Errorf("ErrAt(%v) does not wrap its cause", got)
	}
	if errors.Is(got, ErrInternal) {
		t.Errorf("ErrAt(%v) reads as a loader bug", got)
	}
	_, err = Parse("bad.yaml", []byte("name: x\nduration: 1s\nnodes: 3\n"))
	if !errors.As(err, &e) {
		t.Fatalf("bad file: %v, want an *Error", err)
	}
	if e.Err != nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the loader's own error has a cause: %v", e.Err)
	}
}

// TestNameLength: a name of MaxNameLen bytes reads, one byte more is
// refused at its line and field (the run's files, named after it, could
// not be written: it failed only after the run).
func TestNameLength(t *testing.T) {
	for _, n := range []int{MaxNameLen, MaxNameLen + 1} {
		src := strings.Replace(good, "name: ", "name: "+strings.Repeat("b", n-1), 1)
		s, err := Parse("n.yaml", []byte(src))
		switch {
		case n <= MaxNameLen && err != nil:
			t.Errorf("%d bytes: %v", n, err)
		case n <= MaxNameLen && len(s.Name) != n:
			t.Errorf("%d bytes: name of %d bytes read", n, len(s.Name))
		case n > MaxNameLen && (err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("n.yaml:1: name: %d bytes long: at most %d", n, MaxNameLen))):
			t.Errorf("%d bytes: %v; want the name's line and field", n, err)
		}
	}
}

// TestNameFromTheFileName: a file without a name: field whose file name is
// no scenario name is refused with a message that says the name came from
// the file (the file has no name: line to fix), and one with a name: field
// is refused naming that field's value.
func TestNameFromTheFileName(t *testing.T) {
	unnamed := strings.Replace(good, "name: t\n", "", 1)
	if unnamed == good {
		t.Fatal("good's name line was not found")
	}
	_, err := Parse("my scenario.yaml", []byte(unnamed))
	if err == nil || !strings.Contains(err.Error(), `name: none given, and the file's name "my scenario" is no scenario name`) ||
		!strings.Contains(err.Error(), "rename the file") {
		t.Errorf("unnamed: %v", err)
	}
	_, err = Parse("x.yaml", []byte(strings.Replace(good, "name: t\n", "name: my scenario\n", 1)))
	if err == nil || !strings.Contains(err.Error(), `x.yaml:1: name: "my scenario": want ASCII letters`) {
		t.Errorf("named: %v", err)
	}
}

// TestYAMLErrorsWithoutALine: the parser's errors that give no line (bytes
// that are no UTF-8, a control character, an alias of an anchor never
// defined) are reported at the line of the first such place.
func TestYAMLErrorsWithoutALine(t *testing.T) {
	for _, c := range []struct {
		src  string
		want string
	}{
		{"name: t\nseed: 1\n# ok\nexpect: \xff\xfe\n", "u.yaml:4: yaml: invalid leading UTF-8 octet"},
		{"name: t\nseed: 1\nexpect: a\x01\n", "u.yaml:3: yaml: control characters are not allowed"},
		{"name: t\nseed: 1\nduration: *nope\n", "u.yaml:3: yaml: unknown anchor 'nope' referenced"},
	} {
		_, err := Parse("u.yaml", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v; want %s", c.src, err, c.want)
		}
	}
}

// TestYAMLTabIndentation: a tab in the indentation is named as one, at its
// own line, where the parser says "cannot start any token", or names the
// line where the block began (the line before, a folded scalar's first);
// TestYAMLParserErrorLines: yaml.v3 names a parser error's line from 0
// (a scanner error's from 1); the loader names it from 1, at most the
// file's last line, and says whether a never-closed { or [ opens there:
// on line 1, the parser names the line where it went wrong instead.
func TestYAMLParserErrorLines(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"name: x\nseed: 1\nclients: [{count: 2}\n", "y.yaml:3: yaml: the [ that opens here is not closed"},
		{"{a: 1", "y.yaml:1: yaml: the { that opens here is not closed"},
		{"{\n \"name\": \"x\",\n \"seed\": 1\n \"duration\": \"5s\"\n}\n", "y.yaml:4: yaml: a { opened above is not closed, or an entry in it lacks its comma before this line"},
		{"name: x\nseed: 1\n}\n", "y.yaml:3: yaml: a mapping here has a line that is not one of its keys"},
		{"name: x\nseed: 1\na: !x!y 1\n", "y.yaml:3: yaml: found undefined tag handle"},
	} {
		_, err := Parse("y.yaml", []byte(c.src))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// another character that cannot start a token keeps the parser's words.
func TestYAMLTabIndentation(t *testing.T) {
	const tab = "yaml: a tab in the indentation: YAML indents with spaces only"
	for _, c := range []struct {
		src  string
		want string
	}{
		{"name: t\ntopology:\n  nodes:\n\t- name: m1\n", "t.yaml:4: " + tab},
		{"name: t\ntopology:\n  nodes:\n    - name: m1\n\tclients: []\n", "t.yaml:5: " + tab},
		{"name: t\ndescription: >\n  abc\n\tdef\nseed: 1\n", "t.yaml:4: " + tab},
		// The parser refuses a tab that indents a comment too.
		{"name: t\ntopology:\n  nodes:\n\t# the master\n    - name: m1\n", "t.yaml:4: " + tab},
		{"name: t\nseed: 1\nduration: @10s\n", "t.yaml:3: yaml: found character that cannot start any token"},
	} {
		_, err := Parse("t.yaml", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v; want %s", c.src, err, c.want)
		}
	}
}
