package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/locksim/locksim/checker"
)

// checkArgs are check's flags for a saved run of the scenario file: the
// model and options of its algorithm, and its duration as -end, which is
// what the run judged with.
func checkArgs(t *testing.T, file string) []string {
	t.Helper()
	all, _, err := loadScaled([]string{file}, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := all[0]
	args := []string{"-model", s.Algorithm.LockKind().String(), "-end", s.Duration.String()}
	for _, o := range s.Algorithm.LinOptions() {
		args = append(args, map[checker.LinOption]string{checker.AcquireMayFail: "-acquire-may-fail", checker.LeaseFromCall: "-lease-from-call"}[o])
	}
	return args
}

// TestCheckRejudgesSavedRuns: the history run -out saved, judged again by
// check with the run's model and end, gets the run's verdict, violation
// for violation (run -json's against check -json's): the violating
// scenarios (the control that must fail: exit 1 and their kinds, every
// oracle's among them) and the fault-free baselines (the control that must
// pass: exit 0, ok), across the simple, reentrant, fenced, read-write and
// RedLock models. Without -model, linearizability is left out and listed
// as not checked.
func TestCheckRejudgesSavedRuns(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		code int
	}{
		{"f0-failover-lagging-replica", 1},
		{"fenced-token-reuse-after-failover", 1},
		{"plain-del-after-expiry", 1},
		{"k3-redlock-clock-jump", 1},
		{"resurrected-lock-after-failover", 1},
		{"redisson-replicated-resent-acquire", 1},
		{"baseline-simple", 0},
		{"baseline-rwlock", 0},
		{"baseline-reentrant", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := "../../scenarios/" + c.name + ".yaml"
			code, out, errs := runCLI(t, "run", "-json", "-out", dir, file)
			if code != 0 {
				t.Fatalf("run: exit %d: %s", code, errs)
			}
			var ran jsonRun
			if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &ran); err != nil {
				t.Fatal(err)
			}
			hist := filepath.Join(dir, c.name+".jsonl")
			code, out, errs = runCLI(t, append(append([]string{"check", "-json"}, checkArgs(t, file)...), hist)...)
			var got jsonCheck
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("check: exit %d, %v: %q %s", code, err, out, errs)
			}
			if code != c.code || got.Verdict != ran.Verdict || !slices.Equal(got.Kinds, ran.Kinds) || got.Cleared != (c.code == 0) {
				t.Fatalf("check: exit %d (want %d), verdict %s %v, run's %s %v", code, c.code, got.Verdict, got.Kinds, ran.Verdict, ran.Kinds)
			}
			if c.code == 1 && len(got.Kinds) == 0 {
				t.Fatal("a violating scenario's history judged without a kind")
			}
			gv, _ := json.Marshal(got.Violations)
			rv, _ := json.Marshal(ran.Violations)
			if string(gv) != string(rv) || got.Timeline != ran.Timeline {
				t.Fatalf("violations differ:\ncheck %s\nrun   %s", gv, rv)
			}
			// Without the model: the same but linearizability, said so.
			code, out, _ = runCLI(t, "check", "-json", hist)
			var bare jsonCheck
			if err := json.Unmarshal([]byte(out), &bare); err != nil {
				t.Fatal(err)
			}
			want := slices.DeleteFunc(slices.Clone(ran.Kinds), func(k checker.Kind) bool { return k == checker.Linearizability || k == checker.FalseRefusal })
			if !slices.Equal(bare.Kinds, want) || (code == 0) != (len(want) == 0) ||
				!slices.ContainsFunc(bare.NotChecked, func(n notChecked) bool {
					return slices.Equal(n.Kinds, []checker.Kind{checker.Linearizability, checker.FalseRefusal})
				}) {
				t.Fatalf("without -model: exit %d, kinds %v (want %v), not checked %v", code, bare.Kinds, want, bare.NotChecked)
			}
		})
	}
}

