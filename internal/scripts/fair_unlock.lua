-- fair_unlock: release one hold of a fair lock and tell the next waiter
-- (Redisson 4.7.0's RedissonFairLock unlock).
-- KEYS[1] lock; KEYS[2] queue; KEYS[3] timeouts (as fair_acquire's);
-- KEYS[4] the lock's channel, to which ':' and a waiter's field are added
-- to name that waiter's own channel; KEYS[5] unlock latch key of this
-- request (ignored when ARGV[6] is '0').
-- ARGV[1] message to publish; ARGV[2] lease in ms, re-applied while holds
-- remain; ARGV[3] holder field; ARGV[4] the caller's wall clock in ms;
-- ARGV[5] latch TTL in ms; ARGV[6] '1' to use the unlock latch.
-- Returns 1 when the last hold was released, and also when the lock no
-- longer exists (the next waiter is told either way); 0 when holds
-- remain; nil when the lock is held by others only. The latch answers a
-- retried unlock as the first run did.
local latch = ARGV[6] == '1'
if latch then
  local done = redis.call('get', KEYS[5])
  if done ~= false then
    return tonumber(done)
  end
end
local now = tonumber(ARGV[4])
while true do
  local first = redis.call('lindex', KEYS[2], 0)
  if first == false then
    break
  end
  local timeout = redis.call('zscore', KEYS[3], first)
  if timeout == false or tonumber(timeout) > now then
    break
  end
  redis.call('zrem', KEYS[3], first)
  redis.call('lpop', KEYS[2])
end
if redis.call('exists', KEYS[1]) == 0 then
  local nextWaiter = redis.call('lindex', KEYS[2], 0)
  if nextWaiter ~= false then
    redis.call('publish', KEYS[4] .. ':' .. nextWaiter, ARGV[1])
  end
  if latch then
    redis.call('set', KEYS[5], 1, 'px', ARGV[5])
  end
  return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  if latch then
    redis.call('set', KEYS[5], 0, 'px', ARGV[5])
  end
  return 0
end
redis.call('del', KEYS[1])
if latch then
  redis.call('set', KEYS[5], 1, 'px', ARGV[5])
end
local nextWaiter = redis.call('lindex', KEYS[2], 0)
if nextWaiter ~= false then
  redis.call('publish', KEYS[4] .. ':' .. nextWaiter, ARGV[1])
end
return 1
