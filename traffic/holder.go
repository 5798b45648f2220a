package traffic

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

// laneClient is a client of a world with lanes (sim.World.SetLanes): one
// run that stands for the runs of several belief models at once, since a
// holder's belief is its reading of the lock and changes nothing the lock,
// the network or the nodes do. Each lane is named by its model; a
// holder's "expire" records go into its model's lane instead of the
// history.
type laneClient interface {
	Lanes() []string
	RecordLane(i int, lock, op, detail string, args ...string)
}

// judged is the belief models a workload's holders keep: its own model,
// or in a world with lanes each lane's, recording into its lane.
type judged struct {
	models []Belief
	lanes  laneClient // nil: the one model records into the history
}

// judgedBy returns the models c's workload of the given kind judges its
// holders by: model, or the lanes' models when c's world has lanes. The
// first lane's model must be model (the world was built for it), and a
// workload that acts on its holders' belief (extends is true: it stops
// extending when its belief ends) cannot run in lanes, since its traffic
// would depend on the model.
func judgedBy(c Client, kind string, model Belief, extends bool) (judged, error) {
	lc, ok := c.(laneClient)
	if !ok {
		return judged{models: []Belief{model}}, nil
	}
	names := lc.Lanes()
	if len(names) == 0 {
		return judged{models: []Belief{model}}, nil
	}
	j := judged{lanes: lc}
	if extends {
		return judged{}, j.refuseExtending(kind, c.Name())
	}
	for _, n := range names {
		m, err := Belief(n).resolve(model, kind, c.Name())
		if err != nil {
			return judged{}, err
		}
		j.models = append(j.models, m)
	}
	if j.models[0] != model {
		return judged{}, fmt.Errorf("traffic: %s on client %s: the first lane's belief model is %s, the workload's %s", kind, c.Name(), j.models[0], model)
	}
	return j, nil
}

// refuseExtending is the error of a workload in lanes (j.lanes set) that
// extends its hold: it stops extending when its belief ends, so its
// traffic depends on the model and one world cannot stand for several.
func (j judged) refuseExtending(kind, client string) error {
	return fmt.Errorf("traffic: %s on client %s: lanes need a workload that does not act on its holders' belief, and this one stops extending when its belief ends", kind, client)
}

// observesLoss reports whether any of the models learns of a loss the
// watchdog reports.
func (j judged) observesLoss() bool {
	for _, m := range j.models {
		if m.observesLoss() {
			return true
		}
	}
	return false
}

// belief is what one holder (a client's owner, on one lock) believes it
// holds during one holding, and its own estimate of how long that stays
// valid, under each model judged (one but in a world with lanes). Under
// a model it records "expire" when the estimate runs out before the
// release.
type belief struct {
	c     Client
	rt    lock.Runtime
	lock  string
	owner string // "" for locks without owners
	ms    []*modelBelief
	// first and msBuf back ms[0] and ms when one model is judged (every
	// world but one with lanes): one allocation per holding, not three.
	first modelBelief
	msBuf [1]*modelBelief
}

// modelBelief is a holding's belief under one model.
type modelBelief struct {
	b     *belief
	model Belief // one of Beliefs (resolved)
	lane  int    // the lane its records go to; -1: the history
	held  bool   // between a successful acquire and the final release call or an expiry
	cur   *modelTimer
}

// leaseTimer is one acquire's validity estimate under each model (ts[i]
// for the belief's ms[i]; nil: none); a nil *leaseTimer has none under
// any.
type leaseTimer struct {
	ts []*modelTimer
	// buf backs ts under one model (belief.first).
	buf [1]*modelTimer
}

// at is the estimate under model i, or nil.
func (lt *leaseTimer) at(i int) *modelTimer {
	if lt == nil {
		return nil
	}
	return lt.ts[i]
}

// modelTimer is one acquire's validity estimate under one model, by the
// client's clock: it runs from the acquire's call for the lease (careful
// model) or from its reply (trusting model); the until-release model
// keeps none.
type modelTimer struct {
	mb    *modelBelief
	t     lock.Timer
	fired bool
}

func newBelief(c Client, rt lock.Runtime, lockName, owner string, j judged) *belief {
	b := &belief{c: c, rt: rt, lock: lockName, owner: owner}
	if len(j.models) == 1 {
		b.ms = b.msBuf[:]
	} else {
		b.ms = make([]*modelBelief, len(j.models))
	}
	for i, m := range j.models {
		lane := -1
		if j.lanes != nil {
			lane = i
		}
		mb := &b.first
		if i > 0 {
			mb = new(modelBelief)
		}
		*mb = modelBelief{b: b, model: m, lane: lane}
		b.ms[i] = mb
	}
	return b
}

// held reports whether the holder still believes it holds, under the
// first model: the one a workload acts on (judgedBy refuses lanes to a
// workload that does).
func (b *belief) held() bool { return b.ms[0].held }

// model is the first model, the one a workload acts on.
func (b *belief) model() Belief { return b.ms[0].model }

func (b *belief) args() []string {
	if b.owner == "" {
		return nil
	}
	return []string{b.owner}
}

// each returns a leaseTimer with f's estimate under each model (nil when
// none has one).
func (b *belief) each(f func(mb *modelBelief, i int) *modelTimer) *leaseTimer {
	var lt *leaseTimer
	for i, mb := range b.ms {
		if t := f(mb, i); t != nil {
			if lt == nil {
				lt = new(leaseTimer)
				if len(b.ms) == 1 {
					lt.ts = lt.buf[:]
				} else {
					lt.ts = make([]*modelTimer, len(b.ms))
				}
			}
			lt.ts[i] = t
		}
	}
	return lt
}

