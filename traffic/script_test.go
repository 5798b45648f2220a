package traffic_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// Scripts of a reentrant lock in Redisson's reply convention (hash field
// ARGV[1], lease ARGV[2]), and its fenced variant, whose token counter is
// a key derived from KEYS[1].
var (
	redissonAcquire = scripts.New("test_acquire", `if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return nil
end
return redis.call('pttl', KEYS[1])
`)
	redissonRelease = scripts.New("test_release", `if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
return 1
`)
	redissonFencedAcquire = scripts.New("test_fenced_acquire", `if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  local token = redis.call('incr', KEYS[1] .. ':token')
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}
`)
	okFencedAcquire = scripts.New("test_fenced_acquire_ok", `if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  local token = redis.call('incr', KEYS[1] .. ':token')
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return token
end
return 0
`)
	okRelease = scripts.New("test_release_ok", `if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
else
  redis.call('del', KEYS[1])
end
return 1
`)
	simpleRelease = scripts.New("test_simple_release", scripts.SimpleRelease.Src)
	oddAcquire    = scripts.New("test_odd_acquire", `return 'maybe'`)
)

// scriptCfg is a script lock workload on m1's key lk, lease 2 s.
func scriptCfg(model, reply, ownerIn string, acquire, release *lock.Script) traffic.ScriptConfig {
	return traffic.ScriptConfig{Acquire: acquire, Release: release, Reply: reply, OwnerIn: ownerIn,
		UserConfig: traffic.UserConfig{Group: "m1", Key: "lk", Model: model, Lease: 2 * sec,
			Holding: traffic.Holding{Hold: 100 * ms, Think: 700 * ms}}}
}

// TestScriptLockNoFaults: locks given as scripts, three clients for a
// minute each, every verdict ok, with every convention: SimpleLock's own
// obtain and release scripts (ok replies, the holder a value: Results are
// the tokens), a reentrant lock in Redisson's convention (nil acquired, the
// TTL refused; the holder a field) at depth 2 with two owners, and fenced
// locks in both conventions, whose Results are increasing tokens.
func TestScriptLockNoFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   traffic.ScriptConfig
		model checker.LockKind
	}{
		{"simple-ok-value", scriptCfg("simple", traffic.ReplyOK, traffic.OwnerInValue, scripts.SimpleObtain, simpleRelease), checker.LockSimple},
		{"reentrant-redisson-field", scriptCfg("reentrant", traffic.ReplyRedisson, traffic.OwnerInField, redissonAcquire, redissonRelease), checker.LockReentrant},
		{"fenced-redisson", scriptCfg("fenced", traffic.ReplyRedisson, traffic.OwnerInField, redissonFencedAcquire, redissonRelease), checker.LockReentrant},
		{"fenced-ok", scriptCfg("fenced", traffic.ReplyOK, traffic.OwnerInField, okFencedAcquire, okRelease), checker.LockReentrant},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 11, "m1")
			cfg := tc.cfg
			owners := []string{"main"}
			if tc.model == checker.LockReentrant {
				owners = []string{"a", "b"}
				cfg.Owners, cfg.Depth = owners, 2
			}
			e.clientsWith(3, func(c *sim.Client) error { return traffic.ScriptLock(c, cfg) })
			e.run(minute)
			recs := e.records()
			if hs := checkExclusion(t, e, "lk", minute); len(hs) < 30 {
				t.Errorf("only %d holdings in a minute", len(hs))
			}
			checkConventions(t, recs, conventions{lock: "lk", owners: owners, ops: userOps, fenced: cfg.Model == "fenced",
				noExpire: true, noUnknown: true, end: minute})
			checkBalanced(t, recs, "acquire", "release")
			if n := count(recs, "release", "", history.OutcomeFail); n > 0 {
				t.Errorf("%d releases refused without faults", n)
			}
			for _, r := range opsNamed(recs, "acquire") {
				if r.Outcome == history.OutcomeOK && (cfg.OwnerIn == traffic.OwnerInValue) != (r.Result != "" && !strings.ContainsAny(r.Result[:1], "0123456789")) {
					t.Errorf("record %d: Result %q for a lock that marks its holder by %s", r.Seq, r.Result, cfg.OwnerIn)
				}
			}
			if v := judge(e, tc.model, minute); v.Status != checker.OK {
				t.Errorf("verdict %s", v)
			}
		})
	}
}

// TestScriptLockReplies: a reply the convention has no meaning for is an
// acquire of outcome error, whose Result says so; a release script's
// "not held" is the release's fail.
func TestScriptLockReplies(t *testing.T) {
	e := newEnv(t, 2, "m1")
	cfg := scriptCfg("simple", traffic.ReplyOK, traffic.OwnerInValue, oddAcquire, simpleRelease)
	cfg.Holds = 1
	if err := traffic.ScriptLock(e.client("c1"), cfg); err != nil {
		t.Fatal(err)
	}
	e.run(2 * sec)
	acq := opsNamed(e.records(), "acquire")
	if len(acq) == 0 || acq[0].Outcome != history.OutcomeError || !strings.Contains(acq[0].Result, `answered "maybe", which the ok reply convention does not define`) {
		t.Fatalf("acquires %+v, want an error naming the reply", acq)
	}
}

// TestScriptLockConfigErrors: ScriptLock refuses what its scripts cannot
// do, naming the kind and the client.
func TestScriptLockConfigErrors(t *testing.T) {
	e := newEnv(t, 1, "m1")
	c := e.client("c1")
	for _, tc := range []struct {
		want string
		edit func(*traffic.ScriptConfig)
	}{
		{"script on client c1: no acquire or no release script", func(s *traffic.ScriptConfig) { s.Release = nil }},
		{`script on client c1: unknown reply convention "nil"`, func(s *traffic.ScriptConfig) { s.Reply = "nil" }},
		{`script on client c1: unknown owner_in "hash"`, func(s *traffic.ScriptConfig) { s.OwnerIn = "hash" }},
		{"script on client c1: a fenced lock's acquire records its token", func(s *traffic.ScriptConfig) { s.Model = "fenced" }},
		{"script on client c1: lease 0s: a script lock needs a positive whole number of milliseconds", func(s *traffic.ScriptConfig) { s.Lease = 0 }},
		{"script on client c1: lease 1.5ms", func(s *traffic.ScriptConfig) { s.Lease = 1500 * time.Microsecond }},
		{"script on client c1: extend interval 1s, but the lock cannot extend", func(s *traffic.ScriptConfig) { s.ExtendEvery = sec }},
	} {
		cfg := scriptCfg("simple", traffic.ReplyOK, traffic.OwnerInValue, scripts.SimpleObtain, simpleRelease)
		tc.edit(&cfg)
		if err := traffic.ScriptLock(c, cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
	if err := traffic.ScriptLock(nil, traffic.ScriptConfig{}); err == nil || !strings.HasSuffix(err.Error(), "script: nil client") {
		t.Errorf("nil client: %v", err)
	}
}
