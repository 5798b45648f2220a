package lock

//detlint:file-allow wallclock,goroutine,select production Runtime: the real clock and real goroutines.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// WallRuntime is the production Runtime: the machine's clock, real timers and
// goroutines, and 128-bit random identifiers from crypto/rand.
type WallRuntime struct{}

// Now implements Runtime.
func (WallRuntime) Now() time.Time { return time.Now() }

// Sleep implements Runtime.
func (WallRuntime) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AfterFunc implements Runtime.
func (WallRuntime) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Go implements Runtime.
func (WallRuntime) Go(_ string, f func()) { go f() }

// Parallel implements Runtime. The last f runs in the caller's goroutine
// while the others run in goroutines of their own: all run at once, as
// before, with one goroutine fewer per call. A RedLock request to N nodes
// is one Parallel call, and a fresh goroutine's small stack grows by
// copying on the way down go-redis's call path (runtime.copystack was the
// largest item of the spec's CPU profile on redis-server after the system
// calls); the caller's stack has grown already. Parallel returns, or
// passes on a panic of the last f, only once every f has returned.
func (WallRuntime) Parallel(fs ...func()) {
	if len(fs) == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, f := range fs[:len(fs)-1] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	defer wg.Wait() // a panic of the last f still waits for the others
	fs[len(fs)-1]()
}

// NewID implements Runtime.
func (WallRuntime) NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
