-- faster_multi_acquire: one try of a faster multi lock's waiting acquire
-- (Redisson's RedissonFasterMultiLock.tryLockInnerAsync, 4.7.0): take every
-- value of the call in the group's hash, or none.
-- KEYS[1] the group's hash.
-- ARGV[1] lease in ms; ARGV[2] the caller's wall clock in ms since the
-- epoch; ARGV[3] holder field ("<client id>:<owner>"); ARGV[4..] the
-- values' fields.
-- A value's field names its holder; "<value>:<holder>:expire_time" is when
-- that holder's hold of it ends, by the clock of the client that wrote it,
-- and "<value>:<holder>:lock_count" its hold count. Another holder's value
-- counts as held while its expire_time is after the caller's clock: the
-- clients' clocks, not Redis's, decide when a hold ends.
-- Returns nil when every value was taken (or taken again), else the
-- longest time in ms, by the caller's clock, until another holder's value
-- is due. The hash's own TTL is set to the lease when the hash is new, and
-- raised to it when it had less; it is never lowered.
local lease = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local holder = ARGV[3]
local existed = redis.call('exists', KEYS[1]) > 0
local due = -1
if existed then
  for i = 4, #ARGV do
    local owner = redis.call('hget', KEYS[1], ARGV[i])
    if owner ~= false and owner ~= holder then
      local expires = redis.call('hget', KEYS[1], ARGV[i] .. ':' .. owner .. ':expire_time')
      if expires ~= false and tonumber(expires) > now and tonumber(expires) > due then
        due = tonumber(expires)
      end
    end
  end
end
if due ~= -1 then
  return due - now
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
return nil
