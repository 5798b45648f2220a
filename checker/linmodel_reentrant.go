// The reentrant lock's model: holds by one holder nest.

package checker

// reentState is the reentrant lock's hash: its holder, the holder's hold
// count (a range when unknown outcomes leave it uncertain), from when the
// whole lock may have expired, and a lower bound on the current
// linearization point.
//
// The holder's own acquire nests and resets the lease to its own (pexpire),
// unless a watchdog is renewing the hold; another's acquire is legal only on
// a free lock or one that may have expired, and a refused acquire needs
// another holder. A successful release by the holder gives back one hold:
// Result "1" needs a count that can be 1 (the lock is then free), "0" one
// that can be 2 or more, and the lease it re-applies (the holder's last
// acquire's) ends no earlier than the release's point plus that lease. A
// release by anyone else fails (not held); the holder's fails only once the
// hold may have expired.
type reentState struct {
	holder int32 // -1: free
	lo, hi int32 // 1 <= lo <= hi; hi == manyHolds: unbounded
	exp    int64
	at     int64
}

// acquire applies o's acquire once (many: one or more times) at a point no
// later than ret, and appends the outcome to out.
func (s *reentState) acquire(o *linOp, ret int64, many bool, out []lockState) []lockState {
	one := int32(1)
	if many {
		one = manyHolds
	}
	switch {
	case s.holder < 0:
		return append(out, &reentState{holder: o.holder, lo: 1, hi: one, exp: o.leaseEnd(s.at), at: s.at})
	case s.holder == o.holder:
		// Nested; or, once the hold may have expired, a fresh hold of one:
		// the union of the two, at the earlier point.
		lo := s.lo + 1
		if ret >= s.exp {
			lo = 1
		}
		exp := o.leaseEnd(s.at)
		if s.exp == never {
			// A watchdog hold stays one (a nested acquire renews the
			// watchdog's key), unless the nodes forgot it.
			exp = o.forgotten(never)
		}
		return append(out, &reentState{holder: o.holder, lo: lo, hi: incHolds(s.hi, many), exp: exp, at: s.at})
	case ret >= s.exp:
		at := max(s.at, s.exp)
		return append(out, &reentState{holder: o.holder, lo: 1, hi: one, exp: o.leaseEnd(at), at: at})
	}
	return out
}

// remain is the lock after one of the holder's holds (many: one or more)
// was given back and at least one remains.
func (s *reentState) remain(o *linOp, many bool) *reentState {
	lo := max(s.lo, 2) - 1
	if many {
		lo = 1
	}
	return &reentState{holder: s.holder, lo: lo, hi: decHolds(s.hi), exp: min(s.exp, o.relEnd(s.at)), at: s.at}
}

func (s *reentState) step(o *linOp, out []lockState) []lockState {
	if o.ret < s.at {
		return out
	}
	mine := s.holder >= 0 && s.holder == o.holder
	switch {
	case o.kind == linAcquire && o.out == outOK:
		return s.acquire(o, o.ret, false, out)
	case o.kind == linAcquire: // refused
		if (s.holder >= 0 && !mine) || o.mayFail {
			out = append(out, s)
		}
	case o.out == outOK:
		out = s.released(o, mine, out)
	case !mine:
		out = append(out, s)
	case o.ret >= o.forgotten(s.exp): // expired, or forgotten during the release
		out = append(out, &reentState{holder: -1, at: max(s.at, o.forgotten(s.exp))})
	}
	return out
}

// released appends the lock after o's release answered ok: the
// holder's last hold given back, or one of several, or (okOnMissing) a
// lock that does not exist answering "released".
func (s *reentState) released(o *linOp, mine bool, out []lockState) []lockState {
	if mine && o.res != resRemain && s.lo <= 1 {
		out = append(out, &reentState{holder: -1, at: s.at})
	}
	if mine && o.res != resReleased && s.hi >= 2 {
		out = append(out, s.remain(o, false))
	}
	if o.okOnMissing && o.res != resRemain {
		// The lock does not exist: free, or its hold gone, which for the
		// releaser's own is also once the nodes forgot it during the
		// release (as a failed release's rule says).
		end := s.exp
		if mine {
			end = o.forgotten(s.exp)
		}
		switch {
		case s.holder < 0:
			out = append(out, s)
		case o.ret >= end:
			out = append(out, &reentState{holder: -1, at: max(s.at, end)})
		}
	}
	return out
}

func (s *reentState) fire(u *linOp, bound int64, out []lockState) []lockState {
	if u.kind == linAcquire {
		return s.acquire(u, bound, true, out)
	}
	if s.holder < 0 || s.holder != u.holder {
		return out
	}
	out = append(out, &reentState{holder: -1, at: s.at})
	if s.hi >= 2 {
		out = append(out, s.remain(u, true))
	}
	return out
}

func (s *reentState) covers(b lockState) bool {
	t := b.(*reentState)
	return s.holder == t.holder && s.lo <= t.lo && s.hi >= t.hi && s.exp <= t.exp && s.at <= t.at
}

func (s *reentState) bytes() int64 { return 32 }

func (s *reentState) hash() uint64 {
	return mix(mix(mix(mix(uint64(s.holder), uint64(s.lo)), uint64(s.hi)), uint64(s.exp)), uint64(s.at))
}

func (s *reentState) holders() []int32 {
	if s.holder < 0 {
		return nil
	}
	return []int32{s.holder}
}

func (s *reentState) describe(names []string) string {
	if s.holder < 0 {
		return describeFree(s.at)
	}
	return names[s.holder] + fmtHolds(s.lo, s.hi) + " until≥" + fmtTime(s.exp)
}

// forgets and forgetting: a lost hold bounds the lock's expiry
// (linOp.forgotten), nothing more.
func (s *reentState) forgets() bool                          { return false }
func (s *reentState) forgetting(out []lockState) []lockState { return out }

func (s *reentState) shape() uint64 { return uint64(uint32(s.holder)) }
