package checker

import (
	"testing"

	"github.com/locksim/locksim/history"
)

// TestAppendHolderField: the field Names builds on the stack is
// holderField's, for holders with no owner, an owner, an owner with a
// slash of its own (only the first slash is the client's) and empty
// parts; and Names finds a holder by its field and by its write field,
// not by another holder's.
func TestAppendHolderField(t *testing.T) {
	for _, holder := range []string{"c1", "c1/a", "c1/a/b", "", "/", "c1/", "/a", "a-long-client-name-that-does-not-fit-in-the-buffer-at-all/and-its-owner"} {
		if got, want := string(appendHolderField(nil, holder)), holderField(holder); got != want {
			t.Errorf("appendHolderField(%q) = %q, holderField %q", holder, got, want)
		}
	}
	st := &history.Record{Kind: history.KindTruth, Fields: map[string]string{"c1:a/b": "1", "c2:x:write": "1"}}
	for _, c := range []struct {
		holder string
		want   bool
	}{{"c1/a/b", true}, {"c2/x", true}, {"c1/a", false}, {"c1", false}, {"c2/x:write", true}, {"c1:a/b", false}} {
		if got := Names(st, Holding{Client: c.holder}); got != c.want {
			t.Errorf("Names(%v, %q) = %v, want %v", st.Fields, c.holder, got, c.want)
		}
	}
}
