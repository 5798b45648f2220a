-- spin_unlock: release one hold of a spin lock. The reentrant lock's unlock
-- without the release message: nobody waits on a channel, every waiter
-- polls.
-- KEYS[1] lock key; KEYS[2] unlock latch key of this request (ignored when
-- ARGV[4] is '0').
-- ARGV[1] lease in ms, re-applied while holds remain; ARGV[2] holder field;
-- ARGV[3] latch TTL in ms; ARGV[4] '1' to use the unlock latch, '0' not.
-- Returns 1 when the last hold was released (key deleted), 0 when holds
-- remain, nil when this holder holds nothing. With the latch, a retry of
-- the same request gets the first run's answer.
local latch = ARGV[4] == '1'
if latch then
  local done = redis.call('get', KEYS[2])
  if done ~= false then
    return tonumber(done)
  end
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return nil
end
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
local result = 0
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[1])
else
  redis.call('del', KEYS[1])
  result = 1
end
if latch then
  redis.call('set', KEYS[2], result, 'px', ARGV[3])
end
return result
