// The read-write lock's model: many readers or one writer.

package checker

import (
	"cmp"
	"slices"
	"strings"
)

// rwHold is one holder's hold count (range) of one half, and from when
// the nodes may have forgotten it on its own (gone, never when they did
// not): a failover to a replica that had the lock's hash without this
// reader's field (its write never replicated) drops one reader and keeps
// the others, which the lock-wide exp cannot say.
type rwHold struct {
	holder int32
	lo, hi int32
	gone   int64
}

// rwState is the read-write lock's hash: its writer and write count, its
// readers and read counts (sorted by holder; in write mode only the
// writer's own), from when the whole lock may have expired, the earliest
// lease end of the read acquisitions since the lock was created (a read
// release shortens the lock to its longest remaining read acquisition, which
// ends no earlier than that), and a lower bound on the current linearization
// point.
//
// A read acquire is legal with no writer or with the acquirer as writer
// (downgrade), and extends the lock to its own lease if that ends later; it
// is refused only by another writer. A write acquire is legal on a free lock
// or by the writer (nesting adds the lease to the remaining TTL, as Redisson
// does), refused by readers (its own read holds included: no upgrade) or
// another writer. Any acquire may also find the lock expired, once its
// return is at or after exp. Releasing a half one does not hold fails, in a
// lock that exists and in one that does not (Redisson's unlocks answer nil
// on a missing lock since 3.44.0; 4.7.0's RedissonReadLock and
// RedissonWriteLock), and a holder's release may fail once the lock may
// have expired. A release that succeeds on a lock that does not exist, or
// may have expired, is legal too: the unlock latch answers a resent unlock
// as the first one did, after the first one deleted the lock.
type rwState struct {
	writer   int32 // -1: none
	wlo, whi int32
	readers  []rwHold
	exp      int64
	rmin     int64
	at       int64
}

func (s *rwState) free() bool { return s.writer < 0 && len(s.readers) == 0 }

// freed is the free lock at linearization point at.
func freed(at int64) *rwState { return &rwState{writer: -1, rmin: never, at: at} }

func (s *rwState) reader(h int32) int {
	for i, r := range s.readers {
		if r.holder == h {
			return i
		}
	}
	return -1
}

// withReader returns a new state: s with h's read hold set to [lo, hi],
// forgotten from gone (removed when hi == 0), normalised to the free lock
// when nothing is held.
func (s *rwState) withReader(h, lo, hi int32, gone int64) *rwState {
	rs := make([]rwHold, 0, len(s.readers)+1)
	for _, r := range s.readers {
		if r.holder != h {
			rs = append(rs, r)
		}
	}
	if hi > 0 {
		rs = append(rs, rwHold{holder: h, lo: lo, hi: hi, gone: gone})
		slices.SortFunc(rs, func(a, b rwHold) int { return cmp.Compare(a.holder, b.holder) })
	}
	n := *s
	n.readers = rs
	if n.free() {
		return freed(s.at)
	}
	return &n
}

// acquire applies o's read or write acquire once (many: one or more times)
// at a point no later than ret, and appends the outcomes to out.
func (s *rwState) acquire(o *linOp, ret int64, many bool, out []lockState) []lockState {
	one, gone := int32(1), o.goneFrom()
	if many {
		// An armed acquire fires or not (the closure has both), so a hold
		// it fired that the nodes then forgot is the state it did not
		// fire, but for the lease it added (kept: possibly gone, as with
		// the lease capped at the loss, linOp.forgotten). Its reader is
		// not forgotten on its own: that would double every closure of
		// the rest of the history for the same states.
		one, gone = manyHolds, never
	}
	fresh := func(at int64) *rwState {
		exp := o.leaseEnd(at)
		if o.kind == linAcquireRead {
			return &rwState{writer: -1, readers: []rwHold{{holder: o.holder, lo: 1, hi: one, gone: gone}}, exp: exp, rmin: exp, at: at}
		}
		return &rwState{writer: o.holder, wlo: 1, whi: one, exp: exp, rmin: never, at: at}
	}
	if s.free() {
		return append(out, fresh(s.at))
	}
	switch {
	case o.kind == linAcquireRead && (s.writer < 0 || s.writer == o.holder):
		lo, hi := int32(1), one
		if i := s.reader(o.holder); i >= 0 {
			lo, hi = s.readers[i].lo+1, incHolds(s.readers[i].hi, many)
		}
		// The nodes forgot the field, if at all, at o's loss instant: an
		// earlier one (a hold of the field before o) is behind o, which
		// its holder called after it (setLost marks a holder's last
		// operation before the instant); the closure has the state that
		// lost the field there.
		exp := o.leaseEnd(s.at)
		n := s.withReader(o.holder, lo, hi, gone)
		n.exp, n.rmin = max(s.exp, exp), min(s.rmin, exp)
		out = append(out, n)
	case o.kind == linAcquire && s.writer == o.holder:
		n := *s
		n.wlo, n.whi = s.wlo+1, incHolds(s.whi, many)
		end := addSat(s.exp, o.lease)
		if o.lease == never {
			end = max(s.exp, o.leaseEnd(s.at))
		}
		n.exp = o.forgotten(end)
		out = append(out, &n)
	}
	if ret >= s.exp {
		out = append(out, fresh(max(s.at, s.exp)))
	}
	return out
}

