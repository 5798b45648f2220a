package sim

// Pub/sub: a client's subscription to a channel, held by the node that was
// its group's master when it subscribed; what that node publishes reaches
// the subscriber as network pushes, and its crash ends the subscription.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2/server"

	"github.com/locksim/locksim/lock"
)

// ErrSubscriptionLost is returned by Subscription.Next after the node that
// held the subscription crashed.
var ErrSubscriptionLost = errors.New("sim: subscription lost: node crashed")

// subscribedOn is SUBSCRIBE's answer on its way to the client: the node
// that took the subscription, for the req record. (A struct of one
// pointer: an interface holds it without an allocation.)
type subscribedOn struct{ n *Node }

// Subscribe records a "subscribe" req record (Args the channel), whose
// Detail names the node that took the subscription ("on m1"): a waiter
// hears of a release only from that node.
//
// A cancel of ctx (by simulated code: ctxwait.go) ends the wait for the
// confirmation at once with the context's error, as lock.RedisConn's
// Subscribe closes its pub/sub connection: the subscription is dropped,
// unsubscribed at its node if the request already reached one, and never
// taken by a node it reaches later; so is one whose attempts all timed
// out. Its requests, confirmation and messages go on a connection of its
// own (simSub.fifo).
func (s *simConn) Subscribe(ctx context.Context, channel string) (lock.Subscription, error) {
	sub := &simSub{c: s.c, channel: channel, op: s.c.w.curOp()}
	sub.args[0] = channel
	h := s.c.beginReqTo(s.g, "subscribe", sub.args[:])
	h.noRuns = true
	h.cancellable = true
	r := s.c.request(ctx, s.g, "subscribe", nil, (*subscribing)(sub), 0)
	r.via = &sub.fifo
	v, err := s.c.attemptsFrom(ctx, &r, &h, 0)
	if on, ok := v.(subscribedOn); ok {
		v = "subscribe"
		h.setDetail(on.n.subDetail())
	}
	h.endReq(v, err)
	if err != nil {
		// Nobody will read or close it: dropped, as lock.RedisConn's
		// Subscribe closes its pub/sub connection on any error (a node
		// the request reached, or reaches later, keeps no subscription).
		_ = sub.Close()
		return nil, err
	}
	return sub, nil
}

// subscribing is a SUBSCRIBE's handler at the node: the subscription is
// taken unless it was dropped meanwhile, and the answer names the node.
type subscribing simSub

func (sub *subscribing) handle(n *Node, r replier) {
	if !sub.closed {
		n.subscribe((*simSub)(sub))
	}
	r.answer(subscribedOn{n}, nil)
}

// subDetail is the Detail of a subscribe req record answered by n ("on
// m1"), and unsubDetail that of an unsubscribe sent to n: made once per
// node, not per request.
func (n *Node) subDetail() string {
	if n.subText == "" {
		n.subText = "on " + n.name
	}
	return n.subText
}

func (n *Node) unsubDetail() string {
	if n.unsubText == "" {
		n.unsubText = "on " + n.name + ", no reply awaited"
	}
	return n.unsubText
}

// simSub is the simulation's lock.Subscription.
type simSub struct {
	c       *Client
	channel string
	args    [1]string // the channel: its subscribe and unsubscribe records' Args
	node    *Node
	queue   []pushed
	waiter  *waiter
	closed  bool
	broken  bool
	op      *opRun // the op that subscribed: its pushes belong to it
	// fifo is when the last message on the subscription's connection
	// arrives, in each direction (by fifoDir): its SUBSCRIBE and
	// UNSUBSCRIBE, the confirmation and the pushes go on a connection of
	// their own, FIFO on it (go-redis's PubSub has one, Redisson's
	// subscriptions go on its pub/sub connections), neither behind nor
	// ahead of the client's commands, each on a connection of its own
	// (attempt.own).
	fifo [2]time.Duration
}

// pushed is a message delivered to a subscription and not yet taken,
// with whether it came while no Next was waiting (Queued tells).
type pushed struct {
	msg  string
	idle bool
}

func (n *Node) subscribe(s *simSub) {
	s.node = n
	if !slices.Contains(n.subs[s.channel], s) {
		n.subs[s.channel] = append(n.subs[s.channel], s)
	}
}

// receivers is PUBLISH's count: the clients subscribed to channel on
// this node (each subscription its own connection, as go-redis's PubSub
// is), not counting a crashed client's, whose connections its operating
// system closed: PUBLISH's answer on the short way and from the hook.
// miniredis counts only its own subscribers, which the simulation's are
// not (it has none): its PUBLISH answered 0 to every publisher, where
// Redis answers how many received the message, which a user's script may
// read.
func (n *Node) receivers(channel string) int {
	c := 0
	for _, s := range n.subs[channel] {
		if !s.c.crashed {
			c++
		}
	}
	return c
}

// publish sends msg to the channel's subscribers as network messages.
func (n *Node) publish(channel, msg string) {
	for _, s := range n.subs[channel] {
		s.send(msgPush, n, "message "+channel, s.op, func() { s.deliver(msg) })
	}
}

func (s *simSub) deliver(msg string) {
	if s.closed {
		return
	}
	s.queue = append(s.queue, pushed{msg: msg, idle: s.waiter == nil})
	if s.waiter != nil {
		s.waiter.wake(nil)
	}
}

// lost tells the subscriber its node crashed (a connection reset, which can
// itself be lost in a partition).
func (s *simSub) lost(n *Node) {
	s.send(msgPush, n, "connection reset "+s.channel, s.op, func() {
		s.broken = true
		if s.waiter != nil {
			s.waiter.wake(nil)
		}
	})
}

