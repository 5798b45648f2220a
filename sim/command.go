package sim

// A client command at a node: it runs on miniredis (or the Lua engine of
// lua.go), a hook notes which keys it wrote and what it published, and exec
// then does what Redis does after a command: propagates the changed keys to
// the replicas and the log, records them in the ground truth, and publishes.

import (
	"bufio"
	"slices"
	"strconv"
	"strings"

	"github.com/alicebob/miniredis/v2/server"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
)

// keyArgs says which of a command's arguments (after its name) are keys.
type keyArgs uint8

const (
	noKeys   keyArgs = iota // the command touches no key (PUBLISH, PING)
	firstKey                // only the first argument is a key
	allKeys                 // every argument is a key (DEL, EXISTS, MGET)
)

// cmdSpec is what a node knows about a command before running it: its keys,
// and whether it may write them. Only commands listed here are run with
// their own keys brought up to date (expiry.go); any other one (KEYS, SCAN,
// EVAL on miniredis's own runner, MULTI/EXEC) may look at any key, so the
// node brings every key up to date first. A write's keys are also the keys
// whose new state the node propagates (hook).
type cmdSpec struct {
	name  string // upper case, as miniredis names its commands
	lower string // lower case, as req records name them
	keys  keyArgs
	write bool
}

// commands lists the commands the lock algorithms send or their scripts
// call, and the reads next to them, by name in upper and in lower case
// (scripts write 'hexists': looking that up needs no new string).
var commands = specTable([]struct {
	keys  keyArgs
	write bool
	names string
}{
	{firstKey, true, "SET SETNX SETEX PSETEX GETSET GETDEL INCR INCRBY DECR DECRBY APPEND " +
		"EXPIRE PEXPIRE EXPIREAT PEXPIREAT PERSIST HSET HSETNX HMSET HDEL HINCRBY HINCRBYFLOAT " +
		"RPUSH LPUSH LPOP RPOP LREM LSET LTRIM ZADD ZREM ZINCRBY ZPOPMIN ZREMRANGEBYSCORE"},
	{allKeys, true, "DEL UNLINK"},
	{firstKey, false, "GET STRLEN TYPE TTL PTTL HGET HMGET HGETALL HEXISTS HLEN HKEYS HVALS " +
		"LINDEX LRANGE LLEN LPOS ZSCORE ZRANGE ZCARD ZRANK"},
	{allKeys, false, "EXISTS MGET"},
	{noKeys, false, "PUBLISH PING ECHO TIME SCRIPT"},
})

func specTable(rows []struct {
	keys  keyArgs
	write bool
	names string
}) map[string]cmdSpec {
	out := map[string]cmdSpec{}
	for _, r := range rows {
		for _, name := range strings.Fields(r.names) {
			spec := cmdSpec{name: name, lower: strings.ToLower(name), keys: r.keys, write: r.write}
			out[name], out[strings.ToLower(name)] = spec, spec
		}
	}
	return out
}

// lookupCommand returns the spec of the command named name, in any case.
func lookupCommand(name string) (cmdSpec, bool) {
	if spec, ok := commands[name]; ok {
		return spec, true
	}
	if !hasLower(name) {
		return cmdSpec{}, false // upper case already (EVALSHA): not listed
	}
	spec, ok := commands[strings.ToUpper(name)]
	return spec, ok
}

// hasLower reports whether strings.ToUpper might change s: it has an ASCII
// lower-case letter or any non-ASCII byte (Unicode upper-cases some letters,
// such as 'ſ' and 'ı', to ASCII ones).
func hasLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; ('a' <= c && c <= 'z') || c >= 0x80 {
			return true
		}
	}
	return false
}

// lowerName is name in lower case (strings.ToLower allocates for every
// upper-case name; a known command's is in its spec).
func lowerName(name string) string {
	if spec, ok := lookupCommand(name); ok {
		return spec.lower
	}
	return strings.ToLower(name)
}

// of returns the keys among args (the arguments after the command's name).
func (a keyArgs) of(args []string) []string {
	switch {
	case a == firstKey && len(args) > 0:
		return args[:1]
	case a == allKeys:
		return args
	}
	return nil
}

