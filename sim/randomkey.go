package sim

import (
	"math/rand/v2"
	"reflect"

	"github.com/alicebob/miniredis/v2/server"
)

// randomKeyStream names the node's stream of RANDOMKEY picks, apart from
// miniredis's own draws (seedRand) so that neither moves the other.
const randomKeyStream = 0x72616e646f6d6b65 // "randomke"

// randomKey answers RANDOMKEY in miniredis's place, from the hook, and
// reports whether it did. miniredis draws a number from its seeded source
// and then counts that far into a range over its Go map of keys, whose
// order Go changes from one range to the next: the same seed answered a
// different key from run to run, and a user's script that reads the key
// made a different history of the same scenario and seed. The node picks
// among its keys in sorted order instead, with a source of its own seeded
// from the seed boot drew, so a seed gives one answer. The keys are those
// of the connection's database, every expired one deleted first: RANDOMKEY
// is not in the commands table, so the node brings every key up to date
// before it (expireCommand), as Redis never answers an expired key.
//
// Two places cannot be answered this way, and RANDOMKEY gets an error
// reply there instead of a pick no seed reproduces: inside MULTI (miniredis
// queues the command's own code, which EXEC runs without the hook) and
// from miniredis's own script runner (lua: miniredis), which holds
// miniredis's lock while the hook runs, so the keys cannot be read. The
// default runner and the Go twins answer it.
func (n *Node) randomKey(c *server.Peer, args []string) bool {
	if len(args) != 0 || miniredisRandomKey {
		return false // miniredis's own arity error
	}
	st, ok := peerStateOf(c)
	switch {
	case !ok:
		c.WriteError("ERR locksim: RANDOMKEY is not simulated with this miniredis (its connection state is not readable), so that no seed gives two answers")
		return true
	case st.inTx:
		c.WriteError("ERR locksim: RANDOMKEY inside MULTI is not simulated: miniredis would pick in an order no seed reproduces")
		return true
	case st.nested:
		c.WriteError("ERR locksim: RANDOMKEY from miniredis's own script runner (lua: miniredis) is not simulated: the default runner answers it")
		return true
	}
	keys := n.m.DB(st.db).Keys() // sorted
	if len(keys) == 0 {
		c.WriteNull()
		return true
	}
	if n.keyPick == nil {
		n.keyPick = rand.New(rand.NewPCG(uint64(n.seed), randomKeyStream))
	}
	c.WriteBulk(keys[n.keyPick.IntN(len(keys))])
	return true
}

// miniredisRandomKey leaves RANDOMKEY to miniredis (a test's control).
var miniredisRandomKey bool

// peerState is what RANDOMKEY needs of a miniredis connection: its
// selected database, whether it is inside MULTI, and whether a script of
// miniredis's own runner is calling.
type peerState struct {
	db           int
	inTx, nested bool
}

// peerStateOf reads c's connection state. miniredis keeps it in an
// unexported struct (connCtx) behind Peer.Ctx, made at the connection's
// first command that needs it; reflection reads its fields without
// changing them. ok is false when the struct is not of the shape this
// reads (a miniredis that renamed a field): RANDOMKEY is then refused, not
// answered from the wrong database. TestPeerStateOfReadsMiniredis pins
// the shape.
func peerStateOf(c *server.Peer) (st peerState, ok bool) {
	if c.Ctx == nil {
		return peerState{}, true // no SELECT, MULTI or script yet: database 0
	}
	v := reflect.ValueOf(c.Ctx)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return peerState{}, false
	}
	v = v.Elem()
	db, tx, nested := v.FieldByName("selectedDB"), v.FieldByName("transaction"), v.FieldByName("nested")
	if db.Kind() != reflect.Int || tx.Kind() != reflect.Slice || nested.Kind() != reflect.Bool {
		return peerState{}, false
	}
	return peerState{db: int(db.Int()), inTx: !tx.IsNil(), nested: nested.Bool()}, true
}
