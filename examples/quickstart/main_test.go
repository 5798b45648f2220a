package main

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
)

// captureStdout runs f with os.Stdout going to a pipe and returns what f
// printed.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	return captureLines(t, f, nil)
}

// captureLines is captureStdout that also hands each line f prints (without
// its newline) to onLine, when not nil, as it arrives: onLine sees the
// moment a line was printed, not only its order. onLine runs on another
// goroutine; captureLines returns after its last call.
func captureLines(t *testing.T, f func(), onLine func(line string)) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	out := make(chan string)
	go func() {
		var b strings.Builder
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			b.WriteString(line)
			if onLine != nil && strings.HasSuffix(line, "\n") {
				onLine(strings.TrimSuffix(line, "\n"))
			}
			if err != nil {
				break
			}
		}
		out <- b.String()
	}()
	defer func() {
		os.Stdout = old
	}()
	f()
	_ = w.Close()
	s := <-out
	_ = r.Close()
	t.Logf("stdout:\n%s", s)
	return s
}

// TestQuickstart runs the program itself (main, with REDIS_ADDR) against a
// real redis-server: it takes the lock, works, releases it, and leaves no
// key behind.
func TestQuickstart(t *testing.T) {
	s := redistest.Start(t)
	t.Setenv("REDIS_ADDR", s.Addr)
	out := captureStdout(t, main)
	if want := "holding orders\nwork done\nreleased orders\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	rc := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rc.Close()
	if n := rc.Exists(context.Background(), "orders").Val(); n != 0 {
		t.Errorf("the lock's key is still there after the program released it")
	}
}

// TestQuickstartWaits: while another client holds the lock, the program
// waits, and takes it once the other releases it: its "holding orders"
// line comes out only after the other owner began to release, 300 ms in
// (the order of the lines alone could not show it: the program works for
// 2 s, so the release has always come by the time it returns).
func TestQuickstartWaits(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rc.Close()
	other, err := lock.NewFromRedis(rc, lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Lock("orders").Lock(ctx, "someone"); err != nil {
		t.Fatal(err)
	}
	var releasing atomic.Bool
	released := make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() {
		defer close(released)
		releasing.Store(true)
		if err := other.Lock("orders").Unlock(ctx, "someone"); err != nil {
			t.Error(err)
		}
	})
	// holdingAfterRelease is whether the other owner had begun to release
	// when the program said it held the lock (sawHolding): set by the line
	// reader, read after captureLines returns.
	var sawHolding, holdingAfterRelease bool
	var runErr error
	out := captureLines(t, func() { runErr = run(ctx, s.Addr, lock.Options{}) }, func(line string) {
		if line == "holding orders" && !sawHolding {
			sawHolding, holdingAfterRelease = true, releasing.Load()
		}
	})
	if runErr != nil || !strings.HasPrefix(out, "holding orders\n") {
		t.Errorf("run: %v, stdout %q; want it to take the lock once the other owner released it", runErr, out)
	}
	if sawHolding && !holdingAfterRelease {
		t.Error("run said it held the lock before the other owner released it: it did not wait")
	}
	<-released // the other's Unlock has returned before its client closes
}

// TestQuickstartLost: the lock's key is deleted while the program works
// (as a failover to a replica that never had it would lose it). The
// watchdog finds it lost at its next renewal, which ends the work early,
// and Unlock's error, ErrNotHeld, says so.
func TestQuickstartLost(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rc.Close()
	deleted := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if rc.Exists(ctx, "orders").Val() == 1 {
				rc.Del(ctx, "orders")
				deleted <- time.Now()
				return
			}
		}
		close(deleted)
	}()
	var runErr error
	// The watchdog renews every third of its 600 ms lease: it finds the
	// loss within about 200 ms, well inside the 2 s of work.
	out := captureStdout(t, func() { runErr = run(ctx, s.Addr, lock.Options{WatchdogTimeout: 600 * time.Millisecond}) })
	returned := time.Now()
	at, ok := <-deleted
	if !ok {
		t.Fatal("the lock's key never appeared")
	}
	if !errors.Is(runErr, lock.ErrNotHeld) || !strings.Contains(runErr.Error(), "lost while working") {
		t.Errorf("run: %v; want the loss, matching lock.ErrNotHeld", runErr)
	}
	if strings.Contains(out, "work done") || strings.Contains(out, "released") {
		t.Errorf("stdout %q: the work ran to its end or the lock was reported released", out)
	}
	if d := returned.Sub(at); d > 1500*time.Millisecond {
		t.Errorf("run returned %v after the key was deleted; the watchdog should have ended the work sooner", d)
	}
}

// TestQuickstartUnreachable: nothing listens at the address; run returns
// the connection error at once.
func TestQuickstartUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	start := time.Now()
	var runErr error
	captureStdout(t, func() { runErr = run(context.Background(), addr, lock.Options{}) })
	if runErr == nil || !strings.Contains(runErr.Error(), "connection refused") {
		t.Errorf("run: %v; want a refused connection", runErr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("giving up took %v", d)
	}
}
