-- rw_read_unlock: release one read hold of a read-write lock.
-- KEYS[1] lock hash; KEYS[2] the lock's pub/sub channel; KEYS[3] this
-- holder's timeout key prefix ("redisson_rwlock_timeout:{<lock>}:<client id>:<owner>:rwlock_timeout");
-- KEYS[4] the lock's key prefix ("redisson_rwlock_timeout:{<lock>}"); KEYS[5] the unlock latch key of
-- this request (ignored when ARGV[4] is '0').
-- ARGV[1] message to publish on release ('0'); ARGV[2] read holder field;
-- ARGV[3] latch TTL in ms; ARGV[4] '1' to use the unlock latch, '0' not to.
-- Returns nil when this holder holds no read lock, also when the lock does
-- not exist at all (expired, force-unlocked, lost), as Redisson does since
-- 3.44.0 (its unlock respects the owner), which still publishes then, waking
-- any waiter. Otherwise a pair {released, left}: released is 1 when the lock
-- is gone (deleted) and waiters were told, 0 while other holds keep it; left
-- is this holder's remaining read holds. Redisson's script returns only the
-- first element; the second lets the caller stop its watchdog atomically.
-- The latch stores the pair ("<released>:<left>"), so that an unlock retried
-- after its reply was lost (go-redis resends it) answers as the first did
-- instead of releasing a second hold or answering nil: Redisson's read
-- unlock has had the latch since 3.24.1. A nil answer leaves no latch: it
-- changed nothing, and a retry answers nil again. (Redisson's sets the latch
-- to 1 when the lock does not exist, so its retry of such an unlock answers
-- "released"; this one keeps answering "not held".)
local latch = ARGV[4] == '1'
if latch then
  local done = redis.call('get', KEYS[5])
  if done ~= false then
    local gone, left = string.match(done, '^(%d+):(%d+)$')
    return {tonumber(gone), tonumber(left)}
  end
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('publish', KEYS[2], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return nil
end
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if left == 0 then
  redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (left + 1))
if redis.call('hlen', KEYS[1]) > 1 then
  -- The lock lives on as long as the longest remaining read acquisition.
  local longest = -3
  for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
    local count = tonumber(redis.call('hget', KEYS[1], field))
    if count ~= nil then
      for i = count, 1, -1 do
        local ttl = redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. i)
        if ttl > longest then
          longest = ttl
        end
      end
    end
  end
  if longest > 0 or mode == 'write' then
    if longest > 0 then
      redis.call('pexpire', KEYS[1], longest)
    end
    if latch then
      redis.call('set', KEYS[5], '0:' .. left, 'px', ARGV[3])
    end
    return {0, left}
  end
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
if latch then
  redis.call('set', KEYS[5], '1:' .. left, 'px', ARGV[3])
end
return {1, left}
