package faultsearch

import (
	"flag"
	"fmt"
	"strconv"

	"pgregory.net/rapid"
)

// Found is what a search (Find) found.
type Found struct {
	// Failed: rapid found a failing case (and shrank it).
	Failed bool
	// Logs are what rapid logged: its report, then the draws of the
	// shrunk case.
	Logs []string
	// Key and Msg are the last failing case run and its failure: the
	// shrunk one, which rapid runs again last to report it.
	Key, Msg string
	// ToFind counts the runs until the first failure, Spent those spent
	// shrinking it after.
	ToFind, Spent int
}

// Find runs rapid.Check with a recorder instead of a test, so that a
// failure is returned, not reported: draw draws one case and returns its
// key and the function that runs it, which returns "" when the case
// passes and the failure's message when it fails.
//
// Runs are deterministic, so a case drawn again under the same key
// (rapid's shrinker tries many draws that differ only in bits no value
// reads) is answered from what it gave before, unrun and uncounted. Once
// a failure is found, at most shrink distinct new cases run; every later
// candidate passes unrun, so rapid stops with the case shrunk so far. A
// count, not rapid's wall-clock shrinktime, bounds the shrinking, so that
// the shrunk case is the same on any machine, loaded or not.
//
// name names the search to rapid (its fail files, which Flags turns off).
func Find(name string, draw func(t *rapid.T) (key string, run func() string), shrink int) Found {
	rec := &recorder{name: name}
	var out Found
	seen := map[string]string{} // key -> the failure it gave ("" for none)
	var hit bool                // a failure was found: rapid is shrinking it
	rapid.Check(rec, func(t *rapid.T) {
		key, run := draw(t)
		msg, ok := seen[key]
		if !ok {
			if hit && out.Spent >= shrink {
				return
			}
			msg = run()
			seen[key] = msg
			if hit {
				out.Spent++
			} else {
				out.ToFind++
				hit = msg != ""
			}
		}
		if msg != "" {
			out.Key, out.Msg = key, msg
			t.Fatalf("%s", msg)
		}
	})
	out.Failed, out.Logs = rec.failed, rec.logs
	return out
}

// Flags sets rapid's flags, which it reads as globals, for one search and
// returns the function that restores them: checks cases, no fail files
// (a counterexample is reported by the search, not replayed by rapid), no
// wall-clock bound on shrinking (Find's count bounds it), and, when seed
// is not 0 and -rapid.seed was not given, seed as the base seed, so that
// the search draws the same cases on every run. Searches that run in
// parallel share the values (set them before they start).
func Flags(checks int, seed uint64) (restore func(), err error) {
	var undo []func()
	restore = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	set := func(name, value string) error {
		fl := flag.Lookup(name)
		if fl == nil {
			return fmt.Errorf("faultsearch: rapid's flag %s is not registered", name)
		}
		old := fl.Value.String()
		if err := flag.Set(name, value); err != nil {
			return err
		}
		undo = append(undo, func() { _ = flag.Set(name, old) })
		return nil
	}
	for _, kv := range [][2]string{{"rapid.checks", strconv.Itoa(checks)}, {"rapid.nofailfile", "true"}, {"rapid.shrinktime", "1h"}} {
		if err := set(kv[0], kv[1]); err != nil {
			restore()
			return func() {}, err
		}
	}
	if fl := flag.Lookup("rapid.seed"); seed != 0 && fl != nil && fl.Value.String() == "0" {
		if err := set("rapid.seed", strconv.FormatUint(seed, 10)); err != nil {
			restore()
			return func() {}, err
		}
	}
	return restore, nil
}

// recorder is a rapid.TB that records a failure and the logs instead of
// failing a test.
type recorder struct {
	name   string
	failed bool
	logs   []string
}

func (r *recorder) Helper()           {}
func (r *recorder) Name() string      { return r.name }
func (r *recorder) Fail()             { r.failed = true }
func (r *recorder) FailNow()          { r.failed = true }
func (r *recorder) Failed() bool      { return r.failed }
func (r *recorder) Log(args ...any)   { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *recorder) Error(args ...any) { r.Fail(); r.Log(args...) }
func (r *recorder) Fatal(args ...any) { r.Error(args...) }
func (r *recorder) Skip(args ...any)  { r.Log(args...) }
func (r *recorder) SkipNow()          {}
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Errorf(format string, args ...any) { r.Fail(); r.Logf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
func (r *recorder) Skipf(format string, args ...any)  { r.Logf(format, args...) }
