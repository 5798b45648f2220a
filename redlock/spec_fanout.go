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
// node's answer. Its tasks, closures made once per fanout, read them, so
// that a call allocates neither closures nor result slices; a Spec keeps
// its idle fanouts for the next call (takeFanout, onAll).
type fanout struct {
	s     *Spec
	ctx   context.Context
	call  nodeCall
	setNX scripts.SetNXCmd // nodeSetNX's, the key and TTL set once
	keys  []string         // the scripts' KEYS and ARGV
	args  []any
	oks   []bool
	errs  []error
	tasks []func()
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
// the tasks would otherwise capture: moved to the heap on every call, the
// pooled ones' too.)
func (s *Spec) newFanout() *fanout {
	n := len(s.conns)
	fo := &fanout{s: s, oks: make([]bool, n), errs: make([]error, n), tasks: make([]func(), n),
		setNX: scripts.NewSetNXCmd(s.key, s.opts.TTL.Milliseconds(), s.opts.PlainSetNX)}
	for i := range fo.tasks {
		fo.tasks[i] = func() { fo.run(i) }
	}
	return fo
}

// run asks node i and notes its answer: whether it granted, extended or
// released, and its error, naming the node.
func (fo *fanout) run(i int) {
	c := fo.s.conns[i]
	var ok bool
	var err error
	switch fo.call {
	case nodeSetNX:
		ok, err = scripts.SetNXWith[lock.ReplyError](fo.ctx, c, &fo.setNX)
	case nodeExtend, nodeRelease:
		sc := scripts.SimpleRelease
		if fo.call == nodeExtend {
			sc = scripts.RedlockExtend
		}
		var v any
		v, err = c.Eval(fo.ctx, sc, fo.keys, fo.args...)
		n, _ := v.(int64)
		ok = err == nil && n == 1
	}
	fo.oks[i] = ok
	if err != nil {
		fo.errs[i] = fmt.Errorf("node %d: %w", i, err)
	}
}

// onAll runs fo's call against every node in parallel (one task per node,
// joined by Runtime.Parallel) and returns how many answered true, with the
// nodes' errors joined, each naming its node index. fo goes back to s's
// idle fanouts, cleared; a call that never returns (a task panicked, or
// the simulated world closed under it) just never gives it back.
func (s *Spec) onAll(fo *fanout) (int, error) {
	s.rt.Parallel(fo.tasks...)
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
	s.mu.Lock()
	s.fanouts = append(s.fanouts, fo)
	s.mu.Unlock()
	return n, err
}
