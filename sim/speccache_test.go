package sim

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestSpecCacheMatchesLookup looks names up through a specCache, each
// several times and in strings that share their bytes (a name and its
// prefixes: one address, other lengths), and requires lookupCommand's
// answer every time.
func TestSpecCacheMatchesLookup(t *testing.T) {
	names := slices.Sorted(maps.Keys(commands))
	names = append(names, "EVALSHA", "evalsha", "MULTI", "Get", "", "SETNXX")
	var c specCache
	for round := 0; round < 3; round++ {
		for _, name := range names {
			// The name, then its prefixes, which start at its address.
			for l := len(name); l >= 0; l-- {
				s := name[:l]
				want, wantOK := lookupCommand(s)
				got, gotOK := c.lookup(s)
				if got != want || gotOK != wantOK {
					t.Fatalf("lookup(%q) = %+v %v, lookupCommand %+v %v", s, got, gotOK, want, wantOK)
				}
			}
			// A copy: the same name at another address.
			s := strings.Clone(name)
			want, wantOK := lookupCommand(s)
			if got, gotOK := c.lookup(s); got != want || gotOK != wantOK {
				t.Fatalf("lookup(copy of %q) = %+v %v, lookupCommand %+v %v", s, got, gotOK, want, wantOK)
			}
		}
	}
}