// cleanLog is a history as a user's system could log it, lock calls
// only: api-1 takes orders for job-42 at 0 and releases it at 5 s; api-2
// is refused at once, takes it for job-43 at 5.5 s and releases it at
// 6.5 s. overlapLog is the same with api-2 taking it at 3 s, while api-1
// holds it.
const (
	cleanLog = `{"kind":"op","t":0,"end":2000000,"client":"api-1","lock":"orders","op":"acquire","args":["job-42"],"outcome":"ok","result":"tok-a1","detail":"lease=10s"}
{"kind":"op","t":1000000,"end":3000000,"client":"api-2","lock":"orders","op":"acquire","args":["job-43"],"outcome":"fail"}
{"kind":"op","t":5000000000,"end":5001000000,"client":"api-1","lock":"orders","op":"release","args":["job-42"],"outcome":"ok"}
{"kind":"op","t":5500000000,"end":5502000000,"client":"api-2","lock":"orders","op":"acquire","args":["job-43"],"outcome":"ok","result":"tok-b7","detail":"lease=10s"}
{"kind":"op","t":6500000000,"end":6501000000,"client":"api-2","lock":"orders","op":"release","args":["job-43"],"outcome":"ok"}
`
	overlapLog = `{"kind":"op","t":0,"end":2000000,"client":"api-1","lock":"orders","op":"acquire","args":["job-42"],"outcome":"ok","result":"tok-a1","detail":"lease=10s"}
{"kind":"op","t":1000000,"end":3000000,"client":"api-2","lock":"orders","op":"acquire","args":["job-43"],"outcome":"fail"}
{"kind":"op","t":3000000000,"end":3002000000,"client":"api-2","lock":"orders","op":"acquire","args":["job-43"],"outcome":"ok","result":"tok-b7","detail":"lease=10s"}
{"kind":"op","t":5000000000,"end":5001000000,"client":"api-1","lock":"orders","op":"release","args":["job-42"],"outcome":"ok"}
{"kind":"op","t":6500000000,"end":6501000000,"client":"api-2","lock":"orders","op":"release","args":["job-43"],"outcome":"ok"}
`
)

// TestCheckUserLogWithoutTruth: a log of lock calls alone, without node
// truth. Two overlapping holders (api-2 takes the lock at 3 s while api-1
// holds it until 5 s) are flagged, mutual exclusion, exit 1; the same log
// without the overlap (api-2 at 5.5 s) exits 0 with no violation (the
// control). Both list silent loss, the quorum held by down nodes,
// reentrancy, the leaked hold, a false refusal, unlock idempotency, the
// extend's answer and the resurrected lock as not checked
// for want of node truth, in the text and in JSON, and neither claims
// "ok".
func TestCheckUserLogWithoutTruth(t *testing.T) {
	dir := t.TempDir()
	overlap, clean := filepath.Join(dir, "overlap.jsonl"), filepath.Join(dir, "clean.jsonl")
	writeTree(t, dir, map[string]string{"overlap.jsonl": overlapLog, "clean.jsonl": cleanLog})
	truth := strings.Join([]string{string(checker.SilentLoss), string(checker.QuorumHeldByDown), string(checker.Reentrancy), string(checker.LeakedHold), string(checker.FalseRefusal), string(checker.UnlockIdempotency), string(checker.ExtendAnswer), string(checker.Resurrected)}, ", ")
	for _, c := range []struct {
		file, line string
		code       int
		kinds      []checker.Kind
	}{
		{overlap, "violated mutual-exclusion", 1, []checker.Kind{checker.MutualExclusion}},
		{clean, "unknown  (no violation found; not every kind could be checked, below)", 0, nil},
	} {
		code, out, errs := runCLI(t, "check", c.file)
		if code != c.code || !strings.Contains(out, c.line) || !strings.Contains(out, "not checked: "+truth+": no node truth in the history") ||
			strings.Contains(strings.SplitN(out, "\n", 2)[0], " ok") {
			t.Errorf("check %s: exit %d (want %d)\n%s%s", c.file, code, c.code, out, errs)
		}
		code, out, _ = runCLI(t, "check", "-json", "-model", "reentrant", c.file)
		var got jsonCheck
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if c.code == 1 {
			c.kinds = append([]checker.Kind{checker.Linearizability}, c.kinds...)
		}
		if code != c.code || !slices.Equal(got.Kinds, c.kinds) || got.Verdict == "ok" || got.Cleared != (c.code == 0) ||
			len(got.NotChecked) != 2 || !slices.Equal(got.NotChecked[0].Kinds, checker.TruthKinds()) {
			t.Errorf("check -json %s: exit %d, %+v", c.file, code, got)
		}
	}
}

