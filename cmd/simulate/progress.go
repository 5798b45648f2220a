package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressAfter and progressLong decide when a sweep shows its progress:
// once it has run for progressAfter and the runs done so far say that
// what remains takes progressLong or more. A sweep of a few seconds shows
// nothing, however many seeds it has; a long one shows its progress from
// its first second, however few. Variables so that a test can make every
// sweep long.
var progressAfter, progressLong = time.Second, 2 * time.Second

// progress reports a long sweep's progress on w (stderr): a progress bar
// when w is a terminal, otherwise a plain line when it starts showing and
// at every tenth of the runs, so logs of CI jobs stay readable. Progress never goes to stdout, whose
// output is deterministic, and a sweep expected to end within a few
// seconds shows none (progressAfter, progressLong). The wall clock it
// reads decides only whether progress is shown, never what stdout says.
type progress struct {
	w     io.Writer
	what  string
	now   func() time.Time
	start time.Time
	shown bool
	bar   *progressbar.ProgressBar
	tenth int
	// done and total are the last update's, for finish's line.
	done, total int
}

// newProgress is the progress of a sweep starting now; nil (which reports
// nothing) when quiet.
func newProgress(w io.Writer, what string, quiet bool) *progress {
	if quiet {
		return nil
	}
	return &progress{w: w, what: what, now: time.Now, start: time.Now()}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// long reports whether the sweep, done runs of total after elapsed, is
// long enough to show its progress: it has run for progressAfter and, at
// the pace so far, the rest takes progressLong or more. The pace of the
// first runs overstates the rest's when they ran in parallel, which is
// why the first second decides nothing.
func long(elapsed time.Duration, done, total int) bool {
	if elapsed < progressAfter || done >= total {
		return false
	}
	rest := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
	return rest >= progressLong
}

// update is called with the runs done out of total, one call at a time
// (from the worker that finished the run, package sweep). A nil progress
// does nothing.
func (p *progress) update(done, total int) {
	if p == nil {
		return
	}
	p.done, p.total = done, total
	first := !p.shown
	if first {
		if !long(p.now().Sub(p.start), done, total) {
			return
		}
		p.shown = true
	}
	if isTerminal(p.w) {
		if p.bar == nil {
			p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription(p.what), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
				progressbar.OptionSetItsString("runs"), progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
		}
		if int64(total) != p.bar.GetMax64() {
			p.bar.ChangeMax(total) // compare -precision: the total falls as cells are done
		}
		_ = p.bar.Set(done)
		return
	}
	if t := done * 10 / total; t > p.tenth || done == total || first {
		p.tenth = t
		fmt.Fprintf(p.w, "%s: %d/%d runs (%d%%)\n", p.what, done, total, 100*done/total)
	}
}

// finish clears the bar. Without one, a sweep that showed its progress
// and stopped short of its total (-precision: the interval narrowed
// before the cap; or an interruption) says where it stopped, so that a
// log's last line is not a count that seems to stall.
func (p *progress) finish() {
	switch {
	case p == nil:
	case p.bar != nil:
		_ = p.bar.Finish()
	case p.shown && p.done < p.total:
		fmt.Fprintf(p.w, "%s: stopped after %d of at most %d runs\n", p.what, p.done, p.total)
	}
}
