package traffic

// The workload of a user's own lock: a lock written by the user against
// lock.Conn and lock.Runtime (given in Go, or as Lua scripts in a scenario
// file), driven through the owner loop the Redisson workloads use.

import (
	"context"
	"fmt"
	"time"

	"github.com/locksim/locksim/lock"
)

// UserLock is a lock of the user's own for one client: their code against
// lock.Conn and lock.Runtime, so that it runs unchanged in the simulation
// and on real servers.
type UserLock interface {
	// Acquire takes the lock for owner (waiting or not, as the lock does).
	// owner is unique per holder and is "client:owner" (the hash field
	// locksim's ground truth looks for). It returns what the holder may rely
	// on; lock.ErrNotAcquired when another holds the lock; any other error
	// is read with lock.IsUnknown (may the acquire have taken effect?).
	Acquire(ctx context.Context, owner string) (Grant, error)
	// Release gives back owner's hold g; lock.ErrNotHeld when it no longer
	// held it.
	Release(ctx context.Context, owner string, g Grant) error
}

// UserExtender is a UserLock that can extend a hold before its validity
// runs out.
type UserExtender interface {
	Extend(ctx context.Context, owner string, g Grant) (Grant, error)
}

// Grant is what a successful acquire (or extend) gives its holder.
type Grant struct {
	// Value is the mark the lock wrote in a string key for this holder (""
	// for a lock that keeps holders as hash fields named by owner).
	Value string
	// Validity is how long from the call the holder may rely on it; 0: the
	// configured lease (or, with none, until released: a watchdog).
	Validity time.Duration
	// Token is the fencing token, for a lock that issues them; 0 otherwise.
	Token int64
}

// NewUserLock makes a client's UserLock for key on the connection to the
// lock's group.
type NewUserLock func(conn lock.Conn, rt lock.Runtime, key string) (UserLock, error)

// UserConfig is the workload of a user's lock on one client.
type UserConfig struct {
	// Group is the Redis group the lock lives on.
	Group string
	// Key is the lock key.
	Key string
	// New builds the lock.
	New NewUserLock
	// Model is the model the lock claims: "simple", "reentrant" or
	// "fenced" (the checker's models).
	Model string
	// Lease is the lease the lock is built with (belief, acquire detail);
	// 0: watchdog.
	Lease time.Duration
	// ExtendEvery, with a UserExtender, extends the hold this often while
	// holding (0: never).
	ExtendEvery time.Duration
	OwnerConfig
	Holding
}

// KindCustom is the scenario kind of a lock given in Go (it names no Lua).
const KindCustom = "custom"

// KindScript is the scenario kind of a lock given as Lua scripts in the
// scenario file.
const KindScript = "script"

// User starts the workload of the user's lock cfg.New on c.
func User(c Client, cfg UserConfig) error {
	if c == nil {
		return fmt.Errorf("traffic: %s: nil client", KindCustom)
	}
	return fmt.Errorf("traffic: %s on client %s: not implemented yet", KindCustom, c.Name())
}
