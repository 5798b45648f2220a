package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEdgeInputs: inputs the loader silently mis-read or accepted before
// (issue 15) are bad input, each an *Error naming the file, the line and
// the field.
func TestEdgeInputs(t *testing.T) {
	many := func(entries, count int) string {
		var b strings.Builder
		for i := range entries {
			fmt.Fprintf(&b, "  - {name: e%d-, count: %d}\n", i, count)
		}
		return b.String()
	}
	replicas := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "        - {name: r%d}\n", i+1)
		}
		return b.String()
	}
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"second document", "expect: ok\n", "expect: ok\n---\nname: other\n", "bad.yaml:18: yaml: a second YAML document"},
		{"second empty document", "expect: ok\n", "expect: ok\n---\n{}\n", "bad.yaml:18: yaml: a second YAML document"},
		{"fault after the end", "{at: 1s, kind: failover", "{at: 3s, kind: failover", "bad.yaml:15: faults[0].at: 3s is after the end of the run (duration 2s)"},
		{"window after the end", "  - {at: 1s, kind: failover, group: m1}", "  - {kind: drop-replies, from: 2500ms, client: c1}",
			"bad.yaml:15: faults[0].from: 2.5s is after the end of the run (duration 2s)"},
		{"pause of 0", "  - {at: 1s, kind: failover, group: m1}", "  - {kind: pause, at: 1s, client: c1, for: 0s}", "bad.yaml:15: faults[0].for: must be positive"},
		{"clock jump by 0", "  - {at: 1s, kind: failover, group: m1}", "  - {kind: clock-jump, at: 1s, node: m1, by: 0s}", "bad.yaml:15: faults[0].by: must not be 0"},
		{"link fault with p 0", "  - {at: 1s, kind: failover, group: m1}", "  - {kind: drop-requests, client: c1, p: 0}", "bad.yaml:15: faults[0].p: must be above 0"},
		{"total clients", "  - {count: 2, retry: go-redis, timeout: 500ms}\n", many(200, 1000),
			"bad.yaml:11: clients[1].count: 2000 clients in all with this entry's 1000: more than the 1000"},
		{"total nodes", "        - {name: r1, lag: {kind: uniform, min: 1ms, max: 5ms}}\n", replicas(100),
			"bad.yaml:107: topology.nodes[0].replicas[99].name: node 101: more than the 100 masters and replicas"},
		{"total clients by name", "  - {count: 2, retry: go-redis, timeout: 500ms}\n", "  - {count: 1000}\n  - {name: one}\n",
			"bad.yaml:11: clients[1].name: client 1001: more than the 1000"},
		{"duplicate name", "  - {count: 2, retry: go-redis, timeout: 500ms}\n", "  - {count: 2}\n  - {name: m1}\n",
			"bad.yaml:11: clients[1].name: name \"m1\" already used by a node"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.old) {
				t.Fatalf("%q not in good", c.old)
			}
			start := time.Now()
			_, err := Parse("bad.yaml", []byte(strings.Replace(good, c.old, c.new, 1)))
			var e *Error
			if !errors.As(err, &e) || errors.Is(err, ErrInternal) {
				t.Fatalf("got %T %v, want an *Error for bad input", err, err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error\n  %v\nwant prefix\n  %s", err, c.want)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %v", d) // 200,000 clients took minutes when the check was quadratic
			}
		})
	}
	// At the limits: 1000 clients in all, a fault at the very end.
	s, err := Parse("ok.yaml", []byte(strings.Replace(strings.Replace(good, "  - {count: 2, retry: go-redis, timeout: 500ms}\n",
		"  - {count: 999}\n  - {name: last}\n", 1), "{at: 1s, kind: failover", "{at: 2s, kind: failover", 1)))
	if err != nil || len(s.Clients) != MaxClients {
		t.Fatalf("1000 clients, a fault at the end: %v", err)
	}
	// 100 nodes: a master and 99 replicas.
	s, err = Parse("ok.yaml", []byte(strings.Replace(good, "        - {name: r1, lag: {kind: uniform, min: 1ms, max: 5ms}}\n", replicas(99), 1)))
	if err != nil || s.nodeCount() != MaxNodes {
		t.Fatalf("100 nodes: %v", err)
	}
}