// TestCheckLogOfALockNeverHeld: a log whose every acquire ended in an
// error (the lock never held) is not cleared: its verdict is unknown, the
// line says the lock was never held, its note names the first error, and
// the exit status is 1. The clean log of TestCheckUserLogWithoutTruth,
// whose lock was held, exits 0 (the control).
func TestCheckLogOfALockNeverHeld(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"never.jsonl": `{"kind":"op","t":0,"end":2000000,"client":"api-1","lock":"orders","op":"acquire","args":["job-42"],"outcome":"error","result":"ERR wrong number of arguments"}
{"kind":"op","t":1000000,"end":3000000,"client":"api-2","lock":"orders","op":"acquire","args":["job-43"],"outcome":"error","result":"ERR wrong number of arguments"}
`})
	code, out, errs := runCLI(t, "check", filepath.Join(dir, "never.jsonl"))
	for _, want := range []string{"unknown  (the lock was never held: see the note)",
		"lock orders never held: none of the 2 acquires succeeded, 2 ended in an error (the first, api-1/job-42's at 0s: ERR wrong number of arguments)"} {
		if !strings.Contains(out, want) {
			t.Errorf("check says no %q:\n%s%s", want, out, errs)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

// TestCheckBadInput: a bad line is refused naming the file, the line and
// the field, exit 2, and nothing is written under -out, not even for the
// good history given before it; so are a file that is not a regular file,
// two histories that would write the same files, an -end before the
// history's end, and bad flags.
func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	good := cleanLog
	writeTree(t, dir, map[string]string{
		"good.jsonl":          good,
		"unknown-kind.jsonl":  strings.Replace(good, `"kind":"op","t":1000000`, `"kind":"lock","t":1000000`, 1),
		"no-client.jsonl":     strings.Replace(good, `"client":"api-2",`, ``, 1),
		"no-return.jsonl":     strings.Replace(good, `"end":3000000,`, ``, 1),
		"early-return.jsonl":  strings.Replace(good, `"end":3000000`, `"end":999999`, 1),
		"bad-lease.jsonl":     strings.Replace(good, `lease=10s`, `lease=ten`, 1),
		"bad-number.jsonl":    strings.Replace(good, `"t":1000000`, `"t":"1ms"`, 1),
		"duplicate-seq.jsonl": `{"seq":1,"kind":"node","t":0,"node":"m1","op":"master","value":"m1"}` + "\n" + strings.ReplaceAll(good, `{"kind"`, `{"seq":1,"kind"`),
		"other/good.jsonl":    good,
	})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{in("good.jsonl"), in("unknown-kind.jsonl")}, in("unknown-kind.jsonl") + `:2: kind: unknown kind "lock"`},
		{[]string{in("no-client.jsonl")}, in("no-client.jsonl") + `:2: client: missing`},
		{[]string{in("no-return.jsonl")}, in("no-return.jsonl") + `:2: end: missing`},
		{[]string{in("early-return.jsonl")}, in("early-return.jsonl") + `:2: end: 999999 returns before its call (t 1000000)`},
		{[]string{in("bad-lease.jsonl")}, in("bad-lease.jsonl") + `:1: detail: lease=ten: bad duration`},
		{[]string{in("bad-number.jsonl")}, in("bad-number.jsonl") + `:2: t: want a whole number of nanoseconds`},
		{[]string{in("duplicate-seq.jsonl")}, in("duplicate-seq.jsonl") + `:2: seq: 1 again (line 1 has it)`},
		{[]string{in("fifo.jsonl")}, in("fifo.jsonl") + `: a named pipe (FIFO), not a regular file`},
		{[]string{dir}, dir + `: a directory, not a regular file`},
		{[]string{in("missing.jsonl")}, "no such file"},
		{[]string{in("good.jsonl"), in("other/good.jsonl")}, "would both write good.*"},
		{[]string{"-end", "1s", in("good.jsonl")}, "-end 1s is before the history's last call, return or run, at 6.501s"},
		{[]string{"-model", "mutex", in("good.jsonl")}, `unknown -model "mutex"`},
		{[]string{"-acquire-may-fail", in("good.jsonl")}, "give -model"},
		{nil, "no history given"},
	} {
		out := filepath.Join(dir, "out")
		code, stdout, errs := runCLI(t, append([]string{"check", "-out", out}, c.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(errs, c.want) {
			t.Errorf("check %v: exit %d, stdout %q, stderr %q (want %q)", c.args, code, stdout, errs, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("check %v: wrote %s", c.args, out)
		}
	}
	// The control: the good history alone is judged and its files written.
	out := filepath.Join(dir, "out")
	if code, _, errs := runCLI(t, "check", "-model", "reentrant", "-out", out, in("good.jsonl")); code != 0 {
		t.Fatalf("good history: exit %d: %s", code, errs)
	}
	for _, suf := range checkSuffixes {
		if _, err := os.Stat(filepath.Join(out, "good"+suf)); err != nil {
			t.Errorf("good history: %v", err)
		}
	}
	// Without -model no Porcupine page is written, and the verdict file
	// says why, where a reader of the directory looks for the page.
	bare := filepath.Join(dir, "bare")
	if code, _, errs := runCLI(t, "check", "-out", bare, in("good.jsonl")); code != 0 {
		t.Fatalf("good history without -model: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(bare, "good.porcupine.html")); err == nil {
		t.Error("without -model: a Porcupine page was written")
	}
	verdict, err := os.ReadFile(filepath.Join(bare, "good.verdict.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(verdict), "linearizability not checked, so no Porcupine page: ") {
		t.Errorf("without -model: the verdict file does not say why it has no Porcupine page:\n%s", verdict)
	}
}

// docBlock is the fenced block that follows marker in the text.
func docBlock(t *testing.T, text, marker string) string {
	t.Helper()
	_, after, ok := strings.Cut(text, marker+"\n```")
	if !ok {
		t.Fatalf("no %q followed by a fenced block", marker)
	}
	_, after, _ = strings.Cut(after, "\n")
	block, _, ok := strings.Cut(after, "```\n")
	if !ok {
		t.Fatalf("the block after %q does not end", marker)
	}
	return block
}

// TestCheckDocExample: the example history of docs/json-schema.md
// ("Judging your own history") is read and judged as the page says: exit
// 0 and the output printed there, byte for byte; and the variant it
// describes (api-2's acquire at 3 s, while api-1 holds the lock) is
// violated linearizability and mutual exclusion, exit 1 (the control).
func TestCheckDocExample(t *testing.T) {
	page, err := os.ReadFile("../../docs/json-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	example := docBlock(t, string(page), "<!-- check example: orders.jsonl -->")
	want := docBlock(t, string(page), "<!-- check example output -->")
	dir := t.TempDir()
	t.Chdir(dir)
	lines := strings.Split(strings.TrimSuffix(example, "\n"), "\n")
	if len(lines) < 6 || len(lines) > 10 {
		t.Fatalf("the example has %d lines", len(lines))
	}
	writeTree(t, dir, map[string]string{"orders.jsonl": example})
	code, out, errs := runCLI(t, "check", "-model", "reentrant", "orders.jsonl")
	if code != 0 || out != want {
		t.Fatalf("exit %d, stderr %q, output:\n%s\nthe page says:\n%s", code, errs, out, want)
	}
	i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `"t":5500000000,"end":5502000000`) })
	moved := strings.Replace(lines[i], `"t":5500000000,"end":5502000000`, `"t":3000000000,"end":3002000000`, 1)
	lines = slices.Insert(slices.Delete(lines, i, i+1), 3, moved)
	writeTree(t, dir, map[string]string{"overlap.jsonl": strings.Join(lines, "\n") + "\n"})
	code, out, errs = runCLI(t, "check", "-model", "reentrant", "overlap.jsonl")
	if code != 1 || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "violated linearizability, mutual-exclusion") {
		t.Fatalf("the variant: exit %d, stderr %q, output:\n%s", code, errs, out)
	}
}

// TestCheckRefusesLargeHistories: a history file larger than
// maxHistoryBytes (lowered here) is refused unread, exit 2, naming its
// size; one that grows past it while read is refused when the read gets
// there (capped); a file within the limit is judged (the control).
func TestCheckRefusesLargeHistories(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"log.jsonl": cleanLog})
	file := filepath.Join(dir, "log.jsonl")
	old := maxHistoryBytes
	defer func() { maxHistoryBytes = old }()
	maxHistoryBytes = int64(len(cleanLog))
	if code, _, errs := runCLI(t, "check", file); code != 0 {
		t.Fatalf("a history of the limit's size: exit %d: %s", code, errs)
	}
	maxHistoryBytes--
	code, _, errs := runCLI(t, "check", file)
	if want := fmt.Sprintf("%s: %d bytes (or more): larger than the %d bytes a history may have", file, len(cleanLog), maxHistoryBytes); code != 2 || !strings.Contains(errs, want) {
		t.Fatalf("a history one byte over: exit %d, %q", code, errs)
	}
	c := &capped{r: strings.NewReader(cleanLog), left: maxHistoryBytes, file: file}
	if _, err := io.ReadAll(c); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("read past the limit: %v", err)
	}
}