// hook sees every command miniredis runs, including those a script runs, in
// order. It records: any command but a read of the commands table counts
// as a write (Node.writes), whether or not it changes anything. It answers
// in miniredis's place the commands miniredis would answer wrongly for the
// simulation: those whose reply follows Go's map order (answerInOrder),
// the blocking ones, which would block it (answerNonBlocking), and PUBLISH
// and PUBSUB, whose subscribers are the node's (receivers, answerPubsub);
// but not the node's own calls through Dispatch on their behalf (inner).
// It refuses, failing the run, a command that would reach a database the
// node does not simulate (refuseOtherDatabase), and answers as Redis the
// commands whose arguments would have miniredis allocate by a number
// rather than by data (answerOversized).
func (n *Node) hook(c *server.Peer, cmd string, args ...string) bool {
	spec, known := commands[cmd]
	n.noteExotic(cmd, known)
	if !known || spec.write {
		n.writes++
	}
	if n.capturing {
		n.record(cmd, spec, args)
	}
	if !n.inner && n.answerOversized(c, cmd, args) {
		return true
	}
	if !known && !n.inner {
		return n.refuseOtherDatabase(c, cmd, args) || n.answerPubsub(c, cmd, args) ||
			n.answerInOrder(c, cmd, args) || n.answerNonBlocking(c, cmd, args) ||
			n.unknownInTransaction(c, cmd)
	}
	if cmd == "SET" && !n.inner && setRedisRefuses(args) {
		if !n.refusedInMulti(c, cmd, "Redis answers this SET a syntax error when EXEC runs it, where miniredis would run it") {
			c.WriteError("ERR syntax error")
		}
		return true
	}
	if cmd == "PUBLISH" && len(args) == 2 {
		// Published by the node (record), to its subscribers: miniredis
		// has none of them (receivers).
		c.WriteInt(n.receivers(args[0]))
		return true
	}
	return false
}

// setRedisRefuses reports whether a SET with args (its key, value and
// options) combines options Redis refuses together, with a syntax error,
// and miniredis takes: NX with XX (miniredis sets only a key that both
// exists and does not, so never), or KEEPTTL with a TTL (EX, PX, EXAT,
// PXAT: miniredis keeps the old TTL). A lock of one's own that sent
// either would pass the simulation and fail on every Redis.
func setRedisRefuses(args []string) bool {
	var nx, xx, keep, ttl bool
	for i := 2; i < len(args); i++ {
		switch o := args[i]; {
		case strings.EqualFold(o, "NX"):
			nx = true
		case strings.EqualFold(o, "XX"):
			xx = true
		case strings.EqualFold(o, "KEEPTTL"):
			keep = true
		case strings.EqualFold(o, "EX"), strings.EqualFold(o, "PX"), strings.EqualFold(o, "EXAT"), strings.EqualFold(o, "PXAT"):
			ttl = true
			i++ // its value
		}
	}
	return nx && xx || keep && ttl
}

// record notes what command cmd (upper case; spec its entry of commands,
// the zero spec for one not listed) with args writes or publishes: the
// hook's work, which the short way (fastcmd.go) does itself, handing the
// spec it already has. Call it only while capturing (within dispatch):
// the hook checks, and runFast runs only within dispatch, directly or
// from a script's redis.call, both after dispatch set capturing.
func (n *Node) record(cmd string, spec cmdSpec, args []string) {
	if cmd == "PUBLISH" && len(args) == 2 {
		n.published = append(n.published, [2]string{args[0], args[1]})
		return
	}
	if spec.write {
		keys := spec.keys.of(args)
		n.forgetKnown(keys)
		n.touched = append(n.touched, keys...)
		if !n.fastKept {
			n.reshaped = true
		}
	}
}

// isWrite reports whether a client command (cmd, upper case; spec and
// known from lookupCommand) may write: a replica refuses it with READONLY,
// as Redis's (replica-read-only, its default) refuses every command its
// command table flags "write" (SORT and GEORADIUS too, whose read-only
// forms are SORT_RO and GEORADIUS_RO). Scripts are refused as well: the
// simulation's scripts are the locks', which write.
func isWrite(cmd string, spec cmdSpec) bool {
	return spec.write || cmd == "EVAL" || cmd == "EVALSHA" || history.Writes(cmd)
}

// dispatch runs client's command (cmd its name in upper case, spec and
// known from lookupCommand) on miniredis and returns its parsed reply.
func (n *Node) dispatch(client, cmd string, spec cmdSpec, known bool, args []string) (any, error) {
	n.touched = n.touched[:0]
	n.known = n.known[:0]
	n.published = n.published[:0]
	n.reshaped = false
	if n.lua != nil && n.lua.handles(cmd) {
		n.capturing = true
		defer func() { n.capturing = false }()
		return n.lua.exec(cmd, args) // its redis.calls bring their own keys up to date
	}
	n.expireCommand(spec, known, args)
	n.capturing = true
	if r, ok := n.runFast(cmd, spec, args); ok {
		n.capturing = false
		return r.normalised(n), nil
	}
	n.syncCommand(spec, known, args) // Dispatch may read the TTLs
	n.seedRand()
	p := n.peerOf(client)
	n.buf.Reset()
	n.m.Server().Dispatch(p, n.clampTTLs(cmd, args))
	if !known {
		n.touchAll(cmd)
	}
	n.capturing = false
	p.Flush()
	if n.buf.over {
		return nil, n.replyTooLong(cmd)
	}
	v, err := parseReply(n.buf.Bytes())
	if err != nil {
		return nil, lock.ReplyError(err.Error())
	}
	return normalise(v), nil
}

