package main

// simulate agree: does the simulation say what real servers say? Every
// scenario file runs in the simulation (its own seed, or its sweep for a
// rate expectation) and, where real servers can reproduce it, on real
// redis-server processes; the table gives both verdicts and whether they
// agree, which means both give the file's expected verdict (the file says
// what the scenario must show; extra kinds beyond it do not count), the
// file's own note (why a real replay differs, or what it needs), and the
// reason where a file cannot run for real.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/locksim/locksim/internal/realrun"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// agreeFlags are agree's flags and paths.
type agreeFlags struct {
	scale    float64
	attempts int
	out      string
	readme   string
	quiet    bool
	workers  int
	paths    []string
}

// maxAttempts is the most real runs agree makes of one file: each takes
// the file's duration in real time, and a file that does not give its
// verdict in this many will not.
const maxAttempts = 100

// Markers around the table that -readme replaces.
const (
	agreeBegin = "<!-- simulate agree: begin -->"
	agreeEnd   = "<!-- simulate agree: end -->"
)

func parseAgree(args []string, stdout, stderr io.Writer) (f agreeFlags, status int, ok bool) {
	fs := flag.NewFlagSet("agree", flag.ContinueOnError)
	fs.Float64Var(&f.scale, "scale", 0.2, "multiply the durations of a file without its own real.scale by this for the real run")
	fs.IntVar(&f.attempts, "attempts", 3, "real runs of a file until one gives the expected verdict (real time, not the seed, decides what a fault hits)")
	fs.StringVar(&f.out, "out", "", "write the table (Markdown) into this file instead of stdout")
	fs.StringVar(&f.readme, "readme", "", "also replace the table between the "+agreeBegin+" and "+agreeEnd+" lines of this file")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fs.IntVar(&f.workers, "workers", sweep.DefaultWorkers(), "simulated runs of a rate sweep at once (real runs go one at a time)")
	paths, status, ok := parseFlags(fs, "simulate agree [FLAGS] [FILE|DIR|NAME ...]   (flags may follow the files)",
		"Runs every scenario (default: the built-in scenarios/) in the simulation and, where real servers\n"+
			"can reproduce it, on real redis-server processes, and prints a Markdown table of both verdicts\n"+
			"and whether they agree. Exit status: 0 the table was written, 2 bad input, 3 internal error, 130 interrupted.",
		args, stdout, stderr)
	if !ok {
		return f, status, false
	}
	f.paths = paths
	msg := scaleBad(f.scale)
	switch {
	case msg != "":
	case f.attempts < 1 || f.attempts > maxAttempts:
		msg = fmt.Sprintf("-attempts %d: want 1 to %d", f.attempts, maxAttempts)
	default:
		msg = workersBad(f.workers)
	}
	if msg != "" {
		fmt.Fprintf(stderr, "simulate: agree: %s\n", msg)
		return f, 2, false
	}
	return f, 0, true
}

// agreeRow is one scenario's line of the table.
type agreeRow struct {
	s *scenario.Scenario
	// sim is the simulated verdict, simMatch whether it is the file's
	// expectation.
	sim      string
	simMatch bool
	// real is the real verdict ("" when refused: refused says why);
	// realMatch whether it is the file's expectation, in attempt tries of
	// scale.
	real      string
	realMatch bool
	refused   string
	attempt   int
	scale     float64
}

