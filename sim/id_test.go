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