// TestCheckReadsWhatRunWrites: a fair lock's queue of 8 waiters whose
// owner has a name of 10,000 bytes is recorded in truth lines of about
// 80 KB (each copies the whole queue), which check once refused as
// longer than a record's line could be; check judges the history run
// -out wrote, and gives the verdict run gave.
func TestCheckReadsWhatRunWrites(t *testing.T) {
	dir := t.TempDir()
	yaml := `name: long-queue
seed: 1
duration: 3s
topology:
  nodes:
    - name: m1
clients:
  - {count: 8}
algorithm:
  kind: fair
  owners: [` + strings.Repeat("o", 10000) + `]
  wait: 5s
  hold: 1s
  think: 100ms
expect: ok
`
	writeTree(t, dir, map[string]string{"long-queue.yaml": yaml})
	out := filepath.Join(dir, "out")
	if code, stdout, errs := runCLI(t, "run", "-out", out, filepath.Join(dir, "long-queue.yaml")); code != 0 {
		t.Fatalf("run: exit %d: %s%s", code, stdout, errs)
	}
	hist := filepath.Join(out, "long-queue.jsonl")
	b, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	longest := 0
	for _, l := range strings.Split(string(b), "\n") {
		longest = max(longest, len(l))
	}
	if longest < 64<<10 {
		t.Fatalf("the longest line is %d bytes: want the queue's over 64 KiB", longest)
	}
	code, stdout, errs := runCLI(t, "check", "-model", "reentrant", hist)
	if code != 0 || !strings.Contains(stdout, " ok") {
		t.Fatalf("check: exit %d: %s%s", code, stdout, errs)
	}
}
