package redistest

// Clock faults on real servers: a redis-server started under libfaketime
// (Debian packages faketime and libfaketime), whose wall clock the test
// moves by rewriting a file, as Jepsen's clock nemesis moves a node's clock.
//
// What was found on Debian 12 (redis-server 7.0.15, libfaketime 0.9.10),
// and is pinned by TestFakeClock*:
//
//   - Debian's redis-server links jemalloc dynamically (libjemalloc.so.2),
//     and libfaketime cannot start under jemalloc: its initialisation calls
//     dlsym, which allocates, jemalloc's initialisation calls
//     clock_gettime, which re-enters libfaketime before it is ready, and the
//     server hangs on a futex before it listens (libfaketime issues #130
//     and #327, unfixed). Preloading libc.so.6 after libfaketime binds
//     malloc and free to glibc's allocator (the preloaded libc precedes
//     libjemalloc in the lookup order, and libfaketime defines no malloc),
//     so the server runs, on glibc malloc: INFO memory still names jemalloc,
//     whose statistics then stay near zero. Nothing of the lock semantics
//     depends on the allocator.
//   - Redis 7.0's key expiry reads the realtime clock (mstime, i.e.
//     gettimeofday), both when a command touches a key and in the active
//     expire cycle; its timers (the event loop, INFO's monotonic_clock:
//     "POSIX clock_gettime") read CLOCK_MONOTONIC. libfaketime fakes both
//     unless FAKETIME_DONT_FAKE_MONOTONIC=1. A FakeClock sets it: an NTP
//     step or an operator's `date -s` moves CLOCK_REALTIME only, and a
//     backward jump of a faked monotonic clock would stall the server's
//     timers. A key set with PX 10000 is gone at once after a +20 s jump
//     (TestFakeClockJumpExpiresKey), with the monotonic clock untouched.
//   - The file is read on every clock call (FAKETIME_NO_CACHE=1), so that a
//     jump takes effect at the server's next command; it is replaced by a
//     rename, so that no read sees half a file.
//   - A rate ("+0 x1.001") scales the time elapsed since the process
//     started (libfaketime's own start), not since the file changed: a
//     FakeClock compensates in the offset it writes, so that its clock is
//     continuous at a rate change and across a restart.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// FaketimeEnv names the environment variable that, when set, is the path of
// libfaketime.so.1 (instead of the Debian paths FaketimeLib searches).
const FaketimeEnv = "LOCKSIM_LIBFAKETIME"

// ErrNoFaketime is returned (wrapped) by FaketimeLib when libfaketime is not
// installed.
var ErrNoFaketime = errors.New("libfaketime not found (apt-get install faketime libfaketime)")

// FaketimeLib returns the path of libfaketime.so.1: $LOCKSIM_LIBFAKETIME, or
// where Debian's libfaketime package puts it
// (/usr/lib/<multiarch>/faketime/libfaketime.so.1).
func FaketimeLib() (string, error) {
	if p := os.Getenv(FaketimeEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: $%s: %v", ErrNoFaketime, FaketimeEnv, err)
		}
		return p, nil
	}
	for _, pat := range []string{"/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1",
		"/usr/local/lib/faketime/libfaketime.so.1"} {
		if m, _ := filepath.Glob(pat); len(m) > 0 {
			return m[0], nil
		}
	}
	return "", ErrNoFaketime
}

// FaketimeLibrary returns libfaketime's path, or skips t when it is not
// installed (fails it when LOCKSIM_REQUIRE_REDIS is set, as CI sets it).
func FaketimeLibrary(t testing.TB) string {
	t.Helper()
	lib, err := FaketimeLib()
	if err != nil {
		if os.Getenv("LOCKSIM_REQUIRE_REDIS") != "" {
			t.Fatalf("%v and LOCKSIM_REQUIRE_REDIS is set", err)
		}
		t.Skipf("%v; set LOCKSIM_REQUIRE_REDIS=1 to make this a failure", err)
	}
	return lib
}

