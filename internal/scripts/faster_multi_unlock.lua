-- faster_multi_unlock: release one hold of every value of a faster multi
-- lock (Redisson's RedissonFasterMultiLock.unlockInnerAsync, 4.7.0).
-- KEYS[1] the group's hash; KEYS[2] the group's pub/sub channel; KEYS[3]
-- the unlock latch of this request (ignored when ARGV[4] is '0').
-- ARGV[1] holder field; ARGV[2] message to publish; ARGV[3] lease in ms,
-- re-applied to values whose holds remain; ARGV[4] '1' to use the unlock
-- latch, '0' not to (where Redisson passes its publish command); ARGV[5]
-- latch TTL in ms; ARGV[6] the caller's wall clock in ms since the epoch;
-- ARGV[7..] the values' fields.
-- A value counts as the caller's while the caller's own expire_time field
-- for it is not before the caller's clock: the script never reads whose
-- the value is now. So a holder whose clock is behind the clock of the
-- client that took the value from it still finds its own expire_time
-- ahead, and its release deletes the value's field, which names the other
-- holder, letting a third client take the value.
-- Values are released in order, each as it is met: a value that is not
-- the caller's makes the script return nil (not held) after releasing the
-- values before it, without publishing and without a latch.
-- Returns 1 when every value's last hold was released, 0 when holds
-- remain (the latch keeps the answer), nil when the hash is gone (the
-- release is published all the same) or a value was not the caller's.
local latch = ARGV[4] == '1'
if latch then
  local done = redis.call('get', KEYS[3])
  if done ~= false then
    return tonumber(done)
  end
end
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('publish', KEYS[2], ARGV[2])
  return nil
end
local holder = ARGV[1]
local now = tonumber(ARGV[6])
local failed = false
local allReleased = 1
local extended = tonumber(ARGV[3]) + now
for i = 7, #ARGV do
  local expireField = ARGV[i] .. ':' .. holder .. ':expire_time'
  local expires = redis.call('hget', KEYS[1], expireField)
  if expires ~= false and tonumber(expires) >= now then
    local countField = ARGV[i] .. ':' .. holder .. ':lock_count'
    if redis.call('hincrby', KEYS[1], countField, -1) <= 0 then
      redis.call('hdel', KEYS[1], expireField)
      redis.call('hdel', KEYS[1], countField)
      redis.call('hdel', KEYS[1], ARGV[i])
    else
      if tonumber(expires) < extended then
        redis.call('hset', KEYS[1], expireField, extended)
      end
      allReleased = 0
    end
  else
    allReleased = 0
    failed = true
  end
end
if failed then
  return nil
end
-- Redisson's script guards the publish with "if (hasDeleted)", which is
-- true for 0 as for 1 in Lua: every unlock that gets here publishes.
redis.call('publish', KEYS[2], ARGV[2])
if latch then
  redis.call('set', KEYS[3], allReleased, 'px', ARGV[5])
end
if allReleased == 0 then
  local ttl = redis.call('pttl', KEYS[1])
  if tonumber(ARGV[3]) > ttl then
    redis.call('pexpire', KEYS[1], ARGV[3])
  end
end
return allReleased
