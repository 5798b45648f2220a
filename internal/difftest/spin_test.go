package difftest_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/locksim/locksim/internal/scripts"
)

// spinNonReentrant drives the spin lock's and the non-reentrant lock's
// scripts on the keys they share with the reentrant lock: reentrant_acquire
// (the spin lock's acquire), non_reentrant_acquire (plain and idempotent:
// its error reply to a holder's second acquire), spin_unlock (with and
// without the latch), spin_force_unlock, and reentrant_unlock (the
// non-reentrant lock's, which publishes, beside spin_unlock, which must
// not), by three holders on two locks, with SET NX PX for keys of the wrong
// type.
var spinNonReentrant = family{
	channels: []string{chanOf("lk"), chanOf("fl")},
	draw: func(t *rapid.T) op {
		kind := rapid.SampledFrom([]string{"acquire", "non-reentrant", "non-reentrant", "spin-unlock", "spin-unlock",
			"unlock", "spin-force", "advance", "advance", "set-nx-px"}).Draw(t, "kind")
		if kind == "advance" {
			return drawAdvance(t)
		}
		name := rapid.SampledFrom(lockKeys).Draw(t, "lock")
		owner := rapid.SampledFrom(owners).Draw(t, "owner")
		lease := drawLease(t)
		latch, latchTTL := "0", 0
		if rapid.Bool().Draw(t, "latch") {
			latch, latchTTL = "1", drawLease(t)
		}
		req := rapid.SampledFrom(unlReqs).Draw(t, "req")
		var o op
		switch kind {
		case "acquire", "non-reentrant":
			o = op{script: scripts.ReentrantAcquire, keys: []string{name}, args: []any{lease, owner}, ttl: true}
			if kind == "non-reentrant" {
				o.script = scripts.NonReentrantAcquire
				if areq := rapid.SampledFrom(acqReqs).Draw(t, "areq"); areq != "" {
					o.keys = append(o.keys, "acq:{"+name+"}:"+areq)
					o.args = append(o.args, areq, drawLease(t))
				}
			}
		case "spin-unlock":
			o = op{script: scripts.SpinUnlock, keys: []string{name, "unl:{" + name + "}:" + req}, args: []any{lease, owner, latchTTL, latch}}
		case "unlock":
			o = op{script: scripts.ReentrantUnlock, keys: []string{name, chanOf(name), "unl:{" + name + "}:" + req},
				args: []any{"unlock", lease, owner, latchTTL, latch}}
		case "spin-force":
			o = op{script: scripts.SpinForceUnlock, keys: []string{name}}
		default:
			return setNXPX(name, owner, lease)
		}
		o.desc = fmt.Sprintf("%s %v %v", o.script.Name, o.keys, o.args)
		return o
	},
}

// TestDiffSpinAndNonReentrantScripts: the spin lock's unlock and force
// unlock and the non-reentrant lock's acquire, among the reentrant scripts
// they share keys with.
func TestDiffSpinAndNonReentrantScripts(t *testing.T) {
	rapid.Check(t, newEnv(t, spinNonReentrant).check)
}