// startTimer starts a validity estimate of d under mb's model. It takes
// effect only when the acquire it is for succeeds (acquired); until then
// the previous estimate, if any, stands.
func (mb *modelBelief) startTimer(d time.Duration) *modelTimer {
	mt := &modelTimer{mb: mb}
	mt.t = mb.b.rt.AfterFunc(d, func() {
		mt.fired = true
		if mb.cur == mt && mb.held {
			mb.expire("")
		}
	})
	return mt
}

// calling returns the validity estimate to start at the call of an acquire
// with the given lease (0: the watchdog, none): the careful model's, which
// runs from the call. The trusting model starts its own at the reply
// (granted); the until-release model keeps none.
func (b *belief) calling(lease time.Duration) *leaseTimer {
	return b.each(func(mb *modelBelief, _ int) *modelTimer {
		if mb.model == BeliefCareful && lease > 0 {
			return mb.startTimer(lease)
		}
		return nil
	})
}

// granted notes a successful acquire whose call started lt (calling's,
// possibly nil): under the trusting model the estimate starts now, at the
// reply, for the lease.
func (b *belief) granted(lt *leaseTimer, lease time.Duration) {
	b.acquired(b.each(func(mb *modelBelief, i int) *modelTimer {
		if mb.model == BeliefTrusting && lease > 0 {
			return mb.startTimer(lease)
		}
		return lt.at(i)
	}))
}

// acquired notes a successful acquire whose validity estimate is lt (nil
// under a model: none, the watchdog keeps the lock). A reentrant
// acquire's estimate replaces the previous one, since the lock's lease
// restarted with it.
func (b *belief) acquired(lt *leaseTimer) {
	for i, mb := range b.ms {
		mb.acquired(lt.at(i))
	}
}

func (mb *modelBelief) acquired(mt *modelTimer) {
	if mt != nil {
		if mb.cur != nil && mb.cur != mt {
			mb.cur.t.Stop()
		}
		mb.cur = mt
	}
	mb.held = true
	if mt != nil && mt.fired {
		// The estimate ran out before the reply came: the holder knows at
		// once that it cannot rely on the lock.
		mb.expire("")
	}
}

// failed drops the estimate of an acquire that did not succeed.
func (b *belief) failed(lt *leaseTimer) {
	for i, mb := range b.ms {
		if mt := lt.at(i); mt != nil && mt != mb.cur {
			mt.t.Stop()
		}
	}
}

// releasing ends the belief at the call of the release that gives back the
// last hold.
func (b *belief) releasing() {
	for _, mb := range b.ms {
		mb.held = false
		if mb.cur != nil {
			mb.cur.t.Stop()
			mb.cur = nil
		}
	}
}

// validFrom returns the validity estimate of an acquire (or extension)
// called at call that returned a validity of its own (a user's lock's
// Grant.Validity): the careful model's runs out at call + validity, and
// has already when that instant is past (acquired then ends the belief at
// once); the trusting model's runs for validity from now, the reply; the
// until-release model keeps none (nil).
func (b *belief) validFrom(call time.Time, validity time.Duration) *leaseTimer {
	return b.each(func(mb *modelBelief, _ int) *modelTimer {
		if mb.model != BeliefCareful {
			return mb.estimate(validity)
		}
		left := validity - b.rt.Now().Sub(call)
		mt := mb.startTimer(max(left, 0))
		if left <= 0 {
			mt.fired = true
		}
		return mt
	})
}

// estimate returns a validity estimate of validity(model) from now under
// each model, none under the until-release model, whose holder keeps
// none: the estimate after a reply that the workload computed itself (the
// spec's RedLock's validity, an extension's).
func (b *belief) estimate(validity func(Belief) time.Duration) *leaseTimer {
	return b.each(func(mb *modelBelief, _ int) *modelTimer { return mb.estimate(validity(mb.model)) })
}

func (mb *modelBelief) estimate(d time.Duration) *modelTimer {
	if !mb.model.countsLease() {
		return nil
	}
	return mb.startTimer(d)
}

// expire records, under every model, that the holder's validity ran out
// (detail "") or that an extension failed ("extend-failed"), and ends the
// belief.
func (b *belief) expire(detail string) {
	for _, mb := range b.ms {
		mb.expire(detail)
	}
}

// lost records, under each model that observes a loss, that the holder was
// told the lock was lost ("expire", detail "lost"), and ends the belief
// under it; the other models' holders do not learn of it.
func (b *belief) lost() {
	for _, mb := range b.ms {
		if mb.model.observesLoss() {
			mb.expire("lost")
		}
	}
}

// expire records that the holder's validity under mb's model ran out
// (detail "") or that it learned of a loss ("lost"), and ends the belief
// under it.
func (mb *modelBelief) expire(detail string) {
	b := mb.b
	if mb.lane >= 0 {
		b.c.(laneClient).RecordLane(mb.lane, b.lock, history.OpExpire, detail, b.args()...)
	} else {
		op := b.c.BeginOp(b.lock, history.OpExpire, b.args()...)
		setDetail(op, detail)
		op.End(history.OutcomeOK, "")
	}
	mb.held = false
	if mb.cur != nil {
		mb.cur.t.Stop()
		mb.cur = nil
	}
}
