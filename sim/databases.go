package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/alicebob/miniredis/v2/server"
)

// refuseOtherDatabase fails the run, from the hook, at a command that would
// reach a database other than 0: SELECT of another index, SWAPDB, MOVE to
// another database, COPY with a DB option. The node simulates database 0
// only: its replication, its log, the ground truth and every oracle know
// the keys of that database, so a key written in another one would go
// unreplicated, survive no restart the way Redis's would, and never be
// judged, and a script's redis.call would still run on database 0. A run
// that went on would give a verdict about a lock the simulation did not
// see; the error says so instead. The command gets an error reply, so
// nothing reaches the other database. It reports whether it answered.
//
// A command whose index is not a number is left to miniredis, which
// answers it as Redis does (an error); so is SELECT 0.
func (n *Node) refuseOtherDatabase(c *server.Peer, cmd string, args []string) bool {
	db, ok := otherDatabase(cmd, args)
	if !ok || anyDatabase {
		return false
	}
	what := strings.Join(append([]string{cmd}, args...), " ")
	n.w.fail(fmt.Errorf("sim: node %s: %s: only database 0 is simulated (database %s would be neither replicated nor judged); run the lock on database 0, Redis's default", n.name, what, db))
	c.WriteError("ERR locksim: only database 0 is simulated: " + cmd + " to database " + db + " refused")
	return true
}

// otherDatabase returns the index of the database other than 0 that
// command cmd (upper case) with args would reach, if any.
func otherDatabase(cmd string, args []string) (string, bool) {
	other := func(s string) bool {
		i, err := strconv.ParseInt(s, 10, 64)
		return err == nil && i != 0
	}
	switch cmd {
	case "SELECT":
		if len(args) == 1 && other(args[0]) {
			return args[0], true
		}
	case "SWAPDB":
		for _, a := range args {
			if other(a) {
				return a, true
			}
		}
	case "MOVE":
		if len(args) == 2 && other(args[1]) {
			return args[1], true
		}
	case "COPY":
		for i := 2; i+1 < len(args); i++ {
			if strings.EqualFold(args[i], "DB") && other(args[i+1]) {
				return args[i+1], true
			}
		}
	}
	return "", false
}

// anyDatabase lets other databases through (a test's control).
var anyDatabase bool