// checkAgreeTargets checks agree's outputs before anything runs: the
// -readme file holds the table's markers; -out is not the -readme file
// (it writes the table alone, over the text around the markers that
// -readme keeps); neither is one of the scenario files read; and -out
// can be written.
func checkAgreeTargets(f agreeFlags, all []*scenario.Scenario) error {
	if f.readme != "" {
		if _, err := spliceAgree(f.readme, ""); err != nil {
			return err
		}
	}
	if f.out != "" && f.readme != "" {
		if in, err := os.Stat(f.readme); err == nil {
			if out, err := os.Stat(f.out); err == nil && os.SameFile(in, out) {
				return fmt.Errorf("-out %s: is the -readme file, whose text around the table writing the table alone would replace; give one of them, or two files; nothing was run or written", f.out)
			}
		}
	}
	for _, o := range []struct{ flag, path string }{{"-out", f.out}, {"-readme", f.readme}} {
		if o.path == "" {
			continue
		}
		err := checkNotInput(o.flag, o.path, all)
		if err == nil && o.flag == "-out" {
			err = checkOutputFile(o.flag, o.path)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// agree is the agree command.
func agree(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, status, ok := parseAgree(args, stdout, stderr)
	if !ok {
		return status
	}
	all, origins, err := loadScaled(f.paths, 1)
	if err != nil {
		return loadFailed(err, stderr)
	}
	// Check the targets before hours of runs, not after.
	if err := checkAgreeTargets(f, all); err != nil {
		fmt.Fprintf(stderr, "simulate: agree: %v\n", err)
		return 2
	}
	var rows []agreeRow
	for i, s := range all {
		if ctx.Err() != nil {
			break
		}
		if !f.quiet {
			fmt.Fprintf(stderr, "agree: %d/%d %s\n", i+1, len(all), s.Name)
		}
		row, code := agreeOne(ctx, f, s, origins[i].builtin, stderr)
		if code == exitInterrupted {
			break
		}
		if code != 0 {
			return code
		}
		rows = append(rows, row)
	}
	if ctx.Err() != nil {
		// What completed is printed; the files are not written: a table
		// with rows missing is not the table.
		writeAgreeTable(stdout, rows, f.scale, f.attempts)
		fmt.Fprintf(stderr, "simulate: interrupted: %d of %d scenarios compared (their rows are printed above); no file written\n", len(rows), len(all))
		return exitInterrupted
	}
	var b bytes.Buffer
	writeAgreeTable(&b, rows, f.scale, f.attempts)
	if f.readme != "" {
		if _, err := spliceAgree(f.readme, b.String()); err != nil {
			fmt.Fprintf(stderr, "simulate: agree: %v\n", err)
			return 2
		}
	}
	if f.out == "" {
		_, _ = stdout.Write(b.Bytes())
		return 0
	}
	if err := report.WriteFile(f.out, b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "simulate: agree: %v\n", err)
		return 2
	}
	return 0
}

// agreeOne runs s (a built-in scenario when builtin) in the simulation
// and, unless refused, on real servers until a run gives the expected
// verdict or the attempts run out.
func agreeOne(ctx context.Context, f agreeFlags, s *scenario.Scenario, builtin bool, stderr io.Writer) (agreeRow, int) {
	row := agreeRow{s: s, scale: f.scale}
	if s.Real.Scale > 0 {
		row.scale = s.Real.Scale
	}
	if s.Expect.HasRates() {
		t, err := sweep.Seeds(ctx, s, s.Seed, s.Expect.Seeds, f.workers, nil)
		if err != nil {
			return row, agreeErr(ctx, s, err, stderr)
		}
		j := s.Expect.JudgeTally(&t)
		row.sim = fmt.Sprintf("violated in %d of %d seeds", j.Violated, j.Seeds)
		row.simMatch = j.Match
	} else {
		r, err := simrun.Run(s, s.Seed)
		if err != nil {
			return row, agreeErr(ctx, s, err, stderr)
		}
		row.sim, row.simMatch = verdictLine(r.Verdict), r.Match
	}
	rs, err := reload(s, row.scale, builtin)
	if err == nil {
		err = realCheck(rs)
	}
	var se *scenario.Error
	if errors.As(err, &se) {
		row.refused = refusal(se)
		return row, 0
	} else if err != nil {
		return row, agreeErr(ctx, s, err, stderr)
	}
	for i := 1; i <= f.attempts && !row.realMatch; i++ {
		if i > 1 && ctx.Err() != nil {
			return row, exitInterrupted // its attempts did not all run: no row
		}
		r, err := realrun.Run(rs, realrun.Options{})
		if err != nil {
			return row, agreeErr(ctx, s, err, stderr)
		}
		row.attempt, row.real, row.realMatch = i, verdictLine(r.Verdict), r.Match
	}
	return row, 0
}

// agreeErr reports a failed run and returns the exit status: interrupted,
// or 2 (no redis-server, or a file the loader or a run refused).
func agreeErr(ctx context.Context, s *scenario.Scenario, err error, stderr io.Writer) int {
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "simulate: interrupted: %s: %v\n", s.Name, err)
		return exitInterrupted
	case errors.Is(err, realrun.ErrNoServer):
		fmt.Fprintf(stderr, "simulate: agree: %v (install redis-server, e.g. apt-get install redis-server)\n", err)
	default:
		fmt.Fprintf(stderr, "simulate: agree: %s: %v\n", s.Name, err)
	}
	return 2
}

