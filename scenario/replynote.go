package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/traffic"
)

// RunNotes are the notes a run's verdict carries besides its checks':
// the drawn faults that could not act (DrawnSkippedNote) and, for a
// script lock, a reply convention its scripts seem not to follow
// (ReplyNote). Each is a sentence; none changes the verdict.
func (s *Scenario) RunNotes(recs []history.Record) []string {
	var notes []string
	for _, n := range []string{DrawnSkippedNote(recs), s.ReplyNote(recs)} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	return notes
}

// ReplyNote is a note for a script lock whose acquire script, in most of
// its runs that took the lock (wrote the caller's own mark, ARGV[1], as a
// hash field or the key's value), answered what the scenario's reply
// convention reads as a refusal: the script most likely speaks the other
// convention (Redisson's scripts answer nil when they take the lock and
// the holder's TTL when not, which reply: ok reads the other way round,
// and the run is then full of findings about a lock that works). Only a
// request with one run before its reply counts, so that the answer is that
// run's (a first attempt overtaken by its retry may run after the reply,
// a late acquire that is a finding of its own). A few misread takes among
// many are a finding about the lock, not a convention, and get no note.
// "" for any other scenario, or when no such majority. It names the counts
// and the first such run, and the setting to try; the verdict stands as
// judged.
func (s *Scenario) ReplyNote(recs []history.Record) string {
	k, ok := s.Algorithm.Workload.(*Script)
	if !ok || k.Reply == "" {
		return ""
	}
	refused := refusalReader(k.Reply, k.ScriptConfig.UserConfig.Model)
	var tr *checker.Truth // made at the first acquire answered
	var first *history.Record
	var firstAt int64
	takes, misread := 0, 0
	for i := range recs {
		r := &recs[i]
		if r.Kind != history.KindReq || r.Op != "eval:script_acquire" || r.Outcome != history.OutcomeOK || len(r.Args) < 2 || r.End == nil {
			continue
		}
		at, ok := soleRunBefore(r.Applied, *r.End)
		if !ok {
			continue
		}
		if tr == nil {
			tr = checker.NewTruth(recs)
		}
		// The run's change of the key on its node: the state at its
		// instant against the one just before (changes at one instant
		// seen net).
		t := time.Duration(at)
		if !wroteMark(tr.State(r.Node, r.Args[0], t-1), tr.State(r.Node, r.Args[0], t), r.Args[1], k.OwnerIn) {
			continue
		}
		takes++
		if refused(r.Result) {
			if misread++; first == nil {
				first, firstAt = r, at
			}
		}
	}
	if misread == 0 || 2*misread <= takes {
		return ""
	}
	answered, other := "nil or 0", "if the acquire answers nil when it takes the lock and the holder's TTL when not, as Redisson's lock scripts do, set reply: redisson"
	if k.Reply == traffic.ReplyRedisson {
		answered, other = "an integer", "if the acquire answers OK, a positive integer or ARGV[1] when it takes the lock, set reply: ok (the default)"
	}
	return fmt.Sprintf("reply: %s read %d of the acquire script's %d runs that wrote the caller's own mark on the lock key as refusals (it answered %s; the first: %s at %v on %s, answered %s): %s",
		k.Reply, misread, takes, answered, first.Client, time.Duration(firstAt), first.Node, first.Result, other)
}

// soleRunBefore is the time of the one run of a request before its reply
// at end (applied: its runs' times, sorted), false when there is none or
// more than one: the reply is then not known to be that run's.
func soleRunBefore(applied []int64, end int64) (int64, bool) {
	n := 0
	for n < len(applied) && applied[n] <= end {
		n++
	}
	if n != 1 {
		return 0, false
	}
	return applied[0], true
}

// refusalReader says which acquire results (history.FormatReply's text)
// the convention reads as a refusal.
func refusalReader(reply, model string) func(result string) bool {
	if reply == traffic.ReplyRedisson {
		if model == "fenced" {
			return func(r string) bool { return strings.HasPrefix(r, "[") && strings.HasSuffix(r, " -1]") }
		}
		return func(r string) bool { _, err := strconv.ParseInt(r, 10, 64); return err == nil }
	}
	return func(r string) bool { return r == "nil" || r == "0" }
}

// wroteMark reports whether the change from prev to cur (a key's truth
// states; nil: no key) put mark there or raised its count:
// the mark a new hash field, a field whose count grew, or the key's new
// value.
func wroteMark(prev, cur *history.Record, mark, ownerIn string) bool {
	if cur == nil || cur.Gone {
		return false
	}
	if ownerIn == traffic.OwnerInValue {
		return cur.Value == mark && (prev == nil || prev.Gone || prev.Value != mark)
	}
	now, ok := cur.Fields[mark]
	if !ok {
		return false
	}
	if prev == nil || prev.Gone {
		return true
	}
	was, had := prev.Fields[mark]
	if !had {
		return true
	}
	a, errA := strconv.ParseInt(now, 10, 64)
	b, errB := strconv.ParseInt(was, 10, 64)
	return errA == nil && errB == nil && a > b
}
