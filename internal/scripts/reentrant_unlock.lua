-- reentrant_unlock: release one hold of a reentrant lock.
-- KEYS[1] lock key; KEYS[2] the lock's pub/sub channel; KEYS[3] unlock latch
-- key of this request (ignored when ARGV[5] is '0').
-- ARGV[1] message to publish on release; ARGV[2] lease in ms, re-applied
-- while holds remain; ARGV[3] holder field; ARGV[4] latch TTL in ms;
-- ARGV[5] '1' to use the unlock latch, '0' for the behaviour before it.
-- Returns 1 when the last hold was released (key deleted, message
-- published), 0 when holds remain, nil when this holder holds nothing.
-- The latch stores the result under a key of its own, so an unlock retried
-- after its reply was lost gets the first answer instead of nil ("not held"):
-- the fix of Redisson issue 4871.
local latch = ARGV[5] == '1'
if latch then
  local done = redis.call('get', KEYS[3])
  if done ~= false then
    return tonumber(done)
  end
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local left = redis.call('hincrby', KEYS[1], ARGV[3], -1)
local result = 0
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
else
  redis.call('del', KEYS[1])
  redis.call('publish', KEYS[2], ARGV[1])
  result = 1
end
if latch then
  redis.call('set', KEYS[3], result, 'px', ARGV[4])
end
return result
