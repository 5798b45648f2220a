package checker

import (
	"math/rand/v2"
	"testing"

	"github.com/locksim/locksim/history"
)

// TestNewTruthFilesEachChangeUnderItsKey: NewTruth takes a truth record
// of the previous one's key without looking the key up (refer); on 500
// random histories of three keys on three nodes, in runs of one key and
// interleaved, some keys gone, every key's index holds exactly the
// changes of its own records, node by node, in history order.
func TestNewTruthFilesEachChangeUnderItsKey(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 1))
	keys, nodes := []string{"a", "b", "c"}, []string{"m1", "r1", "r2"}
	for i := range 500 {
		var h []history.Record
		for range r.IntN(40) {
			key := keys[r.IntN(len(keys))]
			for range 1 + r.IntN(3) { // a run of the key's changes
				rec := history.Record{Kind: history.KindTruth, T: int64(r.IntN(20)), Node: nodes[r.IntN(len(nodes))], Key: key, Value: key}
				if r.IntN(4) == 0 {
					rec.Gone, rec.Value = true, ""
				}
				h = append(h, rec)
				if r.IntN(5) == 0 {
					h = append(h, history.Record{Kind: history.KindOp, T: rec.T, Client: "c1", Lock: "a", Op: history.OpAcquire})
				}
			}
		}
		tr := NewTruth(h)
		for _, key := range keys {
			for _, node := range nodes {
				var want []int64
				var gone []bool
				for _, rec := range h {
					if rec.Kind == history.KindTruth && rec.Key == key && rec.Node == node {
						want, gone = append(want, rec.T), append(gone, rec.Gone)
					}
				}
				var got []truthChange
				if kt := tr.key(key); kt != nil {
					got = kt.changesOn(node)
				}
				if len(got) != len(want) {
					t.Fatalf("history %d: %s on %s has %d changes, its records %d\n%v", i, key, node, len(got), len(want), h)
				}
				for k, c := range got {
					if int64(c.t) != want[k] || (c.rec == nil) != gone[k] || (c.rec != nil && c.rec.Key != key) {
						t.Fatalf("history %d: %s on %s: change %d is %v, its record's time %d (gone %v)", i, key, node, k, c, want[k], gone[k])
					}
				}
			}
		}
	}
}
