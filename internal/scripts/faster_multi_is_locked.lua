-- faster_multi_is_locked: whether any of a faster multi lock's values is
-- held (Redisson's RedissonFasterMultiLock.isLockedAsync, 4.7.0).
-- KEYS[1] the group's hash.
-- ARGV[1] the caller's wall clock in ms since the epoch; ARGV[2..] the
-- values' fields.
-- Returns 1 at the first value whose holder's expire_time is not before
-- the clock, else 0.
local now = tonumber(ARGV[1])
for i = 2, #ARGV do
  local holder = redis.call('hget', KEYS[1], ARGV[i])
  if holder ~= false then
    local expires = redis.call('hget', KEYS[1], ARGV[i] .. ':' .. holder .. ':expire_time')
    if expires ~= false and tonumber(expires) >= now then
      return 1
    end
  end
end
return 0
