package main

// simulate check: judge a history that was saved (run -out), recorded on
// real servers, or written by the user's own system from its logs.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// checkSchema names check -json's objects (docs/json-schema.md).
const checkSchema = "locksim.check/v1"

// maxHistoryBytes is the largest history file check reads. A history is
// held in memory and judged whole, as a run's is, so its weight is
// bounded by scenario.MaxRecords (history.Weight: its records and the
// collection members they hold); a record as run -out writes it takes
// about 170 bytes, a member of a short name about 20, so 1 GiB holds the
// largest history a run may record about twice over (a run's members of
// names over 40 bytes may not fit), and a larger file is refused before
// it is read (and, should it grow meanwhile, when the read reaches the
// limit). A test lowers it.
var maxHistoryBytes int64 = 1 << 30

// checkModels are -model's names: the checker's lock models, fenced being
// the reentrant model (the fencing oracle judges any history's tokens).
var checkModels = map[string]checker.LockKind{
	"simple":     checker.LockSimple,
	"reentrant":  checker.LockReentrant,
	"fenced":     checker.LockReentrant,
	"read-write": checker.LockReadWrite,
	"rwlock":     checker.LockReadWrite,
}

// checkFlags are check's flags and files.
type checkFlags struct {
	model              string
	mayFail, fromCall  bool
	liveness, end      time.Duration
	out                string
	asJSON             bool
	files              []string
	kind               checker.LockKind
	opts               []checker.LinOption
	outNames, outPaths []string // -out: each file's NAME, and every file written
}

// parseCheck parses check's flags and checks them; ok is false when check
// must stop with status (0 after -h, 2 for bad input, reported on stderr).
func parseCheck(args []string, stdout, stderr io.Writer) (f checkFlags, status int, ok bool) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.StringVar(&f.model, "model", "", "check linearizability against this lock model: simple, reentrant, fenced (the reentrant model) or read-write (rwlock); default none: a history does not name its model")
	fs.BoolVar(&f.mayFail, "acquire-may-fail", false, "with -model: a refused acquire is legal even when the lock was free (RedLock, a synced acquire)")
	fs.BoolVar(&f.fromCall, "lease-from-call", false, "with -model: a lease counts from the acquire's call (the spec's RedLock)")
	fs.DurationVar(&f.liveness, "liveness", 0, "flag a lock left free longer than this while clients wait for it (default: no liveness check)")
	fs.DurationVar(&f.end, "end", 0, "the time the history ran until: holdings and waits still open end there (default: its last call, return or run)")
	fs.StringVar(&f.out, "out", "", "write each history's verdict, timeline plot and (with -model) Porcupine visualization into this directory, as run -out does")
	fs.BoolVar(&f.asJSON, "json", false, "print a JSON line per history (schema "+checkSchema+", docs/json-schema.md)")
	files, status, ok := parseFlags(fs, "simulate check [FLAGS] FILE.jsonl ...   (flags may follow the files)",
		"Judges histories of JSON lines: saved by run -out, recorded on real servers, or written from\n"+
			"your own system's logs (docs/json-schema.md, \"Judging your own history\"). Exit status: 0 no\n"+
			"violation, 1 a violation (or a check that gave up within its budget, or a lock never held or\n"+
			"never released: every answered acquire or release ended in an error), 2 bad input, 3 internal\n"+
			"error, 130 interrupted.",
		args, stdout, stderr)
	if !ok {
		return f, status, false
	}
	f.files = files
	if msg := f.bad(); msg != "" {
		fmt.Fprintln(stderr, "simulate check: "+msg)
		return f, 2, false
	}
	return f, 0, true
}

// bad says what is wrong with the flags, "" if nothing, and sets the
// model they name.
func (f *checkFlags) bad() string {
	switch {
	case len(f.files) == 0:
		return "no history given (simulate check [FLAGS] FILE.jsonl ...)"
	case f.liveness < 0:
		return fmt.Sprintf("-liveness %v is negative", f.liveness)
	case f.end < 0:
		return fmt.Sprintf("-end %v is negative", f.end)
	case f.model == "" && (f.mayFail || f.fromCall):
		return "-acquire-may-fail and -lease-from-call adjust a model: give -model"
	}
	if f.model != "" {
		k, ok := checkModels[f.model]
		if !ok {
			return fmt.Sprintf("unknown -model %q (want simple, reentrant, fenced, read-write or rwlock)", f.model)
		}
		f.kind = k
	}
	if f.mayFail {
		f.opts = append(f.opts, checker.AcquireMayFail)
	}
	if f.fromCall {
		f.opts = append(f.opts, checker.LeaseFromCall)
	}
	return ""
}

