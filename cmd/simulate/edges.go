package main

// The command's edges: exit statuses for bugs, output paths checked before
// any run, and the temporary files a write leaves when the process is
// abandoned half-way (a second Ctrl-C).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// exitInternal is the exit status of an internal error, a bug in locksim
// (a panic, caught): distinct from 2, bad input, so that a script or a
// fuzzer tells the user's mistake from the tool's.
const exitInternal = 3

// errInternal is what an error for a bug wraps (see errStatus).
var errInternal = errors.New("internal error (a bug in locksim)")

// errStatus is the exit status of err, which stopped a command: an
// internal error (errInternal, the scenario loader's ErrInternal, a
// panic in a worker, sweep.ErrPanic, or in a simulated process,
// simrun.ErrPanicked: the command line runs no Go of the user's) is
// exitInternal, anything else bad input (2).
func errStatus(err error) int {
	if errors.Is(err, errInternal) || errors.Is(err, scenario.ErrInternal) || errors.Is(err, sweep.ErrPanic) || errors.Is(err, simrun.ErrPanicked) {
		return exitInternal
	}
	return 2
}

// recovered turns a panic (r, from recover) into an error wrapping
// errInternal, with the stack of the panic.
func recovered(r any) error {
	return fmt.Errorf("%w: %v\n%s", errInternal, r, debug.Stack())
}

// catchPanic, deferred by run, reports a panic of the command's goroutine
// on stderr as an internal error and sets *code to exitInternal (a panic
// that escaped would exit with 2, the status of bad input).
func catchPanic(code *int, stderr io.Writer) {
	if r := recover(); r != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", recovered(r))
		*code = exitInternal
	}
}

// runOutputs are the suffixes of the files run -out writes for a
// scenario, after its name (writeFiles).
var runOutputs = []string{".jsonl", ".verdict.txt", ".porcupine.html", ".timeline.png", ".timeline.svg"}

// checkOutputs checks, before anything runs, that the files of the
// scenarios all can be written into dir (-out): dir is, or can be made, a
// writable directory, and none of the files (dir/NAME+infix+suffix) exists
// as anything but a regular file; a directory of that name stopped the
// writing half-way, after the run. write says which scenarios write files.
//
// Two scenarios of one name (from two files) would write the same files,
// the second over the first: that is refused too, naming both files; and
// so is an output file that is one of the scenario files read (a scenario
// file named like a run's history, NAME.jsonl, in dir), which the run would
// replace with its own output.
func checkOutputs(flag, dir, infix string, all []*scenario.Scenario, write func(*scenario.Scenario) bool) error {
	if err := checkWritableDir(dir); err != nil {
		return fmt.Errorf("%s %s: %w", flag, dir, err)
	}
	owner := map[string]*scenario.Scenario{}
	ins := statInputs(all)
	for _, s := range all {
		if !write(s) {
			continue
		}
		base := sanitize(s.Name) + infix
		if o := owner[base]; o != nil {
			return fmt.Errorf("%s %s: %s and %s both name their scenario %q: their files (%s.*) would overwrite each other; rename one (name:); nothing was run or written",
				flag, dir, o.File, s.File, s.Name, base)
		}
		owner[base] = s
		if err := checkReplaceable(flag, dir, base, s.Name, runOutputs); err != nil {
			return err
		}
		for _, suf := range runOutputs {
			if err := notInput(flag, filepath.Join(dir, base+suf), ins); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkReplaceable checks that the files dir/base+suffix, for each of
// suffixes, can be written: none exists as anything but a regular file (a
// directory of that name would stop the writing half-way). name is whose
// files they are, for the error.
func checkReplaceable(flag, dir, base, name string, suffixes []string) error {
	for _, suf := range suffixes {
		p := filepath.Join(dir, base+suf)
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Errorf("%s %s: %w", flag, dir, err)
		case !st.Mode().IsRegular():
			what := "not a regular file"
			if st.IsDir() {
				what = "a directory"
			}
			return fmt.Errorf("%s %s: %s exists and is %s: %s's %s file cannot replace it; nothing was run or written",
				flag, dir, p, what, name, suf)
		}
	}
	return nil
}

// checkOutputFile checks, before anything runs, that the file path (the
// value of flag) can be written (through a temporary file beside it and a
// rename): it is not a directory or anything but a regular file, and its
// directory is, or can be made, a writable directory.
func checkOutputFile(flag, path string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return fmt.Errorf("%s %s: exists and is %s: the file cannot replace it; nothing was run or written", flag, path, sweep.NotRegular(st.Mode()))
	case err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if err := checkWritableDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("%s %s: %w; nothing was run or written", flag, path, err)
	}
	return nil
}

// checkNotInput refuses an output file (the value of flag) that is one of
// the scenario files all were read from: writing it would replace the
// scenario (run -partial and agree -out took a scenario file's place).
func checkNotInput(flag, path string, all []*scenario.Scenario) error {
	return notInput(flag, path, statInputs(all))
}

// inputFile is a scenario file read, as os.Stat found it.
type inputFile struct {
	name string
	info os.FileInfo
}

// statInputs stats the files all were read from, once for the many
// outputs a run -out checks against them; one that cannot be statted is
// no file an output could replace.
func statInputs(all []*scenario.Scenario) []inputFile {
	var ins []inputFile
	for _, s := range all {
		if info, err := os.Stat(s.File); err == nil {
			ins = append(ins, inputFile{s.File, info})
		}
	}
	return ins
}

// notInput is checkNotInput against inputs already statted.
func notInput(flag, path string, ins []inputFile) error {
	out, err := os.Stat(path)
	if err != nil {
		return nil // nothing there yet: no input can be it
	}
	for _, in := range ins {
		if os.SameFile(in.info, out) {
			return fmt.Errorf("%s %s: is the scenario file %s, which writing it would replace; nothing was run or written", flag, path, in.name)
		}
	}
	return nil
}

// checkWritableDir checks that a file can be created in dir, or in the
// nearest existing directory above it when dir does not exist yet (the
// writing makes it): a directory, in which a probe file can be created
// (and is removed at once). It creates nothing else.
func checkWritableDir(dir string) error {
	d := filepath.Clean(dir)
	for {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("%s is not a directory", d)
			}
			f, err := os.CreateTemp(d, ".simulate-probe-*")
			if err != nil {
				return fmt.Errorf("not writable: %w", err)
			}
			_ = f.Close()
			return os.Remove(f.Name())
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return err
		}
		up := filepath.Dir(d)
		if up == d {
			return err
		}
		d = up
	}
}