// peerOf is client's connection to the node's miniredis, made at its
// first command through Dispatch since the boot (most nodes' commands all
// take the short way). A connection's state (MULTI and its queue, WATCH,
// its name) is its own, as each client's is on a Redis server: on one
// connection shared by every client, one client's MULTI queued the next
// commands of all the others into its transaction. A restart drops every
// connection (boot).
func (n *Node) peerOf(client string) *server.Peer {
	p := n.peers[client]
	if p == nil {
		if n.peers == nil {
			n.peers = map[string]*server.Peer{}
		}
		p = server.NewPeer(bufio.NewWriter(&n.buf))
		n.peers[client] = p
	}
	return p
}

func normalise(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case server.Simple:
		return string(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e)
		}
		return out
	}
	return v
}

// exec runs a client's command and then does what Redis does after it:
// propagates the effects to replicas and the log, and publishes messages.
func (n *Node) exec(client string, args []string) (any, error) {
	n.tick()
	n.pruneBases()
	spec, known := n.specs.lookup(args[0])
	cmd := spec.name
	if !known {
		cmd = strings.ToUpper(args[0])
	}
	if n.master != nil && isWrite(cmd, spec) {
		if p := n.peers[client]; p != nil {
			if inTx, _ := inTransaction(p); inTx {
				n.abortQueued(p) // as Redis: a refused command aborts the EXEC
			}
		}
		return nil, lock.ReplyError("READONLY You can't write against a read only replica.")
	}
	v, err := n.dispatch(client, cmd, spec, known, args)
	effects := n.effects()
	n.expireAsRedis(effects)
	pubs := slices.Clone(n.published)
	if len(effects) > 0 {
		if len(n.links) > 0 || n.cfg.Persistence == setup.PersistEverySec {
			// Kept by the links' queues or the log (n.log): not the
			// buffer effects reuses.
			effects = slices.Clone(effects)
		}
		n.offset++
		n.clientOffset[client] = n.offset
		for _, l := range n.links {
			l.send(replEntry{offset: n.offset, states: effects})
		}
		n.log(effects)
		for _, e := range effects {
			n.noteTruth(e.key, e.st)
		}
	}
	for _, p := range pubs {
		n.publish(p[0], p[1])
	}
	return v, err
}

// handleCommand runs a client command at the node. WAIT's count comes
// back as a waitReply, which names how many replicas the master had.
func (n *Node) handleCommand(client string, args []string, r replier) {
	// Only a four-byte name can be either (of ASCII letters, only k and s
	// have a case fold of another length): most names are not compared.
	if len(args[0]) == len("WAIT") {
		if strings.EqualFold(args[0], "WAIT") {
			n.wait(client, args, func(v any, err error) {
				if k, ok := v.(int64); ok {
					v = waitReply{acked: k, replicas: len(n.links)}
				}
				r.answer(v, err)
			})
			return
		}
		if strings.EqualFold(args[0], "INFO") {
			r.answer(n.info(), nil)
			return
		}
	}
	// Every blocking command's name starts with B or X, which no command
	// of the lock algorithms' does: most names are not upper-cased.
	if len(args[0]) > 0 && (args[0][0]|0x20 == 'b' || args[0][0]|0x20 == 'x') {
		if cmd := strings.ToUpper(args[0]); mayBlock(cmd) {
			if f, ok := nonBlocking(cmd, args); ok {
				n.block(client, args, f, r)
				return
			}
		}
	}
	r.answer(n.exec(client, args))
	n.serveBlocked()
}

// info answers INFO, whatever section was asked, with the replication
// section only: the part the locks read (Redisson's synced step reads
// connected_slaves to size its WAIT). A replica counts as connected while
// it is up and attached: a crashed replica's connection is closed by its
// operating system, so the master drops it at once, while a partitioned or
// silent one stays connected until repl-timeout (60 s by default, longer
// than a partition locksim draws), so it is counted and WAIT finds it mute.
func (n *Node) info() string {
	role := "master"
	if n.master != nil {
		role = "slave"
	}
	connected := 0
	for _, l := range n.links {
		if l.replica.up {
			connected++
		}
	}
	return "# Replication\r\nrole:" + role + "\r\nconnected_slaves:" + strconv.Itoa(connected) + "\r\n"
}

// waitReply is WAIT's answer on its way to the client: the count of
// replicas that acknowledged (the reply the caller sees) and how many the
// master had then, for the req record ("1 of 2 replicas acknowledged").
type waitReply struct {
	acked    int64
	replicas int
}
