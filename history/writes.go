package history

import "strings"

// Writes reports whether Redis's command table flags the command named cmd
// (in any case) "write": one of the commands redis-server 7.0 lists with
// that flag (COMMAND INFO), or XGROUP, whose subcommands but HELP are. A
// replica refuses such a command (READONLY); a read-only command (GET,
// PTTL, HGET, EXISTS, WAIT) cannot extend, release or take a lock. Scripts
// (EVAL, EVALSHA) are not listed: what one does depends on its text.
// sim's TestRedisWritesAsRedis holds the list to a redis-server's table.
func Writes(cmd string) bool {
	if redisWrites[cmd] {
		return true
	}
	if strings.ContainsFunc(cmd, isLower) && strings.ContainsFunc(cmd, isUpper) {
		return redisWrites[strings.ToUpper(cmd)] // a name in mixed case
	}
	return false // the map holds both cases
}

func isLower(r rune) bool { return 'a' <= r && r <= 'z' }
func isUpper(r rune) bool { return 'A' <= r && r <= 'Z' }

var redisWrites = func() map[string]bool {
	m := map[string]bool{"XGROUP": true}
	// Upper case as Redis's table, lower case as req records and go-redis
	// name them: either is found without a copy.
	for _, name := range strings.Fields(`APPEND BITFIELD BITOP BLMOVE BLMPOP BLPOP
		BRPOP BRPOPLPUSH BZMPOP BZPOPMAX BZPOPMIN COPY DECR DECRBY DEL EXPIRE
		EXPIREAT FLUSHALL FLUSHDB GEOADD GEORADIUS GEORADIUSBYMEMBER
		GEOSEARCHSTORE GETDEL GETEX GETSET HDEL HINCRBY HINCRBYFLOAT HMSET HSET
		HSETNX INCR INCRBY INCRBYFLOAT LINSERT LMOVE LMPOP LPOP LPUSH LPUSHX
		LREM LSET LTRIM MIGRATE MOVE MSET MSETNX PERSIST PEXPIRE PEXPIREAT
		PFADD PFDEBUG PFMERGE PSETEX RENAME RENAMENX RESTORE RESTORE-ASKING
		RPOP RPOPLPUSH RPUSH RPUSHX SADD SDIFFSTORE SET SETBIT SETEX SETNX
		SETRANGE SINTERSTORE SMOVE SORT SPOP SREM SUNIONSTORE SWAPDB UNLINK
		XACK XADD XAUTOCLAIM XCLAIM XDEL XREADGROUP XSETID XTRIM ZADD
		ZDIFFSTORE ZINCRBY ZINTERSTORE ZMPOP ZPOPMAX ZPOPMIN ZRANGESTORE ZREM
		ZREMRANGEBYLEX ZREMRANGEBYRANK ZREMRANGEBYSCORE ZUNIONSTORE`) {
		m[name], m[strings.ToLower(name)] = true, true
	}
	m["xgroup"] = true
	return m
}()
