// Per-client waits: how long each client wanted a lock before it got it.

package checker

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locksim/locksim/history"
)

// ClientWait is one client's longest wait for a lock: from the call of its
// first acquire attempt after its last successful one (or after the start)
// until the return of the attempt that succeeded, or until the end of the
// run (or the client's crash) when none did. Retry loops that think
// between attempts still count as waiting, as in Waits: the client wanted
// the lock all along.
type ClientWait struct {
	// Client waited for Lock.
	Client, Lock string
	// From is the call of the wait's first attempt; To the return of the
	// attempt that succeeded, the end of the run, or the client's crash.
	From, To time.Duration
	// Acquired is false when the wait lasted until the end of the run or
	// the crash.
	Acquired bool
	// Crashed is set when the wait ended with the client's crash: a dead
	// client waits for nothing.
	Crashed bool
}

// Duration is how long the wait lasted.
func (w ClientWait) Duration() time.Duration { return w.To - w.From }

func (w ClientWait) String() string {
	how := fmt.Sprintf("until its acquire returned at %v", w.To)
	switch {
	case w.Crashed:
		how = fmt.Sprintf("until it crashed at %v without acquiring it", w.To)
	case !w.Acquired:
		how = fmt.Sprintf("until the end at %v without acquiring it", w.To)
	}
	return fmt.Sprintf("%s waited %v for %s, from its first attempt at %v %s", w.Client, w.Duration(), w.Lock, w.From, how)
}

// ClientWaits returns the longest wait of every client that attempted an
// acquire ("acquire" or "acquire-read" op records) in h, a history that ran
// until end, sorted by client name. Of equal waits the earliest is kept.
// An attempt whose outcome stayed unknown does not end a wait: the client
// never learned it held the lock.
func ClientWaits(h []history.Record, end time.Duration) []ClientWait {
	type want struct {
		client, lock string
		from         time.Duration
	}
	open := map[string]want{} // client + lock -> the open wait
	longest := map[string]ClientWait{}
	note := func(w ClientWait) {
		if cur, ok := longest[w.Client]; !ok || w.Duration() > cur.Duration() {
			longest[w.Client] = w
		}
	}
	for i := range h {
		r := &h[i]
		if crashed(r) {
			// A dead client's wait ends at its crash, unanswered.
			for _, k := range slices.Sorted(maps.Keys(open)) {
				if w := open[k]; w.client == r.Client {
					note(ClientWait{Client: w.client, Lock: w.lock, From: w.from, To: max(r.At(), w.from), Crashed: true})
					delete(open, k)
				}
			}
			continue
		}
		if r.Kind != history.KindOp || (r.Op != history.OpAcquire && r.Op != history.OpAcquireRead) {
			continue
		}
		k := r.Client + "\x00" + r.Lock
		if _, ok := open[k]; !ok {
			open[k] = want{r.Client, r.Lock, r.At()}
		}
		if ret, ok := r.Returned(); ok && r.Outcome == history.OutcomeOK {
			w := open[k]
			note(ClientWait{Client: w.client, Lock: w.lock, From: w.from, To: ret, Acquired: true})
			delete(open, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(open)) {
		w := open[k]
		note(ClientWait{Client: w.client, Lock: w.lock, From: w.from, To: max(end, w.from)})
	}
	out := slices.Collect(maps.Values(longest))
	slices.SortFunc(out, func(a, b ClientWait) int { return cmp.Compare(a.Client, b.Client) })
	return out
}

// ClientLivenessViolations reports every client of bounds (client name ->
// the longest it may wait) whose longest wait (ClientWaits) exceeded its
// bound, in client order: a liveness violation naming the client, for
// stories in which one client's wait is the point (a waiter behind a
// crashed holder needs the lease to run out, not more). A client that
// never attempted an acquire waited for nothing and is not reported.
func ClientLivenessViolations(h []history.Record, end time.Duration, bounds map[string]time.Duration) []Violation {
	var out []Violation
	for _, w := range ClientWaits(h, end) {
		b, ok := bounds[w.Client]
		if !ok || w.Duration() <= b {
			continue
		}
		out = append(out, Violation{Kind: Liveness, Lock: w.Lock, Holders: []string{w.Client}, From: w.From, To: w.To,
			Detail: fmt.Sprintf("%s, longer than its bound %v", w, b), Faults: FaultsBefore(h, w.To, 5)})
	}
	return out
}
