package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress reports a long sweep's progress on w (stderr): a progress bar
// when w is a terminal, otherwise a plain line at every tenth of the runs,
// so logs of CI jobs stay readable. Progress never goes to stdout, whose
// output is deterministic.
type progress struct {
	w     io.Writer
	what  string
	bar   *progressbar.ProgressBar
	tenth int
}

func newProgress(w io.Writer, what string, quiet bool) *progress {
	if quiet {
		return nil
	}
	return &progress{w: w, what: what}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// update is called with the runs done out of total, one call at a time
// (from the worker that finished the run, package pool). A nil progress
// does nothing.
func (p *progress) update(done, total int) {
	if p == nil {
		return
	}
	if isTerminal(p.w) {
		if p.bar == nil {
			p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription(p.what), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
				progressbar.OptionSetItsString("runs"), progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
		}
		_ = p.bar.Set(done)
		return
	}
	if t := done * 10 / total; t > p.tenth || done == total {
		p.tenth = t
		fmt.Fprintf(p.w, "%s: %d/%d runs (%d%%)\n", p.what, done, total, 100*done/total)
	}
}

// finish clears the bar.
func (p *progress) finish() {
	if p != nil && p.bar != nil {
		_ = p.bar.Finish()
	}
}