// reload loads s's file again with its durations multiplied by scale:
// from the built-in scenarios when builtin, else from its path.
func reload(s *scenario.Scenario, scale float64, builtin bool) (*scenario.Scenario, error) {
	data, err := source(s, builtin)
	if err != nil {
		return nil, err
	}
	return sweep.ParseSource(s.File, data, builtin, scale)
}

// refusal is why real servers cannot run a file: the field and reason of
// the loader's error, without the file and line the table already names.
func refusal(e *scenario.Error) string {
	if e.Field == "" {
		return e.Msg
	}
	return "`" + e.Field + "`: " + e.Msg
}

// writeAgreeTable writes the table and the counts under it.
func writeAgreeTable(w io.Writer, rows []agreeRow, scale float64, attempts int) {
	fmt.Fprintf(w, "| scenario | simulation | real servers | agree | note |\n|---|---|---|---|---|\n")
	var ran, agreed, refused, simWrong int
	for _, r := range rows {
		sim := r.sim
		if !r.simMatch {
			sim += " (NOT AS EXPECTED)"
			simWrong++
		}
		real, ok, note := "not run", "–", r.s.Real.Note
		switch {
		case r.refused != "":
			refused++
			note = strings.TrimSpace(strings.Join([]string{"cannot run for real: " + r.refused, note}, " "))
		default:
			ran++
			real = fmt.Sprintf("%s (x%g", r.real, r.scale)
			if r.attempt > 1 {
				real += fmt.Sprintf(", run %d of %d", r.attempt, attempts)
			}
			real += ")"
			ok = "no"
			if r.realMatch && r.simMatch {
				ok = "yes"
				agreed++
			}
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s |\n", r.s.Name, sim, real, ok, mdCell(note))
	}
	pct := 0.0
	if ran > 0 {
		pct = 100 * float64(agreed) / float64(ran)
	}
	fmt.Fprintf(w, "\n%d scenarios: %d run on real servers, of which %d agree with the simulation (%.0f%%); %d cannot run for real",
		len(rows), ran, agreed, pct, refused)
	if simWrong > 0 {
		fmt.Fprintf(w, "; %d simulated NOT AS EXPECTED", simWrong)
	}
	fmt.Fprintf(w, ". Real runs at -scale %g unless the file says otherwise (real.scale), up to %d runs each until one gives the file's expected verdict.\n", scale, attempts)
}

// mdCell makes s safe inside a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// spliceAgree replaces the text between the agree markers of path with
// table (through a temporary file and a rename) and returns the new
// content; with table "" it only checks that the markers are there and
// the file is writable.
func spliceAgree(path, table string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := string(data)
	// The markers are lines of their own: the text may quote them.
	i, j := markerLine(s, agreeBegin), markerLine(s, agreeEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("%s: no %s ... %s lines to put the table between", path, agreeBegin, agreeEnd)
	}
	if table == "" {
		return s, checkWritable(path)
	}
	s = s[:i+len(agreeBegin)] + "\n" + table + s[j:]
	return s, report.WriteFile(path, []byte(s))
}

// markerLine is the offset in s of the first line that is marker alone,
// or -1.
func markerLine(s, marker string) int {
	for off := 0; off < len(s); {
		line, _, _ := strings.Cut(s[off:], "\n")
		if strings.TrimRight(line, "\r") == marker {
			return off
		}
		off += len(line) + 1
	}
	return -1
}

// checkWritable fails when path's directory does not take a new file (the
// table is written through a temporary file beside it).
func checkWritable(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".agree-check-*")
	if err != nil {
		return err
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}
