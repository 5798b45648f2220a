package checker

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
)

// refWantSpans is wantSpans as a list, as it was made before it called
// back: one map look-up per step, every want opened before it is closed
// (one per owner where a client's owners are under way at once).
func refWantSpans(h []history.Record, end time.Duration) []ClientWait {
	type want struct{ client, lock, owner string }
	ix := indexRecords(h)
	var out []ClientWait
	open := map[want]ClientWait{}
	closeAll := func(client string, all bool, at time.Duration, crashed bool) {
		keys := slices.SortedFunc(maps.Keys(open), func(a, b want) int {
			return cmp.Or(strings.Compare(a.client, b.client), strings.Compare(a.lock, b.lock), strings.Compare(a.owner, b.owner))
		})
		for _, k := range keys {
			if w := open[k]; all || w.Client == client {
				w.To, w.Crashed = max(at, w.From), crashed
				out = append(out, w)
				delete(open, k)
			}
		}
	}
	for i := range h {
		r := &h[i]
		if crashed(r) {
			closeAll(r.Client, false, r.At(), true)
			continue
		}
		if !isAttempt(r) {
			continue
		}
		k := want{client: r.Client, lock: r.Lock}
		if ix.sharedLock(r.Client, r.Lock) {
			k.owner = r.Args[0]
		}
		if _, ok := open[k]; !ok {
			open[k] = ClientWait{Client: r.Client, Lock: r.Lock, Owner: k.owner, From: r.At()}
		}
		if ret, ok := r.Returned(); ok && r.Outcome == history.OutcomeOK {
			w := open[k]
			w.To, w.Acquired = ret, true
			out = append(out, w)
			delete(open, k)
		}
	}
	closeAll("", true, end, false)
	return out
}

// TestWantSpansAgreesWithList: on 1,000 random histories of acquires
// (successful, failed and unknown, of two locks by eight holders) and
// client crashes, in time order or not, wantSpans emits exactly the
// spans, in the order, that the list it replaced held; and the histories
// have wants that succeed at once, wants over several attempts, and wants
// ended by a crash or by the end, so that each path is compared.
func TestWantSpansAgreesWithList(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 3))
	atOnce, retried, crashedWants, open := 0, 0, 0, 0
	for i := range 1000 {
		h := fairRandHistory(r, 20+r.IntN(100))
		end := time.Duration(70+r.IntN(20)) * time.Millisecond
		var got []ClientWait
		wantSpans(indexRecords(h), end, func(w ClientWait) { got = append(got, w) })
		want := refWantSpans(h, end)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("history %d:\n got %v\nwant %v", i, got, want)
		}
		for _, w := range want {
			switch {
			case w.Crashed:
				crashedWants++
			case !w.Acquired:
				open++
			case w.From == w.To || slices.ContainsFunc(h, func(x history.Record) bool {
				return isAttempt(&x) && x.Client == w.Client && x.Lock == w.Lock && x.At() == w.From && x.End != nil && time.Duration(*x.End) == w.To
			}):
				atOnce++
			default:
				retried++
			}
		}
	}
	t.Logf("wants acquired at once %d, over several attempts %d, ended by a crash %d, open at the end %d", atOnce, retried, crashedWants, open)
	if atOnce < 500 || retried < 500 || crashedWants < 100 || open < 500 {
		t.Fatalf("too few of a kind to compare: at once %d, retried %d, crashed %d, open %d", atOnce, retried, crashedWants, open)
	}
}