// send sends a message of s's connection to or from node n (fifo).
func (s *simSub) send(kind msgKind, n *Node, what string, op *opRun, deliver func()) {
	s.c.sendOn(kind, s.c.link(n), &s.fifo[fifoDir(kind)], what, op, runFunc(deliver))
}

// Next waits up to timeout of the client's clock for a message. It ends
// early, with the context's error, when ctx ends during the wait (by a
// cancel in simulated code: see ctxwait.go), as lock.RedisConn's does.
func (s *simSub) Next(ctx context.Context, timeout time.Duration) (string, bool, error) {
	w := s.c.w
	if s.closed {
		return "", false, errors.New("sim: Next on a closed subscription")
	}
	if len(s.queue) == 0 && !s.broken {
		if err := ctx.Err(); err != nil {
			return "", false, err
		}
		x := w.newCtxWaiter("Subscription.Next")
		wt := &x.wt
		s.waiter = wt
		tm := w.after(s.c.clock.WorldSpan(timeout), func() { wt.wake(timeoutMark{}) })
		cw := w.watch(ctx, x)
		v := wt.wait()
		w.unwatch(cw)
		tm.Cancel()
		s.waiter = nil
		if _, ok := v.(ctxDone); ok {
			// The caller's context ended: as lock.RedisConn's Next, return
			// its error at once (a message that came in the same instant
			// stays queued).
			return "", false, ctx.Err()
		}
	}
	if m, _, ok := s.Queued(); ok {
		return m, true, nil
	}
	if s.broken {
		return "", false, ErrSubscriptionLost
	}
	return "", false, ctx.Err()
}

// Queued implements lock.QueuedMessages: the oldest message delivered and
// not yet taken, without waiting, and whether it came while no Next was
// waiting (idle). A message that came while a Next waited (it woke that
// Next) is not idle. The woken waiter runs at once, before a message
// delivered at the same instant after it, which is then idle: where a
// Java thread woken from a semaphore is counted among its queue until it
// runs, so that a read unlock at that instant would still give it a
// permit (rare: a lock's script publishes once per release).
func (s *simSub) Queued() (msg string, idle, ok bool) {
	if len(s.queue) == 0 {
		return "", false, false
	}
	m := s.queue[0]
	s.queue = s.queue[1:]
	return m.msg, m.idle, true
}

func (s *simSub) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if n := s.node; n != nil && !s.broken {
		// Sent without waiting for a reply: the record returns at once,
		// naming the node the subscription was on. A process unwinding
		// at World.Close is not the client unsubscribing: no record.
		if !s.c.w.closed {
			h := s.c.beginReqOn(n.name, "unsubscribe", s.args[:])
			h.setDetail(n.unsubDetail())
			h.endReq("unsubscribe", nil)
		}
		s.send(msgRequest, n, "unsubscribe "+s.channel, s.c.w.curOp(), func() {
			n.subs[s.channel] = slices.DeleteFunc(n.subs[s.channel], func(x *simSub) bool { return x == s })
		})
	}
	return nil
}

// answerPubsub answers PUBSUB's introspection from the hook, as Redis
// answers it, from the node's subscriptions: miniredis knows only its own
// subscribers, and the simulation's are the node's (receivers), so its
// answers were an empty list and zeros whatever the clients held. It
// reports whether it answered; a subcommand it does not know, or one with
// the wrong number of arguments, is left to miniredis's error.
//
//   - NUMSUB channel...: each channel and its count of subscribed clients
//     (crashed clients' connections are closed: not counted).
//   - CHANNELS [pattern]: the channels with a subscriber, sorted (Redis's
//     order is its dictionary's, which it does not promise), those that
//     match pattern (Redis's glob, matchGlob) if one is given.
//   - NUMPAT: 0, SHARDCHANNELS: none, SHARDNUMSUB: zeros: the simulation
//     has no pattern or shard subscriptions.
//
// Inside MULTI it answers an error that says why, and the EXEC aborts
// (refusedInMulti).
func (n *Node) answerPubsub(c *server.Peer, cmd string, args []string) bool {
	if cmd != "PUBSUB" || len(args) == 0 {
		return false
	}
	sub, rest := strings.ToUpper(args[0]), args[1:]
	if !pubsubAnswered(sub, rest) {
		return false
	}
	if n.refusedInMulti(c, cmd, "miniredis would answer it without the node's subscribers") {
		return true
	}
	n.writePubsub(c, sub, rest)
	return true
}

// pubsubAnswered reports whether answerPubsub answers PUBSUB's subcommand
// sub (upper case) with arguments rest.
func pubsubAnswered(sub string, rest []string) bool {
	switch sub {
	case "CHANNELS", "SHARDCHANNELS":
		return len(rest) <= 1
	case "NUMSUB", "SHARDNUMSUB":
		return true
	case "NUMPAT":
		return len(rest) == 0
	}
	return false
}

// writePubsub writes answerPubsub's answer to c.
func (n *Node) writePubsub(c *server.Peer, sub string, rest []string) {
	switch sub {
	case "NUMPAT":
		c.WriteInt(0)
	case "SHARDCHANNELS":
		c.WriteLen(0)
	case "NUMSUB", "SHARDNUMSUB":
		c.WriteLen(2 * len(rest))
		for _, ch := range rest {
			c.WriteBulk(ch)
			if sub == "NUMSUB" {
				c.WriteInt(n.receivers(ch))
			} else {
				c.WriteInt(0)
			}
		}
	case "CHANNELS":
		var active []string
		//detlint:allow maprange the channels are sorted next
		for ch := range n.subs {
			if n.receivers(ch) > 0 && (len(rest) == 0 || matchGlob(rest[0], ch)) {
				active = append(active, ch)
			}
		}
		slices.Sort(active)
		c.WriteStrings(active)
	}
}
