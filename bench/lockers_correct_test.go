package bench

import (
	"context"
	"fmt"
	"testing"
)

// TestLockers checks that every benchmarked locker means what the
// benchmarks assume: an acquire on a held key is refused (not an error),
// a release frees the key, and a released key can be taken again.
func TestLockers(t *testing.T) {
	ctx := context.Background()
	var all []impl
	all = append(all, reentrantImpls...)
	all = append(all, simpleImpls...)
	all = append(all, redLockImpls(3)...)
	all = append(all, redLockImpls(5)...)
	for i, im := range all {
		t.Run(fmt.Sprintf("%s/nodes=%d", im.name, im.nodes), func(t *testing.T) {
			rcs := clients(t, im.nodes)
			if err := loadScripts(ctx, rcs); err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf("test:%d", i)
			a, err := im.newLocker(rcs, key, 0)
			if err != nil {
				t.Fatal(err)
			}
			b, err := im.newLocker(rcs, key, 1)
			if err != nil {
				t.Fatal(err)
			}
			mustAcquire(t, ctx, a, "a", true)
			mustAcquire(t, ctx, b, "b while a holds", false)
			if err := a.release(ctx); err != nil {
				t.Fatalf("a's release: %v", err)
			}
			mustAcquire(t, ctx, b, "b after a released", true)
			mustAcquire(t, ctx, a, "a while b holds", false)
			if err := b.release(ctx); err != nil {
				t.Fatalf("b's release: %v", err)
			}
			for _, rc := range rcs {
				if n := rc.Exists(ctx, key).Val(); n != 0 {
					t.Fatalf("key %s still exists on %s after the last release", key, rc.Options().Addr)
				}
			}
		})
	}
}

func mustAcquire(t *testing.T, ctx context.Context, l locker, what string, want bool) {
	t.Helper()
	ok, err := l.acquire(ctx)
	if err != nil {
		t.Fatalf("acquire by %s: %v", what, err)
	}
	if ok != want {
		t.Fatalf("acquire by %s: got %v, want %v", what, ok, want)
	}
}