// checkCmd judges each history file (simulate check): it reads and
// validates every file first, and checks -out, so that bad input (a bad
// line, named with its line and field; an output that cannot be written)
// stops it, status 2, before anything is judged or written; then it reads
// each file again, judges it (checker.Judge, under the flags' model and
// bounds and the default budget) and prints its verdict, one file at a
// time, so that only one history is held at once. Exit status: 0 when
// every verdict is cleared (no violation; the kinds a history has no
// records for are listed as not checked), 1 when one found a violation or
// gave up within its budget, 2 bad input, 3 an internal error,
// exitInterrupted after Ctrl-C (no further file is judged).
func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, status, ok := parseCheck(args, stdout, stderr)
	if !ok {
		return status
	}
	for _, file := range f.files {
		var last time.Duration
		if _, err := scanHistory(file, func(r history.Record) error { last = max(last, lastOf(&r)); return nil }); err != nil {
			fmt.Fprintf(stderr, "simulate check: %v\n", err)
			return 2
		}
		if f.end > 0 && f.end < last {
			fmt.Fprintf(stderr, "simulate check: %s: -end %v is before the history's last call, return or run, at %v\n", file, f.end, last)
			return 2
		}
	}
	if f.out != "" {
		if err := f.checkOut(); err != nil {
			fmt.Fprintf(stderr, "simulate check: %v\n", err)
			return 2
		}
	}
	enc := jsonLines(stdout)
	for i, file := range f.files {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "simulate check: interrupted: %d of %d histories judged\n", i, len(f.files))
			return exitInterrupted
		}
		var recs []history.Record
		if _, err := scanHistory(file, func(r history.Record) error { recs = append(recs, r); return nil }); err != nil {
			fmt.Fprintf(stderr, "simulate check: %v (it changed since it was read)\n", err)
			return 2
		}
		code, err := f.judge(file, recs, i, stdout, enc)
		if err != nil {
			fmt.Fprintf(stderr, "simulate check: %v\n", err)
			return 2
		}
		status = max(status, code)
	}
	return status
}

// scanHistory reads the history in file (history.ScanJSONL), calling fn
// with each record: a regular file only (sweep.OpenRegular), of at most
// maxHistoryBytes and a weight of scenario.MaxRecords records.
func scanHistory(file string, fn func(history.Record) error) (int, error) {
	h, st, err := sweep.OpenRegular(file, "a history is a file of JSON lines")
	if err != nil {
		return 0, err
	}
	defer h.Close()
	if st.Size() > maxHistoryBytes {
		return 0, historyTooLarge(file, st.Size())
	}
	return history.ScanJSONL(&capped{r: h, left: maxHistoryBytes, file: file}, file, scenario.MaxRecords, fn)
}

