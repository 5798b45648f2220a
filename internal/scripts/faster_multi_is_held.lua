-- faster_multi_is_held: whether a holder holds a faster multi lock's
-- values (Redisson's RedissonFasterMultiLock.isHeldByThreadAsync, 4.7.0).
-- KEYS[1] the group's hash.
-- ARGV[1] the caller's wall clock in ms since the epoch; ARGV[2] holder
-- field; ARGV[3..] the values' fields.
-- Returns 1 when the hash exists and, for each value looked at, the
-- holder's expire_time field for it is there and not before the clock;
-- else 0. As Redisson's, it looks at the values from ARGV[4] on, so the
-- first value is never looked at (a lock of one value is "held" by anyone
-- while its hash exists), and it reads the holder's own expire_time, not
-- whom the value names now.
local now = tonumber(ARGV[1])
local holder = ARGV[2]
if redis.call('exists', KEYS[1]) == 0 then
  return 0
end
for i = 4, #ARGV do
  local expires = redis.call('hget', KEYS[1], ARGV[i] .. ':' .. holder .. ':expire_time')
  if expires == false or tonumber(expires) < now then
    return 0
  end
end
return 1
