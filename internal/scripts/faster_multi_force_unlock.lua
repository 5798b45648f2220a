-- faster_multi_force_unlock: delete the given values of a faster multi
-- lock whoever holds them, and wake the waiters (Redisson's
-- RedissonFasterMultiLock.forceUnlockAsync, 4.7.0).
-- KEYS[1] the group's hash; KEYS[2] the group's pub/sub channel.
-- ARGV[1] message to publish; ARGV[2] unused (where Redisson passes its
-- publish command); ARGV[3..] the values' fields.
-- For each value, deletes its field and its holder's expire_time and
-- lock_count fields. A value that names no holder makes the script fail
-- with a Lua error (its holder's field names are built from the holder it
-- read, false), after the values before it were deleted, as Redisson's
-- does. Returns how many value fields it deleted.
local removed = 0
for i = 3, #ARGV do
  local holder = redis.call('hget', KEYS[1], ARGV[i])
  local n = redis.call('hdel', KEYS[1], ARGV[i])
  redis.call('hdel', KEYS[1], ARGV[i] .. ':' .. holder .. ':expire_time')
  redis.call('hdel', KEYS[1], ARGV[i] .. ':' .. holder .. ':lock_count')
  removed = removed + n
end
redis.call('publish', KEYS[2], ARGV[1])
return removed