// refused says whether o's acquire can be refused.
func (s *rwState) refused(o *linOp) bool {
	if o.kind == linAcquireRead {
		return s.writer >= 0 && s.writer != o.holder
	}
	return !s.free() && s.writer != o.holder
}

// release applies o's successful read or write release with result res
// (many: one or more times) at a point no later than ret, and appends the
// outcomes to out.
func (s *rwState) release(o *linOp, ret int64, res linResult, many bool, out []lockState) []lockState {
	if s.free() {
		if res != resRemain {
			return append(out, s)
		}
		return out
	}
	var lo, hi int32
	if o.kind == linReleaseRead {
		if i := s.reader(o.holder); i >= 0 {
			lo, hi = s.readers[i].lo, s.readers[i].hi
		}
	} else if s.writer == o.holder {
		lo, hi = s.wlo, s.whi
	}
	if hi > 0 {
		if many {
			lo = 1
		}
		if res != resRemain && lo <= 1 {
			out = append(out, s.without(o))
		}
		if res != resReleased && hi >= 2 {
			out = append(out, s.less(o, max(lo, 2)-1, decHolds(hi)))
		}
	}
	if res != resRemain && ret >= s.exp {
		out = append(out, freed(max(s.at, s.exp)))
	}
	return out
}

// without is a new state: s after o.holder's last hold of o's half is
// given back.
func (s *rwState) without(o *linOp) *rwState {
	if o.kind == linReleaseRead {
		n := s.withReader(o.holder, 0, 0, never)
		if !n.free() {
			n.exp = min(s.exp, s.rmin)
		}
		return n
	}
	// The last write hold: the lock goes, or stays in read mode for the
	// writer's own read holds, its TTL untouched.
	n := *s
	n.writer, n.wlo, n.whi = -1, 0, 0
	if n.free() {
		return freed(s.at)
	}
	return &n
}

// less is a new state: s with o.holder's holds of o's half set to
// [lo, hi] (hi >= 1).
func (s *rwState) less(o *linOp, lo, hi int32) *rwState {
	if o.kind == linReleaseRead {
		n := s.withReader(o.holder, lo, hi, s.readers[s.reader(o.holder)].gone)
		n.exp = min(s.exp, s.rmin)
		return n
	}
	n := *s
	n.wlo, n.whi = lo, hi
	n.exp = min(s.exp, o.relEnd(s.at))
	return &n
}

// forgets reports whether the nodes may have forgotten one of s's readers
// (rwHold.gone): forgetting has states to give.
func (s *rwState) forgets() bool {
	for _, r := range s.readers {
		if r.gone != never {
			return true
		}
	}
	return false
}

// forgetting appends, for each instant at which the nodes may have
// forgotten some of s's readers (rwHold.gone), s without those readers
// from that instant on (its at raised to it, so that only operations
// returning after the loss see it), and s with those readers' counts from
// one (the replica had some of their nested reads). s itself stays the
// state in which they were kept: possibly gone, never certainly, as a
// hold past its lease. The readers one instant forgot go together: the
// truth shows each of them missing there (setLost), so a state with some
// of them kept is one the nodes never had (an acquire of unknown outcome
// that lands later is armed, and fires its hold back). A state given here
// forgets the other instants' readers in turn, when the closure asks it.
func (s *rwState) forgetting(out []lockState) []lockState {
	for i, r := range s.readers {
		if r.gone == never || slices.ContainsFunc(s.readers[:i], func(q rwHold) bool { return q.gone == r.gone }) {
			continue // kept, or that instant's state made already
		}
		n := *s
		n.readers = nil
		for _, q := range s.readers {
			if q.gone != r.gone {
				n.readers = append(n.readers, q)
			}
		}
		if n.free() {
			out = append(out, freed(max(s.at, r.gone)))
		} else {
			n.at = max(s.at, r.gone)
			out = append(out, &n)
		}
		// Or kept with fewer holds: a replica behind on a reader's nested
		// reads keeps its field with part of its count (fewerHolds).
		if slices.ContainsFunc(s.readers, func(q rwHold) bool { return q.gone == r.gone && q.lo > 1 }) {
			k := *s
			k.readers = slices.Clone(s.readers)
			for j := range k.readers {
				if k.readers[j].gone == r.gone {
					k.readers[j].lo, k.readers[j].gone = 1, never
				}
			}
			k.at = max(s.at, r.gone)
			out = append(out, &k)
		}
	}
	return out
}

