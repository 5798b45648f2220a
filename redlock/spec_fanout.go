package redlock

import (
	"context"
	"errors"
	"fmt"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
)

// nodeCall is what a fan-out asks of every node.
type nodeCall int

const (
	nodeSetNX   nodeCall = iota // SET key token NX PX ttl (scripts.SetNX)
	nodeExtend                  // compare-and-PEXPIRE (scripts.RedlockExtend)
	nodeRelease                 // compare-and-delete (scripts.SimpleRelease)
)

// fanout is one onAll call's state: the call and its arguments, and each
// node's answer. Its requests (calls) and the func that notes their
// answers (done) are made once per fanout and read these fields, so that
// a call through a lock.Caller (the simulation's Runtime) allocates
// neither closures nor result slices; a Spec keeps its idle fanouts for
// the next call (takeFanout, onAll).
type fanout struct {
	s     *Spec
	ctx   context.Context
	call  nodeCall
	setNX scripts.SetNXCmd // nodeSetNX's, the key and TTL set once
	keys  []string         // the scripts' KEYS and ARGV
	args  []any
	oks   []bool
	errs  []error
	// calls are the requests to each node (their Conn set once, the rest
	// by onAll); done notes node i's answer.
	calls []lock.Call
	done  func(i int, v any, err error)
	// keyBuf and argBuf back keys and args.
	keyBuf [2]string
	argBuf [2]any
}

// takeFanout returns an idle fanout of s (a new one if every one is in use)
// set up for call under ctx.
func (s *Spec) takeFanout(ctx context.Context, call nodeCall) *fanout {
	s.mu.Lock()
	var fo *fanout
	if n := len(s.fanouts); n > 0 {
		fo, s.fanouts = s.fanouts[n-1], s.fanouts[:n-1]
	}
	s.mu.Unlock()
	if fo == nil {
		fo = s.newFanout()
	}
	fo.ctx, fo.call = ctx, call
	return fo
}

// newFanout returns a new fanout of s. (Apart from takeFanout, whose fo
// the func would otherwise capture: moved to the heap on every call, the
// pooled ones' too.)
func (s *Spec) newFanout() *fanout {
	n := len(s.conns)
	fo := &fanout{s: s, oks: make([]bool, n), errs: make([]error, n), calls: make([]lock.Call, n),
		setNX: scripts.NewSetNXCmd(s.key, s.opts.TTL.Milliseconds(), s.opts.PlainSetNX)}
	for i, c := range s.conns {
		fo.calls[i].Conn = c
	}
	fo.done = fo.note
	return fo
}

// setCalls sets every node's request to fo's call and its arguments.
func (fo *fanout) setCalls() {
	var sc *lock.Script
	keys, args := fo.keys, fo.args
	switch fo.call {
	case nodeSetNX:
		keys, args = nil, fo.setNX.Args()
	case nodeExtend:
		sc = scripts.RedlockExtend
	case nodeRelease:
		sc = scripts.SimpleRelease
	}
	for i := range fo.calls {
		c := &fo.calls[i]
		c.Script, c.Keys, c.Args = sc, keys, args
	}
}

// note notes node i's answer v, err: whether it granted, extended or
// released, and its error, naming the node.
func (fo *fanout) note(i int, v any, err error) {
	var ok bool
	switch fo.call {
	case nodeSetNX:
		ok, err = scripts.SetNXReply[lock.ReplyError](&fo.setNX, v, err)
	case nodeExtend, nodeRelease:
		n, _ := v.(int64)
		ok = err == nil && n == 1
	}
	fo.oks[i] = ok
	if err != nil {
		fo.errs[i] = fmt.Errorf("node %d: %w", i, err)
	}
}

// onAll runs fo's call against every node in parallel (lock.CallAll: the
// Runtime's lock.Caller, which the simulation's is, or a task per node
// joined by Runtime.Parallel) and returns how many answered true, with the nodes'
// errors joined, each naming its node index. fo goes back to s's
// idle fanouts, cleared; a call that never returns (a task panicked, or
// the simulated world closed under it) just never gives it back.
func (s *Spec) onAll(fo *fanout) (int, error) {
	fo.setCalls()
	lock.CallAll(fo.ctx, s.rt, fo.calls, fo.done)
	n := 0
	for _, ok := range fo.oks {
		if ok {
			n++
		}
	}
	err := errors.Join(fo.errs...)
	clear(fo.oks)
	clear(fo.errs)
	clear(fo.argBuf[:])
	fo.setNX.SetToken("")
	fo.ctx, fo.keys, fo.args = nil, nil, nil
	for i := range fo.calls {
		c := &fo.calls[i]
		c.Script, c.Keys, c.Args = nil, nil, nil
	}
	s.mu.Lock()
	s.fanouts = append(s.fanouts, fo)
	s.mu.Unlock()
	return n, err
}
