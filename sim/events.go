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

// eventQueue is a 4-ary min-heap of events by (at, seq), written out for
// *event (container/heap's interface calls cost a tenth of a run). Each
// entry carries its event's key, so that sifting compares entries without
// reading the events; four children a node halve the heap's depth, and a
// node's children sit side by side. (Any heap pops the same order: the
// key is unique.)
type eventQueue []queued

// queued is an entry of the queue: an event and its key.
type queued struct {
	at  time.Duration
	seq uint64
	e   *event
}

// before reports whether a's key is below b's.
func (a *queued) before(b *queued) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (q eventQueue) empty() bool  { return len(q) == 0 }
func (q eventQueue) peek() *event { return q[0].e }

func (q *eventQueue) push(e *event) {
	e.index = len(*q)
	*q = append(*q, queued{at: e.at, seq: e.seq, e: e})
	q.up(e.index)
}

// pop removes and returns the first event.
func (q *eventQueue) pop() *event {
	e := (*q)[0].e
	q.remove(0)
	return e
}

// remove takes the event at position i off the queue: the last entry
// takes its place and moves down or up to where it belongs.
func (q *eventQueue) remove(i int) {
	h := *q
	e := h[i].e
	last := len(h) - 1
	if i != last {
		h[i] = h[last]
		h[i].e.index = i
	}
	h[last] = queued{}
	*q = h[:last]
	e.index = -1
	if i != last && !q.down(i) {
		q.up(i)
	}
}

// up moves the entry at i towards the root to its place.
func (q eventQueue) up(i int) {
	x := q[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.before(&q[p]) {
			break
		}
		q[i] = q[p]
		q[i].e.index = i
		i = p
	}
	q[i] = x
	x.e.index = i
}

// down moves the entry at i towards the leaves to its place and reports
// whether it moved.
func (q eventQueue) down(i int) bool {
	start := i
	n := len(q)
	x := q[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c // the least child
		for k, end := c+1, min(c+4, n); k < end; k++ {
			if q[k].before(&q[m]) {
				m = k
			}
		}
		if !q[m].before(&x) {
			break
		}
		q[i] = q[m]
		q[i].e.index = i
		i = m
	}
	q[i] = x
	x.e.index = i
	return i > start
}
