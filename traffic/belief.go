package traffic

import (
	"fmt"
	"slices"
)

// Belief is the model of how a holder judges, after a successful acquire,
// how long it may rely on the lock: what the checkers' mutual-exclusion and
// silent-loss oracles take as its belief (package checker's Holdings end at
// an "expire" record). The model is the user's, not the lock's: two users
// of one lock API may use it differently, and the verdict depends on which.
type Belief string

// Belief models. The zero value, BeliefDefault, is each workload's default:
// the model that matches how its lock's API is documented to be used, which
// the workload's config says (its DefaultBelief method, with the reason).
const (
	// BeliefDefault is the workload's default model (its config's
	// DefaultBelief).
	BeliefDefault Belief = ""
	// BeliefCareful: with an explicit lease, the holder's validity estimate
	// runs from the acquire's call for the lease (for the spec's RedLock,
	// the lease's own validity: TTL minus the drift allowance, from the
	// call), by its own clock; an acquire whose reply comes after that
	// estimate ran out is not relied on at all. With the watchdog, the
	// holder believes until its release or until the watchdog reports the
	// lock lost (lock.Options.OnLost), whichever comes first: a user who
	// watches for the loss.
	BeliefCareful Belief = "careful"
	// BeliefTrusting: with an explicit lease, the holder counts the lease
	// from the acquire's reply (the moment it learns it holds the lock),
	// however long the reply took. With the watchdog, it believes until its
	// release: Redisson has no callback for a lock its watchdog failed to
	// renew, so a user of its API does not learn of the loss, and the
	// watchdog's report is not recorded as the end of its belief.
	BeliefTrusting Belief = "trusting"
	// BeliefUntilRelease: the holder relies on the lock from the acquire's
	// reply until it calls release, whatever the lease: it never looks at
	// the clock, nor at a validity the acquire or an extension returned,
	// nor at an extension's answer (it extends on schedule and holds on),
	// and with the watchdog it is not told of a loss. No "expire" record
	// ends its belief. The user of Redisson's lock(leaseTime) or of a
	// library whose acquire returns nothing it checks: the first story of
	// every lock article, the holder whose work outlasts its lease.
	BeliefUntilRelease Belief = "until-release"
)

// Beliefs are the belief models, in the order the scenario format and
// errors list them.
var Beliefs = []Belief{BeliefCareful, BeliefTrusting, BeliefUntilRelease}

// resolve returns the model to use: b, or def (the workload's default)
// when b is empty; an unknown model is an error naming the workload's kind
// and the client.
func (b Belief) resolve(def Belief, kind, client string) (Belief, error) {
	if b == BeliefDefault {
		return def, nil
	}
	if slices.Contains(Beliefs, b) {
		return b, nil
	}
	return "", fmt.Errorf("traffic: %s on client %s: unknown belief model %q (want %q, %q or %q)", kind, client, string(b),
		BeliefCareful, BeliefTrusting, BeliefUntilRelease)
}

// countsLease reports whether a holder under model m keeps a validity
// estimate at all (the careful and trusting models, whose estimate can end
// the belief with an "expire" record); the until-release model's holder
// keeps none.
func (m Belief) countsLease() bool { return m != BeliefUntilRelease }

// observesLoss reports whether a holder under model m learns of the
// watchdog's report that its lock was lost: the careful model's user does;
// the trusting and until-release models' (Redisson's API) do not.
func (m Belief) observesLoss() bool { return m == BeliefCareful }
