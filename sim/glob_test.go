package sim

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
)

// TestMatchGlob pins matchGlob's cases by hand, the corners of Redis's
// stringmatchlen among them.
func TestMatchGlob(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		// As stringmatchlen: no pattern matches an empty name but the
		// empty one (KEYS * lists it only by its shortcut for "*"; PUBSUB
		// CHANNELS * leaves an empty channel out, redis-server 7.0).
		{"*", "", false},
		{"*", "abc", true},
		{"", "", true},
		{"", "a", false},
		{"a*", "a", true},
		{"a*b", "ab", true},
		{"a*b", "axxb", true},
		{"a*b", "axxbc", false},
		{"a**b*", "ab", true},
		{"?", "", false},
		{"??", "ab", true},
		{"[abc]", "b", true},
		{"[abc]", "d", false},
		{"[^abc]", "d", true},
		{"[^abc]", "a", false},
		{"[a-c]x", "bx", true},
		{"[c-a]x", "bx", true}, // ends in either order
		{"[a-]", "]", true},    // a range from a to ]
		{"[\\]]", "]", true},
		{"[", "[", false},  // an unclosed class matches nothing here
		{"[a", "a", true},  // unclosed, ends at the pattern's end
		{"[ab", "b", true}, // unclosed, still a class
		{"[]", "a", false},
		{"\\*", "*", true},
		{"\\*", "a", false},
		{"a\\", "a\\", true},
		{"lock:{*}", "lock:{x}", true},
		{"redisson_lock__channel:*", "redisson_lock__channel:{l}", true},
	}
	for _, c := range cases {
		if got := matchGlob(c.pattern, c.s); got != c.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}

// TestMatchGlobAsRedis holds matchGlob to a redis-server: random patterns
// and names over an alphabet of the glob's own bytes, KEYS pattern on the
// server against matchGlob over the same names. KEYS answers "*" without
// matching (every key, the empty name too), so that pattern is not drawn.
func TestMatchGlobAsRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	rc := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, DisableIdentity: true})
	defer rc.Close()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	draw := func(alphabet string, max int) string {
		b := make([]byte, r.IntN(max+1))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	var names []string
	for range 80 {
		names = append(names, draw("abc-^[]\\*", 5))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, k := range names {
		must(t, rc.Set(ctx, k, "v", 0).Err())
	}
	for range 400 {
		pattern := draw("abc-^[]\\*?", 7)
		if pattern == "*" {
			continue
		}
		got, err := rc.Keys(ctx, pattern).Result()
		must(t, err)
		slices.Sort(got)
		var want []string
		for _, k := range names {
			if matchGlob(pattern, k) {
				want = append(want, k)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("pattern %q: redis-server matches %q, matchGlob %q", pattern, got, want)
		}
	}
}
