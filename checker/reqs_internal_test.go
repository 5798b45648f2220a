package checker

import (
	"maps"
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
