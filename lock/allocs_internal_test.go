package lock

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/internal/resend"
)

// refusingConn answers every script as a fair acquire refused with 100 ms
// to wait, and keeps a copy of the last arguments it was sent.
type refusingConn struct {
	Conn
	last []any
}

func (c *refusingConn) Eval(ctx context.Context, s *Script, keys []string, args ...any) (any, error) {
	c.last = append(c.last[:0], args...)
	return int64(100), nil
}

// TestFairTriesShareArguments: a fair acquire's tries send the same
// arguments but for the wall clock, which each try reads anew, and a try
// under a context marked once (a waiter's loop) allocates no more than the
// wall clock's box. The arguments are fair_acquire's, in its order.
func TestFairTriesShareArguments(t *testing.T) {
	conn := &refusingConn{}
	c, err := New(conn, WallRuntime{}, Options{ID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	f := c.FairLock("lk")
	var tr fairTry
	f.newTry(&tr, "o1", 0, 5000, "queue")
	ctx := c.noResendCtx(context.Background())
	if !resend.Forbidden(ctx) {
		t.Fatal("single-server client's script context is not marked")
	}
	var walls []any
	for range 2 {
		if ttl, got, err := f.tryOnce(ctx, &tr); err != nil || got != 0 || ttl != 100*time.Millisecond {
			t.Fatalf("tryOnce = %v, %v, %v; want refused with 100ms", ttl, got, err)
		}
		want := []any{int64(30000), "c1:o1", int64(5000), conn.last[fairWall], "queue", "1"}
		if !slices.Equal(conn.last, want) {
			t.Fatalf("sent %v, want %v", conn.last, want)
		}
		if _, ok := conn.last[fairWall].(int64); !ok {
			t.Fatalf("wall clock %#v is not an int64", conn.last[fairWall])
		}
		walls = append(walls, conn.last[fairWall])
		time.Sleep(2 * time.Millisecond)
	}
	if walls[0] == walls[1] {
		t.Errorf("two tries 2ms apart sent one wall clock %v", walls[0])
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := f.tryOnce(ctx, &tr); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("a fair try allocates %v times, want at most 1 (the wall clock)", allocs)
	}
}

// TestFieldArgKeepsFewOwners: fieldArg answers "<ID>:<owner>", the same
// value again without allocating, and keeps at most maxFields owners
// however many a client sees.
func TestFieldArgKeepsFewOwners(t *testing.T) {
	c, err := New(&refusingConn{}, WallRuntime{}, Options{ID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if f := c.fieldArg("o1"); f != "c1:o1" {
		t.Fatalf("fieldArg(o1) = %v", f)
	}
	allocs := testing.AllocsPerRun(100, func() { _ = c.fieldArg("o1") })
	if allocs != 0 {
		t.Errorf("a kept field allocates %v times", allocs)
	}
	for i := range 3 * maxFields {
		owner := fmt.Sprint("owner-", i)
		if f := c.fieldArg(owner); f != "c1:"+owner {
			t.Fatalf("fieldArg(%s) = %v", owner, f)
		}
	}
	if n := len(c.fields); n > maxFields {
		t.Errorf("%d owners kept, more than %d", n, maxFields)
	}
}
