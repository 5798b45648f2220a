-- faster_multi_try_once: a faster multi lock's single try, the acquire of
-- a tryLock() without a wait (Redisson's
-- RedissonFasterMultiLock.tryLockOnceInnerAsync, 4.7.0).
-- KEYS[1] the group's hash.
-- ARGV[1] the caller's wall clock in ms since the epoch; ARGV[2] lease in
-- ms; ARGV[3] holder field; ARGV[4..] the values' fields (the order of
-- the first two is the reverse of faster_multi_acquire's, as Redisson's).
-- Takes every value, as faster_multi_acquire does, and returns 1; returns
-- 0 at the first value another holder holds with an expire_time after the
-- caller's clock. Unlike faster_multi_acquire it reads that expire_time
-- without looking for its absence: a value whose holder's expire_time
-- field is gone makes the script fail with a Lua error (Redisson's does
-- too), which the caller sees as an error reply.
local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local holder = ARGV[3]
local existed = redis.call('exists', KEYS[1]) > 0
if existed then
  for i = 4, #ARGV do
    local owner = redis.call('hget', KEYS[1], ARGV[i])
    if owner ~= false and holder ~= owner then
      local expires = redis.call('hget', KEYS[1], ARGV[i] .. ':' .. owner .. ':expire_time')
      if tonumber(expires) > now then
        return 0
      end
    end
  end
end
for i = 4, #ARGV do
  redis.call('hset', KEYS[1], ARGV[i], holder)
  local expireField = ARGV[i] .. ':' .. holder .. ':expire_time'
  local expires = redis.call('hget', KEYS[1], expireField)
  if expires == false or tonumber(expires) < lease + now then
    redis.call('hset', KEYS[1], expireField, lease + now)
  end
  redis.call('hincrby', KEYS[1], ARGV[i] .. ':' .. holder .. ':lock_count', 1)
end
if existed then
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 and lease > ttl then
    redis.call('pexpire', KEYS[1], lease)
  end
else
  redis.call('pexpire', KEYS[1], lease)
end
return 1
