package sim

import (
	"fmt"
	"strings"
	"testing"
)

// TestNewID pins newID to the format it replaced.
func TestNewID(t *testing.T) {
	for _, id := range []uint32{0, 1, 0xf, 0xabc, 0x7fffffff, 0xdeadbeef, 0xffffffff} {
		for _, name := range []string{"", "c1", "client-42", strings.Repeat("x", 70)} {
			if got, want := newID(name, id), fmt.Sprintf("%s-%08x", name, id); got != want {
				t.Errorf("newID(%q, %#x) = %q, want %q", name, id, got, want)
			}
		}
	}
}

// TestClientIDsKeepTheirText makes ids from a client's slabs, names short
// and long enough to have a string of their own, and rereads every id
// given after all were made: a slab written twice fails it.
func TestClientIDsKeepTheirText(t *testing.T) {
	for _, name := range []string{"c1", "client-42", strings.Repeat("x", 70)} {
		c := &Client{name: name}
		var got, want []string
		for i := range 300 {
			id := uint32(i * 0x9e3779b1)
			got = append(got, c.id(id))
			want = append(want, newID(name, id))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: id %d reads %q, want %q", name, i, got[i], want[i])
			}
		}
	}
}
