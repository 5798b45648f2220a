package sim

import "time"

// event is one entry of the world's queue. Events run in the order of
// (at, seq): at the same time, in the order they were scheduled, which is
// what makes a run reproducible. seq is unique, so that order is total and
// the queue's inner layout never decides anything.
type event struct {
	q     *eventQueue
	at    time.Duration
	seq   uint64
	r     runner
	index int // position in the queue; -1 once run or cancelled
	// pooled: posted (World.post), with no handle anyone keeps, so the
	// event goes back to the world's free list when it runs.
	pooled bool
}

// runner is what an event runs. A func is one (runFunc); a type with a
// run method lets a struct that several events act on (a request's
// attempt) be scheduled without a closure for each.
type runner interface{ run() }

// runFunc runs a func as an event. (A func converts to an interface
// without an allocation: it is a pointer.)
type runFunc func()

func (f runFunc) run() { f() }

// Cancel takes the event off the queue (it will not run). Removing it at
// once, rather than marking it and skipping it when its time comes, keeps
// the queue as small as what is still to happen: timeouts that replies
// beat, and timers re-armed earlier, would otherwise pile up in it.
func (e *event) Cancel() {
	if e.pending() {
		e.q.remove(e.index)
	}
}

// pending reports whether the event is still to run. (An event embedded in
// another struct and never pushed has no queue: index 0 means nothing.)
func (e *event) pending() bool { return e.q != nil && e.index >= 0 }

// eventQueue is a binary min-heap of events by (at, seq), written out for
// *event (container/heap's interface calls cost a tenth of a run).
type eventQueue []*event

func (q eventQueue) empty() bool  { return len(q) == 0 }
func (q eventQueue) peek() *event { return q[0] }
func (q eventQueue) less(i, j int) bool {
	a, b := q[i], q[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (q eventQueue) swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}

func (q *eventQueue) push(e *event) {
	e.index = len(*q)
	*q = append(*q, e)
	q.up(e.index)
}

// pop removes and returns the first event.
func (q *eventQueue) pop() *event {
	e := (*q)[0]
	q.remove(0)
	return e
}

// remove takes the event at position i off the queue.
func (q *eventQueue) remove(i int) {
	h := *q
	e := h[i]
	last := len(h) - 1
	if i != last {
		h.swap(i, last)
	}
	h[last] = nil
	*q = h[:last]
	e.index = -1
	if i != last && !q.down(i) {
		q.up(i)
	}
}

func (q eventQueue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

// down sifts the event at i down and reports whether it moved.
func (q eventQueue) down(i int) bool {
	start := i
	n := len(q)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && q.less(c+1, c) {
			c++
		}
		if !q.less(c, i) {
			break
		}
		q.swap(i, c)
		i = c
	}
	return i > start
}
