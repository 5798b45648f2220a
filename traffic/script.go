package traffic

// The workload of a lock given as Lua scripts (the script kind): a user's
// lock (UserLock) whose acquire, release and extend each run one script
// through lock.Conn.Eval, so that the scripts run as they are, in the
// simulation's Lua and on real servers.

import (
	"context"
	"fmt"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

// ScriptConfig is the workload of a lock given as Lua scripts on one
// client. Every script is called with KEYS[1] the lock key, ARGV[1] the
// holder's mark (OwnerIn) and ARGV[2] the lease in milliseconds; Reply says
// how their replies read.
type ScriptConfig struct {
	// UserConfig is the workload; its New is not read (the scripts make
	// the lock), its Lease (or OwnerConfig.Lease) is required: the scripts
	// are told it, and nothing renews a hold but Extend.
	UserConfig
	// Acquire, Release and (optional) Extend are the scripts.
	Acquire, Release, Extend *lock.Script
	// Reply is the replies' convention: ReplyOK or ReplyRedisson.
	Reply string
	// OwnerIn is where the lock marks its holder, and so what ARGV[1] is:
	// OwnerInValue, the key's value, a token unique to the holding (made
	// with the Runtime's NewID; the holding's nested acquires reuse it);
	// OwnerInField, a hash field named "client:owner".
	OwnerIn string
}

// Reply conventions (ScriptConfig.Reply).
const (
	// ReplyOK: the acquire answers the status OK, a positive integer
	// (with the fenced model, the fencing token) or ARGV[1] when it took
	// the lock, nil (Lua false) or 0 when another holds it; the release and
	// the extend answer OK or a positive integer when done, nil or 0 when
	// the holder no longer held the lock.
	ReplyOK = "ok"
	// ReplyRedisson is Redisson's: the acquire answers nil when it took
	// the lock and an integer (the holder's remaining TTL in ms) when
	// another holds it, and with the fenced model an array {-1, token}
	// when it took it, {ttl, -1} when not; the release answers 1 (the last
	// hold released) or 0 (holds remain) when done, nil when the holder
	// held nothing; the extend 1 when done, nil or 0 when not held.
	ReplyRedisson = "redisson"
)

// Where a script lock marks its holder (ScriptConfig.OwnerIn).
const (
	OwnerInValue = "value"
	OwnerInField = "field"
)

// scriptNames are ScriptLock's names: its stream is the kind's.
var scriptNames = names{kind: KindScript, stream: KindScript}

// DefaultBelief is careful, as a user's lock (UserConfig.DefaultBelief):
// the lease counted from the acquire's call.
func (ScriptConfig) DefaultBelief() Belief { return BeliefCareful }

// ScriptLock starts the workload of cfg's scripts on c: User's loop and
// records, with the lock the scripts make.
func ScriptLock(c Client, cfg ScriptConfig) error {
	const kind = KindScript
	if c == nil {
		return fmt.Errorf("traffic: %s: nil client", kind)
	}
	lease, err := cfg.lease(kind, c.Name())
	if err != nil {
		return err
	}
	if err := cfg.check(kind, c.Name(), lease); err != nil {
		return err
	}
	// The scripts are told the lease the workload gives New: the one check
	// validated (startUser resolves it as lease did).
	cfg.New = func(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (UserLock, error) {
		l := &scriptLock{cfg: cfg, conn: conn, rt: rt, key: key, leaseMs: lease.Milliseconds(), marks: map[string]*mark{}}
		if cfg.Extend == nil {
			return scriptOnly{l}, nil
		}
		return l, nil
	}
	return startUser(c, cfg.UserConfig, scriptNames, cfg.DefaultBelief())
}

// check validates cfg's scripts and conventions, with the lease resolved.
func (cfg ScriptConfig) check(kind, client string, lease time.Duration) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("traffic: %s on client %s: "+format, append([]any{kind, client}, args...)...)
	}
	switch {
	case cfg.Acquire == nil || cfg.Release == nil:
		return bad("no acquire or no release script")
	case cfg.Reply != ReplyOK && cfg.Reply != ReplyRedisson:
		return bad("unknown reply convention %q (want %s or %s)", cfg.Reply, ReplyOK, ReplyRedisson)
	case cfg.OwnerIn != OwnerInValue && cfg.OwnerIn != OwnerInField:
		return bad("unknown owner_in %q (want %s or %s)", cfg.OwnerIn, OwnerInValue, OwnerInField)
	case cfg.Model == "fenced" && cfg.OwnerIn == OwnerInValue:
		return bad("a fenced lock's acquire records its token, so its holders are marked as fields (owner_in %s)", OwnerInField)
	case lease <= 0 || lease%time.Millisecond != 0:
		return bad("lease %v: a script lock needs a positive whole number of milliseconds (its ARGV[2])", lease)
	}
	return nil
}

// mark is the holder's mark of one owner's current holding of a script
// lock, and how many of its acquires it has not released.
type mark struct {
	token string
	holds int
}

// scriptLock is the UserLock of ScriptConfig's scripts on one client.
type scriptLock struct {
	cfg     ScriptConfig
	conn    lock.Conn
	rt      lock.Runtime
	key     string
	leaseMs int64
	marks   map[string]*mark // owner ("client:owner") -> its holding's mark
}

// scriptOnly is a scriptLock without an extend script: no Extend method,
// so that the workload refuses an extend interval.
type scriptOnly struct{ l *scriptLock }