// FakeClock is the wall clock of one server started under libfaketime
// (Config.Clock): an offset from the machine's clock and a rate, written to
// a file the server reads at every clock call. Its methods are safe for
// concurrent use. The clock it gives the server is, at real time t,
//
//	fake(t) = t + offset + (t - start)·(rate - 1)
//
// where start is the server's (last) start: libfaketime scales the time
// since its process started.
type FakeClock struct {
	lib  string
	path string

	mu     sync.Mutex
	offset time.Duration // libfaketime's offset, as written
	rate   float64       // 1: the machine's rate
	start  time.Time     // the server's last start (zero: not started)
}

// NewFakeClock makes the clock file path (offset 0, rate 1) for a server to
// be started under libfaketime lib (FaketimeLib).
func NewFakeClock(lib, path string) (*FakeClock, error) {
	c := &FakeClock{lib: lib, path: path, rate: 1}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c, c.writeLocked()
}

// Path is the clock file.
func (c *FakeClock) Path() string { return c.path }

// env is what the server's environment gets: libfaketime preloaded (with
// libc after it, see the file comment: jemalloc), the clock file re-read at
// every call, the monotonic clock left alone.
func (c *FakeClock) env() []string {
	return []string{
		"LD_PRELOAD=" + c.lib + " libc.so.6",
		"FAKETIME_TIMESTAMP_FILE=" + c.path,
		"FAKETIME_NO_CACHE=1",
		"FAKETIME_DONT_FAKE_MONOTONIC=1",
	}
}

// started tells the clock that its server (re)starts now, before the exec:
// libfaketime's rate counts from the process's start, so the offset takes
// what the rate had added since the previous start, and the clock goes on
// from where it was.
func (c *FakeClock) started(now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.start.IsZero() {
		c.offset += scale(now.Sub(c.start), c.rate-1)
	}
	c.start = now
	return c.writeLocked()
}

// reaped removes what libfaketime left of the killed process pid: it
// creates a shared-memory segment and a semaphore per process
// (/dev/shm/faketime_shm_<pid>, /dev/shm/sem.faketime_sem_<pid>) and
// removes them only at a normal exit, which a SIGKILL skips.
func (c *FakeClock) reaped(pid int) {
	for _, name := range []string{"faketime_shm_", "sem.faketime_sem_"} {
		_ = os.Remove(filepath.Join("/dev/shm", name+strconv.Itoa(pid)))
	}
}

// Jump moves the clock by by (negative: backward) from now on.
func (c *FakeClock) Jump(by time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += by
	return c.writeLocked()
}

// SetDrift makes the clock run ppm parts per million fast (negative: slow)
// from now on, continuous at the change.
func (c *FakeClock) SetDrift(ppm int64) error {
	if ppm <= -1_000_000 || ppm >= 1_000_000 {
		return fmt.Errorf("redistest: drift %d ppm out of range (-1000000, 1000000)", ppm)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rate := 1 + float64(ppm)/1e6
	if !c.start.IsZero() {
		// fake(t0) must not move: (t0-start)·(old-1) + offset =
		// (t0-start)·(new-1) + offset'.
		c.offset += scale(time.Since(c.start), c.rate-rate)
	}
	c.rate = rate
	return c.writeLocked()
}

// Offset is how far the clock is ahead of the machine's now (negative:
// behind).
func (c *FakeClock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	off := c.offset
	if !c.start.IsZero() {
		off += scale(time.Since(c.start), c.rate-1)
	}
	return off
}

func scale(d time.Duration, f float64) time.Duration { return time.Duration(float64(d) * f) }

// writeLocked replaces the clock file by one with the current offset and
// rate (a rename: a reader sees the old file or the new one). c.mu is held.
func (c *FakeClock) writeLocked() error {
	// The rate is always written: libfaketime keeps the last rate it read
	// when a file has none (found with TestFakeClockDrift).
	spec := fmt.Sprintf("%+.6f x%.9f", c.offset.Seconds(), c.rate)
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(spec+"\n"), 0o644); err != nil {
		return fmt.Errorf("redistest: clock file: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("redistest: clock file: %w", err)
	}
	return nil
}
