-- rw_force_unlock: delete a read-write lock whoever holds it, in either mode.
-- KEYS[1] lock hash; KEYS[2] the lock's pub/sub channel; KEYS[3] the lock's
-- key prefix ("{<lock>}"). ARGV[1] message to publish.
-- Returns 1 when a lock was deleted (with its read acquisitions' timeout
-- keys, which Redisson leaves to expire) and waiters told, else 0.
if redis.call('exists', KEYS[1]) == 0 then
  return 0
end
for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
  local count = tonumber(redis.call('hget', KEYS[1], field))
  if count ~= nil then
    for i = count, 1, -1 do
      redis.call('del', KEYS[3] .. ':' .. field .. ':rwlock_timeout:' .. i)
    end
  end
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