func (s scriptOnly) Acquire(ctx context.Context, owner string) (Grant, error) {
	return s.l.Acquire(ctx, owner)
}

func (s scriptOnly) Release(ctx context.Context, owner string, g Grant) error {
	return s.l.Release(ctx, owner, g)
}

// markOf is ARGV[1] of owner's next acquire: its field name, or the token
// of its holding (a new one for a new holding).
func (l *scriptLock) markOf(owner string) *mark {
	m := l.marks[owner]
	if m == nil {
		m = &mark{token: owner}
		if l.cfg.OwnerIn == OwnerInValue {
			m.token = l.rt.NewID()
		}
		l.marks[owner] = m
	}
	return m
}

// Acquire runs the acquire script and reads its reply (Reply).
func (l *scriptLock) Acquire(ctx context.Context, owner string) (Grant, error) {
	m := l.markOf(owner)
	v, err := l.conn.Eval(ctx, l.cfg.Acquire, []string{l.key}, m.token, l.leaseMs)
	if err != nil {
		l.drop(owner, m)
		return Grant{}, err
	}
	took, token, err := l.acquired(v, m.token)
	if err != nil || !took {
		l.drop(owner, m)
		if err == nil {
			err = lock.ErrNotAcquired
		}
		return Grant{}, err
	}
	m.holds++
	g := Grant{Token: token}
	if l.cfg.OwnerIn == OwnerInValue {
		g.Value = m.token
	}
	return g, nil
}

// drop forgets owner's mark when no acquire of its holding succeeded.
func (l *scriptLock) drop(owner string, m *mark) {
	if m.holds == 0 {
		delete(l.marks, owner)
	}
}

// acquired reads an acquire's reply v by the convention: whether it took
// the lock, the fencing token (fenced model), or an error for a reply the
// convention has no meaning for.
func (l *scriptLock) acquired(v any, argv1 string) (bool, int64, error) {
	fenced := l.cfg.Model == "fenced"
	n, isInt := v.(int64)
	if l.cfg.Reply == ReplyRedisson {
		pair, isPair := v.([]any)
		switch {
		case fenced && isPair && len(pair) == 2:
			tok, _ := pair[1].(int64)
			if tok > 0 {
				return true, tok, nil
			}
			if tok == -1 {
				return false, 0, nil
			}
		case !fenced && v == nil:
			return true, 0, nil
		case !fenced && isInt:
			return false, 0, nil
		}
		return false, 0, l.badReply("acquire", v)
	}
	switch {
	case v == nil || (isInt && n == 0):
		return false, 0, nil
	case isInt && n > 0 && fenced:
		return true, n, nil
	case fenced:
	case isInt && n > 0, v == "OK", v == argv1:
		return true, 0, nil
	}
	return false, 0, l.badReply("acquire", v)
}

// argv1 is ARGV[1] of the release or extend of owner's hold g: the mark
// its acquire wrote.
func (l *scriptLock) argv1(owner string, g Grant) string {
	if l.cfg.OwnerIn == OwnerInValue {
		return g.Value
	}
	return owner
}

// Release runs the release script: lock.ErrNotHeld when it says the holder
// held nothing.
func (l *scriptLock) Release(ctx context.Context, owner string, g Grant) error {
	if m := l.marks[owner]; m != nil {
		if m.holds--; m.holds <= 0 {
			delete(l.marks, owner)
		}
	}
	v, err := l.conn.Eval(ctx, l.cfg.Release, []string{l.key}, l.argv1(owner, g), l.leaseMs)
	if err != nil {
		return err
	}
	n, isInt := v.(int64)
	switch {
	case v == nil:
		return lock.ErrNotHeld
	case l.cfg.Reply == ReplyRedisson && isInt && (n == 0 || n == 1):
		return nil
	case l.cfg.Reply == ReplyRedisson:
	case isInt && n == 0:
		return lock.ErrNotHeld
	case isInt && n > 0, v == "OK":
		return nil
	}
	return l.badReply("release", v)
}

// Extend runs the extend script: the grant as it was when done,
// lock.ErrNotHeld when not held.
func (l *scriptLock) Extend(ctx context.Context, owner string, g Grant) (Grant, error) {
	v, err := l.conn.Eval(ctx, l.cfg.Extend, []string{l.key}, l.argv1(owner, g), l.leaseMs)
	if err != nil {
		return g, err
	}
	n, isInt := v.(int64)
	switch {
	case v == nil || (isInt && n == 0):
		return g, lock.ErrNotHeld
	case isInt && n > 0, v == "OK":
		return g, nil
	}
	return g, l.badReply("extend", v)
}

// badReply is the error of a reply the convention has no meaning for. It
// is a lock.ReplyError: the node ran the script and its answer came back,
// a known outcome, as an error reply's is (not lock.IsUnknown), so the
// op's outcome is "error" and its Result says which reply of which script.
func (l *scriptLock) badReply(what string, v any) error {
	return lock.ReplyError(fmt.Sprintf("the %s script %s answered %s, which the %s reply convention does not define", what, l.cfg.scriptOf(what).Name, history.FormatReply(v), l.cfg.Reply))
}

func (cfg ScriptConfig) scriptOf(what string) *lock.Script {
	switch what {
	case "acquire":
		return cfg.Acquire
	case "release":
		return cfg.Release
	}
	return cfg.Extend
}
