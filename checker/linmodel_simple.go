// The simple lock's model: SET NX PX, released by compare-and-delete.

package checker

// simpleState is SimpleLock's key: who holds it (the token is the holder's,
// and a holder holds at most one), from when it may have expired, and a
// lower bound on the current linearization point.
//
// SET NX succeeds when the key is absent (free, or expired: the acquire's
// return is at or after exp) and is refused while it exists, whoever holds
// it, the acquirer included (a simple lock is not reentrant).
// Compare-and-delete succeeds for the holder only; it fails for anyone else,
// and for the holder once its hold may have expired (which then frees the
// lock). A partial release (linOp.partial: the spec's RedLock deleted the
// holder's key on some nodes, too few for the majority its "not held"
// counts) may have freed the lock at any point of its interval, as a
// successful release does, provided its return is at or after exp: the
// deletes that landed took the holder below a majority (so another may
// take the lock while the holder's lease runs), those that found no key
// landed after it ran out, and "not held" is then true when it is said.
// Returning before exp, it says "not held" of a hold still certainly live,
// and stays a violation, as does a failed release that deleted nothing.
type simpleState struct {
	holder int32 // -1: free
	exp    int64
	at     int64
}

// take appends to out the lock after o's acquire took effect at a point no
// later than ret, if it can have.
func (s *simpleState) take(o *linOp, ret int64, out []lockState) []lockState {
	if s.holder < 0 {
		return append(out, &simpleState{holder: o.holder, exp: o.leaseEnd(s.at), at: s.at})
	}
	if ret >= s.exp {
		at := max(s.at, s.exp)
		return append(out, &simpleState{holder: o.holder, exp: o.leaseEnd(at), at: at})
	}
	return out
}

func (s *simpleState) step(o *linOp, out []lockState) []lockState {
	switch {
	case o.ret < s.at:
		return out
	case o.kind == linAcquire && o.out == outOK:
		return s.take(o, o.ret, out)
	case o.kind == linAcquire && (s.holder >= 0 || o.mayFail): // refused
		return append(out, s)
	case o.kind == linRelease && o.out == outOK:
		return s.released(o, out)
	case o.kind == linRelease && o.out == outFail:
		return s.refusedRelease(o, out)
	}
	return out
}

// released appends the lock after o's release answered "released": the
// holder's, or (okOnMissing) anybody's of a lock that does not exist.
func (s *simpleState) released(o *linOp, out []lockState) []lockState {
	switch {
	case s.holder == o.holder:
		return append(out, &simpleState{holder: -1, at: s.at})
	case o.okOnMissing && s.holder < 0:
		return append(out, s) // the lock does not exist
	case o.okOnMissing && o.ret >= s.exp:
		return append(out, &simpleState{holder: -1, at: max(s.at, s.exp)})
	}
	return out
}

// refusedRelease appends the lock after o's release answered "not held":
// another's, or the holder's once its hold may be gone.
func (s *simpleState) refusedRelease(o *linOp, out []lockState) []lockState {
	end := o.forgotten(s.exp)
	switch {
	case s.holder != o.holder:
		return append(out, s)
	case o.partial && o.ret >= end:
		// Its deletes freed the lock at some point of its interval, as
		// early as its call; its answer, at the return, is true once the
		// hold may have run out.
		return append(out, &simpleState{holder: -1, at: s.at})
	case o.ret >= end:
		return append(out, &simpleState{holder: -1, at: max(s.at, end)})
	}
	return out
}

func (s *simpleState) fire(u *linOp, bound int64, out []lockState) []lockState {
	switch {
	case u.kind == linAcquire:
		return s.take(u, bound, out)
	case u.kind == linRelease && s.holder == u.holder:
		return append(out, &simpleState{holder: -1, at: s.at})
	}
	return out
}

func (s *simpleState) covers(b lockState) bool {
	t := b.(*simpleState)
	return s.holder == t.holder && s.exp <= t.exp && s.at <= t.at
}

func (s *simpleState) bytes() int64 { return 24 }

func (s *simpleState) hash() uint64 {
	return mix(mix(uint64(s.holder), uint64(s.exp)), uint64(s.at))
}

func (s *simpleState) holders() []int32 {
	if s.holder < 0 {
		return nil
	}
	return []int32{s.holder}
}

func (s *simpleState) describe(names []string) string {
	if s.holder < 0 {
		return describeFree(s.at)
	}
	return names[s.holder] + " until≥" + fmtTime(s.exp)
}

// forgets and forgetting: a lost hold bounds the lock's expiry
// (linOp.forgotten), nothing more.
func (s *simpleState) forgets() bool                          { return false }
func (s *simpleState) forgetting(out []lockState) []lockState { return out }

func (s *simpleState) shape() uint64 { return uint64(uint32(s.holder)) }