// settled is s at a point no earlier than p: a reader whose loss instant
// (rwHold.gone) is before p was kept there, since the loss comes at that
// instant or not at all (the closure has the state without it), so its
// gone is cleared. s itself when there is none. An operation at the loss
// instant itself may come before the loss (a fault is recorded after the
// write it follows), so that one keeps it.
func (s *rwState) settled(p int64) *rwState {
	if !slices.ContainsFunc(s.readers, func(r rwHold) bool { return r.gone < p }) {
		return s
	}
	n := *s
	n.readers = slices.Clone(s.readers)
	for i := range n.readers {
		if n.readers[i].gone < p {
			n.readers[i].gone = never
		}
	}
	return &n
}

func (s *rwState) step(o *linOp, out []lockState) []lockState {
	if o.ret < s.at {
		return out
	}
	s = s.settled(max(s.at, o.call))
	acquire := o.kind == linAcquire || o.kind == linAcquireRead
	switch {
	case acquire && o.out == outOK:
		return s.acquire(o, o.ret, false, out)
	case acquire:
		if s.refused(o) || o.mayFail {
			return append(out, s)
		}
	case o.out == outOK:
		return s.release(o, o.ret, o.res, false, out)
	default:
		holds := s.writer == o.holder
		if o.kind == linReleaseRead {
			holds = s.reader(o.holder) >= 0
		}
		// "not held": a lock that does not give the holder this half
		// refuses the release, and so does a missing one (Redisson's
		// unlocks answer nil when there is no lock, since 3.44.0); once
		// the lock may have expired, the holder's release may find it
		// gone.
		if !holds { // a free lock gives nobody a half
			return append(out, s)
		}
		if end := o.forgotten(s.exp); o.ret >= end {
			return append(out, freed(max(s.at, end)))
		}
	}
	return out
}

func (s *rwState) fire(u *linOp, bound int64, out []lockState) []lockState {
	s = s.settled(max(s.at, u.call))
	if u.kind == linAcquire || u.kind == linAcquireRead {
		return s.acquire(u, bound, true, out)
	}
	return s.release(u, bound, resEither, true, out)
}

func (s *rwState) covers(b lockState) bool {
	t := b.(*rwState)
	if s.writer != t.writer || s.wlo > t.wlo || s.whi < t.whi || s.exp > t.exp || s.rmin > t.rmin || s.at > t.at ||
		len(s.readers) != len(t.readers) {
		return false
	}
	for i, r := range s.readers {
		q := t.readers[i]
		if r.holder != q.holder || r.lo > q.lo || r.hi < q.hi || r.gone > q.gone {
			return false
		}
	}
	return true
}

// shape digests the writer and the readers' holders, which covers requires
// equal.
func (s *rwState) shape() uint64 {
	h := uint64(uint32(s.writer))
	for _, r := range s.readers {
		h = mix(h, uint64(uint32(r.holder)))
	}
	return h
}

// bytes counts the readers' holds (24 bytes each) besides the value.
func (s *rwState) bytes() int64 { return 64 + 24*int64(len(s.readers)) }

func (s *rwState) hash() uint64 {
	h := mix(mix(mix(mix(mix(uint64(s.writer), uint64(s.wlo)), uint64(s.whi)), uint64(s.exp)), uint64(s.rmin)), uint64(s.at))
	for _, r := range s.readers {
		h = mix(mix(mix(mix(h, uint64(r.holder)), uint64(r.lo)), uint64(r.hi)), uint64(r.gone))
	}
	return h
}

func (s *rwState) holders() []int32 {
	var out []int32
	if s.writer >= 0 {
		out = append(out, s.writer)
	}
	for _, r := range s.readers {
		out = append(out, r.holder)
	}
	return out
}

func (s *rwState) describe(names []string) string {
	if s.free() {
		return describeFree(s.at)
	}
	var parts []string
	if s.writer >= 0 {
		parts = append(parts, "W:"+names[s.writer]+fmtHolds(s.wlo, s.whi))
	}
	if len(s.readers) > 0 {
		rs := make([]string, len(s.readers))
		for i, r := range s.readers {
			rs[i] = names[r.holder] + fmtHolds(r.lo, r.hi)
		}
		parts = append(parts, "R:"+strings.Join(rs, "+"))
	}
	return strings.Join(parts, " ") + " until≥" + fmtTime(s.exp)
}
