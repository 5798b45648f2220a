-- reentrant_force_unlock: delete the lock whoever holds it.
-- KEYS[1] lock key; KEYS[2] channel; ARGV[1] message to publish.
-- Returns 1 when a lock was deleted (and waiters told), else 0.
if redis.call('del', KEYS[1]) == 1 then
  redis.call('publish', KEYS[2], ARGV[1])
  return 1
end
return 0
