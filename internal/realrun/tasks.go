package realrun

// The run's goroutines and their end: the clients' tasks (each runs while
// it holds its client's baton, client.go), the timers and subscriptions
// they made, the background goroutines (the snapshotter, the fault
// scheduler, a fault's later step), and the stop that ends them all.

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/locksim/locksim/lock"
)

// tasks are the run's goroutines and its stop. ctx is cancelled at the
// stop; mu guards stopped, timers and subs. Once stopped, no task, timer,
// subscription or later step starts, and every task exits at its next
// sleep or Redis call (runtime.Goexit). wg counts the clients' tasks, bg
// the background goroutines.
type tasks struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	stopped bool
	timers  map[*wallTimer]struct{}
	subs    []lock.Subscription

	wg sync.WaitGroup
	bg sync.WaitGroup
}

func newTasks() *tasks {
	t := &tasks{timers: map[*wallTimer]struct{}{}}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t
}

func (t *tasks) isStopped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stopped
}

// exitIfStopped ends the calling task when the run is over.
func (t *tasks) exitIfStopped() {
	if t.isStopped() {
		runtime.Goexit()
	}
}

// spawn starts f as a task of c: a goroutine that runs while it holds c's
// baton (gil). done, if not nil, is called when the task ends, or at once
// when the run is over.
func (t *tasks) spawn(c *client, f func(), done func()) {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		if done != nil {
			done()
		}
		return
	}
	t.wg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		if done != nil {
			defer done()
		}
		c.gil.Lock()
		defer c.gil.Unlock()
		if t.isStopped() {
			return
		}
		f()
	}()
}

// wallTimer is a client's timer (clientRuntime.AfterFunc), stopped at the
// end of the run.
type wallTimer struct{ t *time.Timer }

func (t *wallTimer) Stop() bool { return t.t.Stop() }

// afterFunc starts f as a task of c after d, unless the run stops first
// (a timer made once it has stopped never fires).
func (t *tasks) afterFunc(c *client, d time.Duration, f func()) *wallTimer {
	wt := &wallTimer{}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		wt.t = time.NewTimer(time.Hour)
		wt.t.Stop()
		return wt
	}
	t.timers[wt] = struct{}{}
	wt.t = time.AfterFunc(d, func() {
		t.mu.Lock()
		delete(t.timers, wt)
		t.mu.Unlock()
		t.spawn(c, f, nil)
	})
	return wt
}

// addSub registers sub, which the stop closes so that a task waiting in
// its Next ends; false (sub not registered) once the run has stopped.
func (t *tasks) addSub(sub lock.Subscription) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	t.subs = append(t.subs, sub)
	return true
}

// removeSub forgets sub (closed by its task).
func (t *tasks) removeSub(sub lock.Subscription) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.subs = slices.DeleteFunc(t.subs, func(s lock.Subscription) bool { return s == sub })
}

// background runs f on a goroutine of its own, which close waits for.
func (t *tasks) background(f func()) {
	t.bg.Add(1)
	go func() {
		defer t.bg.Done()
		f()
	}()
}

// later runs f after d on a goroutine of its own, unless the run stops
// first.
func (t *tasks) later(d time.Duration, f func()) {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return
	}
	t.bg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.bg.Done()
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-t.ctx.Done():
		case <-tm.C:
			f()
		}
	}()
}

// halt stops the run: from now no task starts and every one exits at its
// next step, and ctx is cancelled. It returns clock's reading at the stop,
// taken with the flag set so that nothing records after it, and release,
// which stops the timers and closes the subscriptions registered by then.
func (t *tasks) halt(clock func() time.Duration) (end time.Duration, release func()) {
	t.mu.Lock()
	t.stopped = true
	end = clock()
	timers := make([]*wallTimer, 0, len(t.timers))
	for wt := range t.timers {
		timers = append(timers, wt)
	}
	clear(t.timers)
	subs := slices.Clone(t.subs)
	t.mu.Unlock()
	t.cancel()
	return end, func() {
		for _, wt := range timers {
			wt.t.Stop()
		}
		for _, sub := range subs {
			_ = sub.Close()
		}
	}
}

// markStopped stops a worker process's run: no task starts, ctx is
// cancelled; the tasks still running end with the process.
func (t *tasks) markStopped() {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
	t.cancel()
}

// waitTasks waits for the clients' tasks to end, at most timeout.
func (t *tasks) waitTasks(timeout time.Duration) error {
	done := make(chan struct{})
	go func() {
		t.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("realrun: the clients' goroutines did not stop within %v", timeout)
	}
}

// waitBackground waits for the background goroutines (ended by the stop).
func (t *tasks) waitBackground() { t.bg.Wait() }