// capped reads r until left bytes are read, then fails: a file that grew
// past maxHistoryBytes after its size was read is refused when the read
// reaches the limit.
type capped struct {
	r    io.Reader
	left int64
	file string
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, historyTooLarge(c.file, maxHistoryBytes+1)
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// historyTooLarge is the error of a history file of size bytes, above
// maxHistoryBytes.
func historyTooLarge(file string, size int64) error {
	return fmt.Errorf("%s: %d bytes (or more): larger than the %d bytes a history may have", file, size, maxHistoryBytes)
}

// checkOut checks -out before anything is judged: every history's files
// (dir/NAME.*, NAME the file's name without .jsonl) can be written, no
// two histories have one NAME, and no file written is one of the files
// read.
func (f *checkFlags) checkOut() error {
	if err := checkWritableDir(f.out); err != nil {
		return fmt.Errorf("-out %s: %w", f.out, err)
	}
	owner := map[string]string{}
	for _, file := range f.files {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(file), ".jsonl"), ".json")
		if o, dup := owner[name]; dup {
			return fmt.Errorf("-out %s: %s and %s would both write %s.*: judge them into two directories, or rename one; nothing was judged or written", f.out, o, file, name)
		}
		owner[name] = file
		if err := checkReplaceable("-out", f.out, name, name, checkSuffixes); err != nil {
			return err
		}
		f.outNames = append(f.outNames, name)
		for _, suf := range checkSuffixes {
			f.outPaths = append(f.outPaths, filepath.Join(f.out, name+suf))
		}
	}
	for _, p := range f.outPaths {
		out, err := os.Stat(p)
		if err != nil {
			continue // nothing there yet: no input can be it
		}
		for _, file := range f.files {
			if in, err := os.Stat(file); err == nil && os.SameFile(in, out) {
				return fmt.Errorf("-out %s: %s is the history %s, which writing it would replace; nothing was judged or written", f.out, p, file)
			}
		}
	}
	return nil
}

// checkSuffixes are the suffixes of the files check -out writes for a
// history, after its name: run -out's but the history itself (writeFiles).
var checkSuffixes = slices.DeleteFunc(slices.Clone(runOutputs), func(s string) bool { return s == ".jsonl" })

// judge judges one history (the i-th file), prints its verdict and, with
// -out, writes its files; it returns the exit status the verdict calls
// for (0 cleared, 1 not).
func (f *checkFlags) judge(file string, recs []history.Record, i int, stdout io.Writer, enc *json.Encoder) (int, error) {
	end := f.end
	if end == 0 {
		for i := range recs {
			end = max(end, lastOf(&recs[i]))
		}
	}
	bud := checker.Budget{Wall: scenario.LinTimeout}
	v := checker.Judge(recs, checker.Config{Model: f.kind, LinOptions: f.opts, End: end, Budget: bud, Liveness: f.liveness,
		Queues: checker.QueuesIn(recs)})
	j := checkJudged{file: file, records: len(recs), end: end, model: f.model, v: v, unchecked: f.unchecked(v),
		timeline: report.Text(recs, v, 500*time.Millisecond, 24)}
	j.write(stdout, enc, f.asJSON)
	if f.out != "" {
		rf := runFiles{Base: filepath.Join(f.out, f.outNames[i]), Title: filepath.Base(file), XLabel: "time since the history's start (s)",
			Records: recs, End: end, Head: j.head(), Verdict: v, Model: f.kind, Opts: f.opts, Budget: bud, Stderr: io.Discard}
		if f.kind == 0 {
			rf.NoModel = noModel
		}
		if err := writeFiles(rf); err != nil {
			return 0, err
		}
	}
	if !v.Cleared() {
		return 1, nil
	}
	return 0, nil
}

// noModel says why a history's linearizability was not checked.
const noModel = "no -model given (a history does not name its lock's model: give -model simple, reentrant, fenced or read-write)"

// notChecked is a group of kinds a verdict could not judge, and why.
type notChecked struct {
	Kinds  []checker.Kind `json:"kinds"`
	Reason string         `json:"reason"`
}

// unchecked lists what v could not judge: the kinds whose records the
// history lacks (node truth), linearizability without -model, liveness
// without -liveness.
func (f *checkFlags) unchecked(v checker.Verdict) []notChecked {
	var out []notChecked
	if len(v.Unchecked) > 0 {
		out = append(out, notChecked{v.Unchecked, "no node truth in the history (these oracles compare what clients believed and were told with what the nodes held, which truth records state)"})
	}
	if f.kind == 0 {
		// A false refusal is told apart from a linearizability finding by
		// the truth too: without it, it is listed there already.
		ks := []checker.Kind{checker.Linearizability}
		if !slices.Contains(v.Unchecked, checker.FalseRefusal) {
			ks = append(ks, checker.FalseRefusal)
		}
		out = append(out, notChecked{ks, noModel})
	}
	if f.liveness == 0 {
		out = append(out, notChecked{[]checker.Kind{checker.Liveness}, "no -liveness bound given"})
	}
	return out
}

