package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

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
	t := replyTally{refused: refusalReader(k.Reply, k.ScriptConfig.UserConfig.Model), ownerIn: k.OwnerIn,
		last: map[nodeKey]*history.Record{}, before: map[nodeKey]*history.Record{}}
	for i := range recs {
		t.record(&recs[i])
	}
	t.settle(0, true)
	if t.misread == 0 || 2*t.misread <= t.takes {
		return ""
	}
	answered, other := "nil or 0", "if the acquire answers nil when it takes the lock and the holder's TTL when not, as Redisson's lock scripts do, set reply: redisson"
	if k.Reply == traffic.ReplyRedisson {
		answered, other = "an integer", "if the acquire answers OK, a positive integer or ARGV[1] when it takes the lock, set reply: ok (the default)"
	}
	first := t.first
	at, _ := soleRunBefore(first.Applied, *first.End)
	return fmt.Sprintf("reply: %s read %d of the acquire script's %d runs that wrote the caller's own mark on the lock key as refusals (it answered %s; the first: %s at %v on %s, answered %s): %s",
		k.Reply, t.misread, t.takes, answered, first.Client, time.Duration(at), first.Node, first.Result, other)
}

type nodeKey struct{ node, key string }

// replyTally walks a history for ReplyNote: the acquire script's runs
// that took the lock (takes), those of them answered as refusals
// (misread), the first of those.
type replyTally struct {
	refused func(result string) bool
	ownerIn string
	// last is the truth's latest record of each node's key, as the
	// records go, and before the state before its latest change.
	last, before   map[nodeKey]*history.Record
	open           []pendingRun
	takes, misread int
	first          *history.Record
}

// pendingRun is an acquire request's one run before its reply, waiting
// for the truth records of its instant: a run and the truth record of its
// write carry the same time, the truth's after the request's record
// (which was opened at its call), so the run is settled once the records
// pass its instant.
type pendingRun struct {
	r       *history.Record
	key     nodeKey
	at      int64
	refused bool
}

func (t *replyTally) record(r *history.Record) {
	switch r.Kind {
	case history.KindTruth:
		t.settle(r.T, false)
		nk := nodeKey{r.Node, r.Key}
		if cur := t.last[nk]; cur == nil || cur.T < r.T {
			t.before[nk] = cur
		}
		t.last[nk] = r
	case history.KindReq:
		if r.Op != "eval:script_acquire" || r.Outcome != history.OutcomeOK || len(r.Args) < 2 || r.End == nil {
			return
		}
		if at, ok := soleRunBefore(r.Applied, *r.End); ok {
			t.open = append(t.open, pendingRun{r: r, key: nodeKey{r.Node, r.Args[0]}, at: at, refused: t.refused(r.Result)})
		}
	}
}

// settle counts the pending runs before upTo (all of them when final):
// each that wrote its caller's mark is a take.
func (t *replyTally) settle(upTo int64, final bool) {
	kept := t.open[:0]
	for _, p := range t.open {
		if !final && p.at >= upTo {
			kept = append(kept, p)
			continue
		}
		cur := t.last[p.key]
		if cur == nil || cur.T != p.at || !wroteMark(t.before[p.key], cur, p.r.Args[1], t.ownerIn) {
			continue
		}
		t.takes++
		if p.refused {
			if t.misread++; t.first == nil {
				t.first = p.r
			}
		}
	}
	t.open = kept
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
// records; prev nil: no key before) put mark there or raised its count:
// the mark a new hash field, a field whose count grew, or the key's new
// value.
func wroteMark(prev, cur *history.Record, mark, ownerIn string) bool {
	if cur.Gone {
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
