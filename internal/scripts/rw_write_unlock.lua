-- rw_write_unlock: release one write hold of a read-write lock.
-- KEYS[1] lock hash; KEYS[2] the lock's pub/sub channel; KEYS[3] the unlock
-- latch key of this request (ignored when ARGV[5] is '0').
-- ARGV[1] message to publish on release ('1'); ARGV[2] lease in ms,
-- re-applied while write holds remain; ARGV[3] write holder field; ARGV[4]
-- latch TTL in ms; ARGV[5] '1' to use the unlock latch, '0' not to.
-- Returns 1 when the last write hold was released, 0 while write holds
-- remain, nil when this holder does not hold the write lock. On the last
-- write hold the lock is deleted and waiters told, unless the writer also
-- holds read locks (it downgraded): then the lock stays, in read mode, and
-- no message is published, so waiters learn of it only when their wait for
-- the TTL ends. Unlocking a lock that does not exist returns nil (not held)
-- and publishes, as Redisson does since 3.44.0.
-- The latch stores the result (0 or 1), so that an unlock retried after its
-- reply was lost answers as the first did: Redisson's write unlock has had
-- the latch since 3.24.1. A nil answer leaves no latch (see rw_read_unlock).
local latch = ARGV[5] == '1'
if latch then
  local done = redis.call('get', KEYS[3])
  if done ~= false then
    return tonumber(done)
  end
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('publish', KEYS[2], ARGV[1])
  return nil
end
if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local left = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  if latch then
    redis.call('set', KEYS[3], 0, 'px', ARGV[4])
  end
  return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
  redis.call('publish', KEYS[2], ARGV[1])
else
  redis.call('hset', KEYS[1], 'mode', 'read')
end
if latch then
  redis.call('set', KEYS[3], 1, 'px', ARGV[4])
end
return 1
