-- rw_force_unlock: delete a read-write lock whoever holds it.
-- KEYS[1] lock hash; KEYS[2] the lock's pub/sub channel; KEYS[3] the lock's
-- timeout key prefix. ARGV[1] message to publish; ARGV[2] the mode it must
-- be in ('read' or 'write', as Redisson's ReadLock and WriteLock
-- forceUnlock), or '' for either (the whole ReadWriteLock's).
-- Returns 1 when a lock was deleted (with its read acquisitions' timeout
-- keys, which Redisson leaves to expire) and waiters told, else 0 (free, or
-- in the other mode).
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false or (ARGV[2] ~= nil and ARGV[2] ~= '' and mode ~= ARGV[2]) then
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
