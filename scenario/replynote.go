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

// ReplyNote is a note for a script lock whose acquire script answered, by
// the scenario's reply convention, that it refused the lock in runs that
// wrote the caller's own mark (ARGV[1], as a hash field or the key's
// value) on the lock key: no refusal writes its caller's mark, so the
// script most likely speaks the other convention (Redisson's scripts
// answer nil when they take the lock and the holder's TTL when not,
// which reply: ok reads the other way round, and the run is then full of
// findings about a lock that works). "" for any other scenario, or when
// no such run happened. It names the count and the first such run, and
// the setting to try; the verdict stands as judged.
func (s *Scenario) ReplyNote(recs []history.Record) string {
	k, ok := s.Algorithm.Workload.(*Script)
	if !ok || k.Reply == "" {
		return ""
	}
	refused := refusalReader(k.Reply, k.ScriptConfig.UserConfig.Model)
	// The truth's last state of each node's key, as the records go.
	type nodeKey struct{ node, key string }
	last := map[nodeKey]*history.Record{}
	before := map[nodeKey]*history.Record{} // the state before the last change
	var first *history.Record
	n, all := 0, 0
	// A request's run and the truth record of its write carry the same
	// time, the truth's after the request's record (which was opened at
	// its call): the request is settled once the records pass its run.
	type pending struct {
		r   *history.Record
		key nodeKey
		at  int64
	}
	var open []pending
	settle := func(upTo int64, final bool) {
		kept := open[:0]
		for _, p := range open {
			if !final && p.at >= upTo {
				kept = append(kept, p)
				continue
			}
			cur := last[p.key]
			if cur != nil && cur.T == p.at && wroteMark(before[p.key], cur, p.r.Args[1], k.OwnerIn) {
				if n++; first == nil {
					first = p.r
				}
			}
		}
		open = kept
	}
	for i := range recs {
		r := &recs[i]
		switch r.Kind {
		case history.KindTruth:
			settle(r.T, false)
			nk := nodeKey{r.Node, r.Key}
			if cur := last[nk]; cur == nil || cur.T < r.T {
				before[nk] = cur
			}
			last[nk] = r
		case history.KindReq:
			if r.Op != "eval:script_acquire" || r.Outcome != history.OutcomeOK || len(r.Args) < 2 || len(r.Applied) == 0 || !refused(r.Result) {
				continue
			}
			all++
			open = append(open, pending{r: r, key: nodeKey{r.Node, r.Args[0]}, at: r.Applied[len(r.Applied)-1]})
		}
	}
	settle(0, true)
	if n == 0 {
		return ""
	}
	answered, other := "nil or 0", "if the acquire answers nil when it takes the lock and the holder's TTL when not, as Redisson's lock scripts do, set reply: redisson"
	if k.Reply == traffic.ReplyRedisson {
		answered, other = "an integer", "if the acquire answers OK, a positive integer or ARGV[1] when it takes the lock, set reply: ok (the default)"
	}
	return fmt.Sprintf("reply: %s read %d of the acquire script's %d refusals (it answered %s) although each wrote the caller's own mark on the lock key (the first: %s at %v on %s, answered %s): %s",
		k.Reply, n, all, answered, first.Client, time.Duration(first.Applied[len(first.Applied)-1]), first.Node, first.Result, other)
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
