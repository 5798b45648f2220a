package sim

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

var _ lock.EvalWaiter = (*simConn)(nil)

// EvalWait implements lock.EvalWaiter as go-redis's pipeline does
// (lock.RedisConn.EvalWait): the script and the WAIT after it go to one
// node as one request, the node runs both, and a retry after a timeout
// resends both to the group's master then. Sent as two requests (Eval,
// then Do("WAIT")), a retried WAIT could reach a replica promoted since
// the script ran and count acknowledgements of writes that never reached
// it, reporting an acquire synced that died with the old master: real
// servers under Sentinel showed the synced acquire safe where the
// simulation, before this, did not. The script goes by SHA first and, on
// NOSCRIPT, by source, each time with its WAIT, as the pipeline does. The
// history has a req record for the script and one for the WAIT.
func (s *simConn) EvalWait(ctx context.Context, sc *lock.Script, keys []string, replicas int, timeout time.Duration, args ...any) (any, int64, error) {
	// As Eval: the arguments rendered straight into the command, whose
	// keys and arguments the req record shares (NOSCRIPT's retry changes a
	// copy).
	script, err := s.c.evalCommand(sc, keys, args)
	if err != nil {
		return nil, 0, err
	}
	wait := []string{"WAIT", strconv.Itoa(replicas), s.c.lastInt.Int(timeout.Milliseconds())}
	eh := s.c.beginReqTo(s.g, s.c.w.evalName(sc), script[3:len(script):len(script)])
	wh := s.c.beginReqTo(s.g, history.ReqWait, wait[1:])
	if err := notSent(ctx); err != nil {
		eh.endReq(nil, err)
		wh.endReq(nil, err)
		return nil, 0, err
	}
	p := &evalWaitPipe{client: s.c.name, script: script, wait: wait, waitReq: &wh}
	var extra time.Duration
	if s.c.cfg.Retry.WaitExtendsTimeout {
		extra = timeout
	}
	v, err := s.c.roundTripFor(ctx, s.g, "evalsha", &eh, nil, p, extra)
	if replyIs(err, "NOSCRIPT") {
		p.script = slices.Clone(script)
		p.script[0], p.script[1] = "EVAL", sc.Src
		v, err = s.c.roundTripFor(ctx, s.g, "eval", &eh, nil, p, extra)
	}
	reply, ok := v.(evalWaitReply)
	if err != nil || !ok {
		eh.endReq(nil, err)
		wh.endReq(nil, err)
		return nil, 0, err
	}
	eh.endReq(reply.v, nil)
	if reply.werr != nil {
		wh.endReq(nil, reply.werr)
		return reply.v, 0, &lock.WaitError{Err: reply.werr}
	}
	wh.setDetail(history.WaitDetail(reply.acked, reply.replicas))
	wh.endReq(reply.acked, nil)
	return reply.v, reply.acked, nil
}

// evalWaitPipe is EvalWait's request at the node: the script, then WAIT on
// the same connection.
type evalWaitPipe struct {
	client       string
	script, wait []string
	waitReq      *reqHandle
}

// evalWaitReply is the pipeline's answer: the script's reply and WAIT's.
type evalWaitReply struct {
	v        any
	acked    int64
	werr     error
	replicas int
}

// handle runs the script; a script that fails (NOSCRIPT: the caller sends
// it by source next; or an error reply) is the answer, the WAIT after it
// being of no use to the caller. Otherwise WAIT runs and the answer comes
// when it replies.
func (p *evalWaitPipe) handle(n *Node, r replier) {
	v, err := n.exec(p.client, p.script)
	if err != nil {
		r.answer(nil, err)
		return
	}
	p.waitReq.sentTo(n)
	p.waitReq.applied(n.w.now)
	n.wait(p.client, p.wait, func(wv any, werr error) {
		acked, _ := wv.(int64)
		r.answer(evalWaitReply{v: v, acked: acked, werr: werr, replicas: len(n.links)}, nil)
	})
}
