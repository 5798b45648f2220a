package checker

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/locksim/locksim/history"
)

// TestClientReqsIndexesEveryClient: clientReqs lists, for each client,
// exactly the indices of its req records that name a key, in order, when
// clients' requests come in runs and when they interleave one by one (a
// client's list is kept across the runs of others), with other records
// and keyless requests between them.
func TestClientReqsIndexesEveryClient(t *testing.T) {
	var h []history.Record
	add := func(kind history.Kind, client string, args ...string) {
		h = append(h, history.Record{Kind: kind, Client: client, Args: args})
	}
	for _, c := range []string{"c1", "c1", "c2", "c1", "c3", "c3", "c2", "c1", "c2", "c3", "c1"} {
		add(history.KindReq, c, "lk", "tok")
		add(history.KindOp, c)
		add(history.KindReq, c) // no key
		add(history.KindReq, c, "lk")
	}
	want := map[string][]int{}
	for i, r := range h {
		if r.Kind == history.KindReq && len(r.Args) > 0 {
			want[r.Client] = append(want[r.Client], i)
		}
	}
	got := clientReqs(h)
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("clientReqs = %v, want %v", got, want)
	}
	if got := clientReqs(nil); len(got) != 0 {
		t.Errorf("clientReqs(nil) = %v", got)
	}
}

// TestClientReqsRandom: on 2,000 random histories of up to 8 clients
// (runs of one client's requests, of every length, and requests without
// a key, op records and empty client names among them), clientReqs lists
// exactly each client's req records that name a key, in order.
func TestClientReqsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 1))
	for n := range 2000 {
		var h []history.Record
		for range r.IntN(60) {
			c := fmt.Sprintf("c%d", r.IntN(8))
			if r.IntN(10) == 0 {
				c = ""
			}
			for range 1 + r.IntN(4) {
				rec := history.Record{Kind: history.KindReq, Client: c, Args: []string{"lk"}}
				switch r.IntN(6) {
				case 0:
					rec.Args = nil
				case 1:
					rec.Kind = history.KindOp
				}
				h = append(h, rec)
			}
		}
		want := map[string][]int{}
		for i, rec := range h {
			if rec.Kind == history.KindReq && len(rec.Args) > 0 {
				want[rec.Client] = append(want[rec.Client], i)
			}
		}
		if got := clientReqs(h); !maps.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("history %d: clientReqs = %v, want %v", n, got, want)
		}
	}
}
