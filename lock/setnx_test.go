package lock_test

import (
	"context"
	"testing"

	"github.com/locksim/locksim/lock"
)

// TestSetNX: SET NX PX GET takes a free key, is refused by another token,
// and recognises its own token (a retry whose first attempt set the key);
// the plain SET NX PX refuses its own token too. On miniredis and
// redis-server alike.
func TestSetNX(t *testing.T) {
	for name, start := range backends(t) {
		t.Run(name, func(t *testing.T) {
			conn := lock.NewRedisConn(start(t))
			ctx := context.Background()
			for _, c := range []struct {
				what, key, token string
				plain, want      bool
			}{
				{"free key", "k", "t1", false, true},
				{"held by another", "k", "t2", false, false},
				{"held by itself (a retry)", "k", "t1", false, true},
				{"plain: free key", "p", "t1", true, true},
				{"plain: held by itself", "p", "t1", true, false},
				{"plain: held by another", "p", "t2", true, false},
			} {
				got, err := lock.SetNX(ctx, conn, c.key, c.token, 10000, c.plain)
				if err != nil || got != c.want {
					t.Errorf("%s: SetNX = %v, %v; want %v", c.what, got, err, c.want)
				}
			}
			if v, err := conn.Do(ctx, "GET", "k"); err != nil || v != "t1" {
				t.Fatalf("k = %v, %v; the refused SETs must not have written", v, err)
			}
		})
	}
}
