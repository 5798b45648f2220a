-- rw_is_locked: whether one half of a read-write lock is held, as
-- Redisson's ReadLock and WriteLock isLocked answer.
-- KEYS[1] lock hash; ARGV[1] 'read' or 'write'.
-- Returns 1 for 'write' when the lock is in write mode. For 'read', when it
-- is in read mode, or in write mode with a read hold besides the writer's
-- (the writer downgraded: fields mode, the write field and a read field).
local mode = redis.call('hget', KEYS[1], 'mode')
if ARGV[1] == 'write' then
  if mode == 'write' then
    return 1
  end
  return 0
end
if mode == 'read' or (mode == 'write' and redis.call('hlen', KEYS[1]) > 2) then
  return 1
end
return 0