// TestFileSize: a file above MaxFileSize is refused with its size, by Parse
// and by Load (which reads no more than the limit).
func TestFileSize(t *testing.T) {
	big := []byte(good + "#" + strings.Repeat("x", MaxFileSize) + "\n")
	if _, err := Parse("big.yaml", big); err == nil || !strings.HasPrefix(err.Error(), "big.yaml: ") || !strings.Contains(err.Error(), "larger than the 1048576 bytes") {
		t.Fatalf("Parse: %v", err)
	}
	p := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(p, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Load: %v", err)
	}
	if _, err := Parse("ok.yaml", []byte(good+"#"+strings.Repeat("x", MaxFileSize-len(good)-2)+"\n")); err != nil {
		t.Fatalf("a file of exactly the limit: %v", err)
	}
}

// TestNotRegular: a named pipe called *.yaml, on its own or in a directory,
// is an error at once; reading it blocked forever before.
func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "b.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for name, load := range map[string]func() error{
		"Load":        func() error { _, err := Load(fifo); return err },
		"LoadScaled":  func() error { _, err := LoadScaled(fifo, 0.5); return err },
		"LoadDir":     func() error { _, err := LoadDir(dir); return err },
		"a directory": func() error { _, err := Load(dir); return err },
	} {
		done := make(chan error, 1)
		go func() { done <- load() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a") && !strings.Contains(err.Error(), "a directory") {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(20 * time.Second):
			// Unblock the reader (open for writing, close: end of file).
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				_ = f.Close()
			}
			<-done
			t.Errorf("%s: blocked reading a named pipe", name)
		}
	}
}

// checkParsed is what the fuzz targets assert of Parse's error: none, or
// an *Error naming the file, and never an internal one (a panic the
// loader recovered from is a bug, which the fuzzer must see).
func checkParsed(err error) error {
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrInternal):
		return fmt.Errorf("the loader panicked: %v", err)
	case !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "fuzz.yaml"):
		return fmt.Errorf("error %T does not name the file: %v", err, err)
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(line, "fuzz.yaml") {
			return fmt.Errorf("an error of several does not name the file: %q in\n%v", line, err)
		}
	}
	return nil
}

// TestPanicIsInternal: a panic in the loader is an internal error (it
// wraps ErrInternal; bad input does not), and the fuzz targets' check
// fails on it. Before, it was an *Error like any bad input, which the fuzz
// targets accepted.
func TestPanicIsInternal(t *testing.T) {
	parseHook = func(data []byte) {
		if strings.Contains(string(data), "boom") {
			panic("boom")
		}
	}
	defer func() { parseHook = nil }()
	_, err := Parse("fuzz.yaml", []byte("# boom\n"+good))
	var e *Error
	if !errors.As(err, &e) || !e.Internal || !errors.Is(err, ErrInternal) || !strings.HasPrefix(err.Error(), "fuzz.yaml: internal error") {
		t.Fatalf("got %v, want an internal *Error", err)
	}
	if checkParsed(err) == nil {
		t.Error("the fuzz targets' check accepts a recovered panic")
	}
	_, err = Parse("fuzz.yaml", []byte("nme: x\n"))
	if err == nil || errors.Is(err, ErrInternal) || checkParsed(err) != nil {
		t.Errorf("bad input: %v (internal: %v)", err, errors.Is(err, ErrInternal))
	}
}

// TestScaleTooLarge: a scale that takes a duration past the longest
// time.Duration is an error about the scale (it wrapped around to a
// negative duration: "duration: must be positive").
func TestScaleTooLarge(t *testing.T) {
	_, err := ParseScaled("big.yaml", []byte(good), 1e300)
	if err == nil || !strings.Contains(err.Error(), "big.yaml: 2s scaled would last past the longest duration") || strings.Contains(err.Error(), "must be positive") {
		t.Fatalf("scale 1e300: %v", err)
	}
}