// lastOf is the last instant r shows: its call, return or last run.
func lastOf(r *history.Record) time.Duration {
	last := r.T
	if r.End != nil {
		last = max(last, *r.End)
	}
	for _, a := range r.Applied {
		last = max(last, a)
	}
	return time.Duration(last)
}

// checkJudged is one history's verdict as check prints it.
type checkJudged struct {
	file      string
	records   int
	end       time.Duration
	model     string
	v         checker.Verdict
	unchecked []notChecked
	timeline  string
}

// jsonCheck is check -json's object for one history (docs/json-schema.md).
type jsonCheck struct {
	Schema     string              `json:"schema"`
	Type       string              `json:"type"`
	File       string              `json:"file"`
	Records    int                 `json:"records"`
	EndNS      int64               `json:"end_ns"`
	Model      string              `json:"model"`
	Verdict    string              `json:"verdict"`
	Cleared    bool                `json:"cleared"`
	Kinds      []checker.Kind      `json:"kinds"`
	Violations []checker.Violation `json:"violations"`
	NotChecked []notChecked        `json:"not_checked"`
	Notes      []string            `json:"notes"`
	Timeline   string              `json:"timeline"`
}

// notes are the verdict's notes but NoTruthNote, which the not-checked
// list says.
func (j checkJudged) notes() []string {
	return slices.DeleteFunc(slices.Clone(j.v.Notes), func(n string) bool { return n == checker.NoTruthNote })
}

// mark says what the verdict means for the exit status, after the
// verdict line.
func (j checkJudged) mark() string {
	switch {
	case len(j.v.Violations) > 0:
		return ""
	case j.v.NeverHeld:
		return "  (the lock was never held: see the note)"
	case j.v.NeverReleased:
		return "  (the lock was never released: see the note)"
	case !j.v.Cleared():
		return "  (a check gave up within its budget: see its note)"
	case len(j.v.Unchecked) > 0:
		return "  (no violation found; not every kind could be checked, below)"
	}
	return ""
}

func (j checkJudged) write(w io.Writer, enc *json.Encoder, asJSON bool) {
	if asJSON {
		_ = enc.Encode(jsonCheck{Schema: checkSchema, Type: "check", File: j.file, Records: j.records, EndNS: int64(j.end), Model: j.model,
			Verdict: j.v.Status.String(), Cleared: j.v.Cleared(), Kinds: orEmpty(j.v.Kinds()), Violations: orEmpty(j.v.Violations),
			NotChecked: orEmpty(j.unchecked), Notes: orEmpty(j.notes()), Timeline: j.timeline})
		return
	}
	fmt.Fprintf(w, "%-40s %7d records  %s%s\n", j.file, j.records, verdictLine(j.v), j.mark())
	for _, line := range report.Findings(j.v.Violations, "-json prints them all") {
		fmt.Fprintf(w, "    %s\n", line)
	}
	if j.timeline != "" {
		for _, line := range strings.SplitAfter(strings.TrimSuffix(j.timeline, "\n"), "\n") {
			fmt.Fprintf(w, "    %s", line)
		}
		fmt.Fprintln(w)
	}
	for _, u := range j.unchecked {
		fmt.Fprintf(w, "    not checked: %s: %s\n", kindList(u.Kinds), u.Reason)
	}
	for _, n := range j.notes() {
		fmt.Fprintf(w, "    note: %s\n", n)
	}
}

// head opens the history's verdict file (-out): the file, its size and
// end, the verdict and what was not checked.
func (j checkJudged) head() string {
	var b strings.Builder
	v := j.v
	v.Notes = j.notes()
	fmt.Fprintf(&b, "history: %s (%d records, judged until %v)\nverdict: %s", j.file, j.records, j.end, v)
	if m := j.mark(); m != "" {
		b.WriteString(strings.TrimSpace(m) + "\n")
	}
	for _, u := range j.unchecked {
		if u.Kinds[0] != checker.Linearizability { // writeFiles says it
			fmt.Fprintf(&b, "not checked: %s: %s\n", kindList(u.Kinds), u.Reason)
		}
	}
	return b.String()
}

// kindList is ks joined by ", ".
func kindList(ks []checker.Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
