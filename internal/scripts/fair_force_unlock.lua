-- fair_force_unlock: delete a fair lock whoever holds it and tell the next
-- waiter (Redisson 4.7.0's RedissonFairLock forceUnlock).
-- KEYS[1] lock; KEYS[2] queue; KEYS[3] timeouts; KEYS[4] the lock's
-- channel (see fair_unlock). ARGV[1] message; ARGV[2] the caller's wall
-- clock in ms. Returns 1 when a lock was deleted, else 0.
local now = tonumber(ARGV[2])
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
if redis.call('del', KEYS[1]) == 1 then
  local nextWaiter = redis.call('lindex', KEYS[2], 0)
  if nextWaiter ~= false then
    redis.call('publish', KEYS[4] .. ':' .. nextWaiter, ARGV[1])
  end
  return 1
end
return 0