// temps is the registry of the temporary files being written, removed
// when the process is abandoned (abandon).
var temps tempRegistry

// tempRegistry holds, for each write under way, a function that removes
// what the write has left so far: its temporary files (report.WriteFile
// writes PATH through .BASE.* in PATH's directory, compare's report through
// a .DIR.tmp-* directory beside DIR).
type tempRegistry struct {
	mu    sync.Mutex
	next  int
	clean map[int]func() int
}

// add registers clean until the returned function is called (when the
// write is over).
func (r *tempRegistry) add(clean func() int) (done func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clean == nil {
		r.clean = map[int]func() int{}
	}
	id := r.next
	r.next++
	r.clean[id] = clean
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.clean, id)
	}
}

// removeAll runs every registered clean-up, in registration order, and
// returns how many files or directories they removed.
func (r *tempRegistry) removeAll() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]int, 0, len(r.clean))
	for id := range r.clean {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	n := 0
	for _, id := range ids {
		n += r.clean[id]()
	}
	return n
}

// removeGlob removes what matches the glob pattern and returns how many.
func removeGlob(pattern string) int {
	ms, _ := filepath.Glob(pattern)
	n := 0
	for _, m := range ms {
		if os.RemoveAll(m) == nil {
			n++
		}
	}
	return n
}

// fileTemps registers the temporaries of writing the files base+* through
// report.WriteFile (.NAME.*, NAME base's last element, in base's
// directory).
func fileTemps(base string) (done func()) {
	pattern := filepath.Join(filepath.Dir(base), "."+filepath.Base(base)+".*")
	return temps.add(func() int { return removeGlob(pattern) })
}

// reportTemps registers the temporaries of compare's report written into
// dir (compare.Results.Write): the .DIR.tmp-* directory being filled, and,
// if the old report was moved aside (.DIR.tmp-*.old) and the new one not
// yet moved in, the old one is moved back, so that dir is as it was.
func reportTemps(dir string) (done func()) {
	dir = filepath.Clean(dir)
	pattern := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-*")
	return temps.add(func() int {
		ms, _ := filepath.Glob(pattern)
		n := 0
		for _, m := range ms {
			if strings.HasSuffix(m, ".old") {
				if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) && os.Rename(m, dir) == nil {
					continue
				}
			}
			if os.RemoveAll(m) == nil {
				n++
			}
		}
		return n
	})
}

// stopTemps is report.StopTemps, which abandon calls before it removes
// the temporaries; a test of abandon within the test process, whose other
// tests go on writing, records the call instead.
var stopTemps = report.StopTemps

// abandon is what a second Ctrl-C (or SIGTERM) does: it kills and reaps
// the processes the real backend started (redis-server, redis-sentinel,
// client workers: redistest.StopAll; they were left to die with the
// process, unreaped), removes the temporary files of the writes under
// way (temps), says so on stderr, and ends the process with
// exitInterrupted through exit.
func abandon(stderr io.Writer, exit func(int)) {
	procs := redistest.StopAll()
	stopTemps() // no write makes a temporary file after the removal
	n := temps.removeAll()
	stopped := ""
	if procs > 0 {
		stopped = fmt.Sprintf("%d server and worker processes stopped, ", procs)
	}
	fmt.Fprintf(stderr, "simulate: interrupted again: abandoned the runs under way; %s%d temporary files removed, no output half-written\n", stopped, n)
	exit(exitInterrupted)
}
